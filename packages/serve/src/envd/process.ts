// envd's process service (process.Process) over the sandbox agent: Start and Connect stream a
// process's events (start, stdout/stderr data — or one `pty` stream for a process started on a
// pseudo-terminal — end, keepalives); List, SendInput, SendSignal, CloseStdin and Update (a
// terminal's size) are unary. A Start stream that reaches its deadline kills the process; a client
// that goes away just stops listening (that is how background commands detach); the deadline
// (Connect-Timeout-Ms) is the process's own, as envd's, so it still applies then.
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { AgentEvent } from "../agent/client.js";
import {
  ConnectError,
  keepaliveMs,
  ServerStream,
  timeoutMs,
  toConnectError,
  writeStreamError,
} from "../connect/protocol.js";
import type { ProcessEntry, PtySize, SandboxRuntime } from "../runtime.js";
import type { EnvdContext } from "./context.js";

const KEEPALIVE = { event: { keepalive: {} } };

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v))
    throw new ConnectError("invalid_argument", `${what} must be an object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, what: string, required = false): string | undefined {
  if (v === undefined || v === null || v === "") {
    if (required) throw new ConnectError("invalid_argument", `${what} is required`);
    return undefined;
  }
  if (typeof v !== "string") throw new ConnectError("invalid_argument", `${what} must be a string`);
  return v;
}

function strMap(v: unknown, what: string): Record<string, string> {
  const o = obj(v, what);
  for (const [k, val] of Object.entries(o))
    if (typeof val !== "string") throw new ConnectError("invalid_argument", `${what}.${k} must be a string`);
  return o as Record<string, string>;
}

/** A Connect JSON `bytes` field (standard or URL-safe base64) as standard base64 for the agent. */
function bytesField(v: unknown, what: string): string {
  if (typeof v !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v))
    throw new ConnectError("invalid_argument", `${what} must be base64 bytes`);
  return Buffer.from(v, "base64").toString("base64");
}

/** process.PTY `{size: {cols, rows}}` (uint32s, numbers or decimal strings in JSON). */
function ptySize(v: unknown): PtySize {
  const size = obj(obj(v, "pty").size, "pty.size");
  const dim = (x: unknown, what: string) => {
    const n = typeof x === "string" && /^\d{1,5}$/.test(x) ? Number(x) : x;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 65535)
      throw new ConnectError("invalid_argument", `pty.size.${what} must be a whole number from 1 to 65535`);
    return n;
  };
  return { cols: dim(size.cols, "cols"), rows: dim(size.rows, "rows") };
}

/** The process a selector names ({pid} or {tag}); not_found otherwise. */
function select(rt: SandboxRuntime, selector: unknown): ProcessEntry {
  const s = obj(selector, "process");
  if (s.pid !== undefined) {
    const pid = Number(s.pid);
    const p = Number.isInteger(pid) ? rt.processes.get(pid) : undefined;
    if (!p) throw new ConnectError("not_found", `process with pid ${String(s.pid)} not found`);
    return p;
  }
  if (typeof s.tag === "string") {
    for (const p of rt.processes.values()) if (p.tag === s.tag) return p;
    throw new ConnectError("not_found", `process with tag ${s.tag} not found`);
  }
  throw new ConnectError("invalid_argument", "process selector needs a pid or a tag");
}

function endEvent(ev: Extract<AgentEvent, { ev: "exit" }>): Record<string, unknown> {
  if (ev.signal) {
    const name = ev.signal === "SIGKILL" ? "killed" : ev.signal.replace(/^SIG/, "").toLowerCase();
    return { exitCode: -1, exited: false, status: `signal: ${name}`, error: `signal: ${name}` };
  }
  const end: Record<string, unknown> = { exitCode: ev.code, exited: true, status: `exit status ${ev.code}` };
  if (ev.code !== 0) end.error = `exit status ${ev.code}`;
  return { ...end };
}

/**
 * Streams a process's events to the client until it exits, the deadline passes or the client
 * leaves. `onDeadline` given (a Start stream): the deadline is the process's, as envd's — it is
 * killed when the deadline passes even if the client has gone (a background command included),
 * and `onEnd` sees its exit either way. Without it (Connect) the deadline only ends the stream.
 */
function follow(
  req: IncomingMessage,
  res: ServerResponse,
  entry: ProcessEntry,
  listener: (ev: AgentEvent) => void,
  setListener: (l: (ev: AgentEvent) => void) => void,
  onDeadline: (() => void) | undefined,
  onEnd: (ev: Extract<AgentEvent, { ev: "exit" }>) => void,
): void {
  const stream = new ServerStream(res, keepaliveMs(req), KEEPALIVE);
  stream.send({ event: { start: { pid: entry.pid } } });
  const deadline = timeoutMs(req);
  const timer =
    deadline !== undefined && deadline > 0
      ? setTimeout(() => {
          onDeadline?.();
          stream.end(new ConnectError("deadline_exceeded", "the command's timeout was reached"));
        }, deadline).unref()
      : undefined;
  const detach = () => {
    if (timer) clearTimeout(timer);
    entry.listeners.delete(listener);
  };
  setListener((ev) => {
    if (ev.ev === "out") {
      const key = entry.pty ? "pty" : ev.fd === 1 ? "stdout" : "stderr";
      stream.send({ event: { data: { [key]: ev.data } } });
    } else if (ev.ev === "exit") {
      detach();
      onEnd(ev);
      // Killed with its sandbox: no exit status to report, the sandbox is gone (as E2B's is).
      if (ev.sandboxGone) {
        stream.cut();
        return;
      }
      stream.send({ event: { end: endEvent(ev) } });
      stream.end();
    }
  });
  if (!onDeadline) void stream.closed.then(detach);
}

export async function start(
  ctx: EnvdContext,
  msg: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const proc = obj(msg.process, "process");
  const pty = msg.pty === undefined || msg.pty === null ? undefined : ptySize(msg.pty);
  const cmd = str(proc.cmd, "process.cmd", true) as string;
  const args = proc.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string"))
    throw new ConnectError("invalid_argument", "process.args must be a list of strings");
  const config = {
    cmd,
    args: args as string[],
    envs: strMap(proc.envs, "process.envs"),
    ...(str(proc.cwd, "process.cwd") ? { cwd: proc.cwd as string } : {}),
  };
  const tag = str(msg.tag, "tag");
  const started = performance.now();
  // Events are delivered to `current` — swapped for the stream's handler once the stream is up.
  let current: (ev: AgentEvent) => void = () => {};
  const buffered: AgentEvent[] = [];
  current = (ev) => buffered.push(ev);
  const listener = (ev: AgentEvent) => current(ev);
  const entry = await ctx.runtime.startProcess(
    config,
    { ...(tag ? { tag } : {}), stdin: msg.stdin === true, user: ctx.user, ...(pty ? { pty } : {}) },
    listener,
  );
  const command = [cmd, ...config.args].join(" ");
  follow(
    req,
    res,
    entry,
    listener,
    (l) => {
      current = l;
      for (const ev of buffered.splice(0)) l(ev);
    },
    () => void ctx.runtime.agent.call("signal", { pid: entry.pid, signal: 9 }).catch(() => {}),
    (ev) => {
      const durationMs = performance.now() - started;
      ctx.metrics.execSeconds.observe(durationMs / 1000);
      ctx.audit("exec", {
        command: command.slice(0, 4096),
        user: ctx.user,
        exitCode: ev.signal ? null : ev.code,
        ...(ev.signal ? { signal: ev.signal } : {}),
        durationMs: Math.round(durationMs),
      });
    },
  );
}

export function connect(
  ctx: EnvdContext,
  msg: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const entry = select(ctx.runtime, msg.process);
  let current: (ev: AgentEvent) => void = () => {};
  const listener = (ev: AgentEvent) => current(ev);
  entry.listeners.add(listener);
  follow(
    req,
    res,
    entry,
    listener,
    (l) => {
      current = l;
    },
    undefined,
    () => {},
  );
}

export async function unary(
  ctx: EnvdContext,
  method: string,
  msg: Record<string, unknown>,
): Promise<unknown> {
  const rt = ctx.runtime;
  switch (method) {
    case "List":
      return {
        processes: [...rt.processes.values()].map((p) => ({
          config: {
            cmd: p.config.cmd,
            args: p.config.args,
            envs: p.config.envs,
            ...(p.config.cwd ? { cwd: p.config.cwd } : {}),
          },
          pid: p.pid,
          ...(p.tag ? { tag: p.tag } : {}),
        })),
      };
    case "SendInput": {
      const p = select(rt, msg.process);
      const input = obj(msg.input, "input");
      if (input.pty !== undefined) {
        await rt.agent.call("input", { pid: p.pid, data: bytesField(input.pty, "input.pty"), pty: true });
        return {};
      }
      if (input.stdin === undefined)
        throw new ConnectError("invalid_argument", "input.stdin or input.pty is required");
      await rt.agent.call("input", { pid: p.pid, data: bytesField(input.stdin, "input.stdin") });
      return {};
    }
    case "CloseStdin": {
      const p = select(rt, msg.process);
      await rt.agent.call("close_stdin", { pid: p.pid });
      return {};
    }
    case "SendSignal": {
      const sig = msg.signal;
      const kill = sig === 9 || sig === "SIGNAL_SIGKILL";
      const term = sig === 15 || sig === "SIGNAL_SIGTERM";
      if (!kill && !term)
        throw new ConnectError("invalid_argument", "signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM");
      const p = select(rt, msg.process);
      await rt.agent.call("signal", { pid: p.pid, signal: kill ? 9 : 15 });
      ctx.audit("signal", { pid: p.pid, signal: kill ? "SIGKILL" : "SIGTERM" });
      return {};
    }
    case "Update": {
      const p = select(rt, msg.process);
      if (msg.pty === undefined || msg.pty === null) return {};
      await rt.agent.call("resize", { pid: p.pid, size: ptySize(msg.pty) });
      return {};
    }
    default:
      throw new ConnectError("unimplemented", `process.Process/${method} is not implemented`);
  }
}

export const STREAMING = new Set(["Start", "Connect"]);

export async function startOrError(
  ctx: EnvdContext,
  method: string,
  msg: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    if (method === "Start") await start(ctx, msg, req, res);
    else connect(ctx, msg, req, res);
  } catch (e) {
    writeStreamError(res, toConnectError(e));
  }
}
