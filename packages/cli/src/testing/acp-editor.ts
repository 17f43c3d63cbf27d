// A scripted editor for the tests of `hands acp`: the real bin as a subprocess, the official
// ACP SDK's client side as the editor. It approves every permission request, answers
// fs/read_text_file from its (unsaved) buffers, keeps fs/write_text_file's text as a buffer and
// saves it (as an editor that saves would), and runs terminal/* commands as real processes.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import {
  type ClientCapabilities,
  type ClientConnection,
  type CreateTerminalRequest,
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import type { ScriptedServer } from "@hands/llm";
import { scriptedModelFlags } from "./cli-process.js";
import { type BinProcess, spawnBin } from "./front-ends.js";

export interface EditorOptions {
  /** The editor's buffers by absolute path (their text, unsaved changes included). */
  buffers?: Record<string, string>;
  /** Flags after `hands acp` and the model's. */
  extra?: string[];
  /** The sandbox flag (default local; null: none, the CLI's default). */
  sandbox?: string | null;
}

/** A terminal the editor ran: what was asked, and what happened to it. */
export interface EditorTerminal {
  request: CreateTerminalRequest;
  process: ChildProcess;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
  killed: boolean;
  released: boolean;
}

export interface Editor extends BinProcess {
  conn: ClientConnection;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  /** Paths asked for with fs/read_text_file. */
  reads: string[];
  /** fs/write_text_file calls, in order. */
  writes: { path: string; content: string }[];
  buffers: Record<string, string>;
  terminals: Map<string, EditorTerminal>;
  /** Every request the agent made of the editor, in order (method names). */
  asked: string[];
}

/** Starts `hands acp` against the scripted model and connects the scripted editor to it. */
export function startEditor(model: ScriptedServer, env: NodeJS.ProcessEnv, o: EditorOptions = {}): Editor {
  const bin = spawnBin(
    ["acp", ...scriptedModelFlags(model, o.sandbox === undefined ? "local" : o.sandbox), ...(o.extra ?? [])],
    env,
  );
  const buffers = { ...(o.buffers ?? {}) };
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const reads: string[] = [];
  const writes: { path: string; content: string }[] = [];
  const terminals = new Map<string, EditorTerminal>();
  const asked: string[] = [];
  const terminal = (id: string) => {
    const t = terminals.get(id);
    if (!t || t.released) throw new Error(`no terminal ${id}`);
    return t;
  };
  const app = client({ name: "scripted-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(methods.client.session.requestPermission);
      permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once")!;
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      asked.push(methods.client.fs.readTextFile);
      reads.push(params.path);
      const text = buffers[params.path];
      if (text === undefined) throw new Error(`no buffer for ${params.path}`);
      return { content: text };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      asked.push(methods.client.fs.writeTextFile);
      writes.push({ path: params.path, content: params.content });
      buffers[params.path] = params.content;
      writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      asked.push(methods.client.terminal.create);
      const id = `term-${terminals.size + 1}`;
      const proc = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const t: EditorTerminal = {
        request: params,
        process: proc,
        output: "",
        killed: false,
        released: false,
        exit: new Promise((r) => proc.on("close", (exitCode, signal) => r({ exitCode, signal }))),
      };
      const limit = params.outputByteLimit ?? Number.POSITIVE_INFINITY;
      const add = (d: Buffer) => {
        t.output += d.toString("utf8");
        if (Buffer.byteLength(t.output) > limit) t.output = t.output.slice(-limit);
      };
      proc.stdout!.on("data", add);
      proc.stderr!.on("data", add);
      terminals.set(id, t);
      return { terminalId: id };
    })
    .onRequest(methods.client.terminal.output, async ({ params }) => {
      asked.push(methods.client.terminal.output);
      const t = terminal(params.terminalId);
      const done = t.process.exitCode !== null || t.process.signalCode !== null;
      return {
        output: t.output,
        truncated: false,
        ...(done ? { exitStatus: { exitCode: t.process.exitCode, signal: t.process.signalCode } } : {}),
      };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
      asked.push(methods.client.terminal.waitForExit);
      return terminal(params.terminalId).exit;
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      asked.push(methods.client.terminal.kill);
      const t = terminal(params.terminalId);
      t.killed = true;
      killGroup(t.process);
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      asked.push(methods.client.terminal.release);
      const t = terminal(params.terminalId);
      killGroup(t.process);
      t.released = true;
      return {};
    });
  const stream = ndJsonStream(
    Writable.toWeb(bin.child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(bin.child.stdout!) as unknown as ReadableStream<Uint8Array>,
  );
  return {
    ...bin,
    conn: app.connect(stream),
    updates,
    permissions,
    reads,
    writes,
    buffers,
    terminals,
    asked,
  };
}

/** Kills a terminal's command and everything it started (its process group). */
function killGroup(p: ChildProcess): void {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  try {
    process.kill(-p.pid, "SIGKILL");
  } catch {
    p.kill("SIGKILL");
  }
}

/** initialize with `caps`, then session/new in `cwd`: the session id. */
export async function newEditorSession(
  editor: Editor,
  cwd: string,
  caps: ClientCapabilities = {},
): Promise<string> {
  await editor.conn.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: caps,
  });
  const { sessionId } = await editor.conn.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  return sessionId;
}

/** Kills every terminal the editor still runs (a test's end). */
export function stopTerminals(editor: Editor): void {
  for (const t of editor.terminals.values()) killGroup(t.process);
}
