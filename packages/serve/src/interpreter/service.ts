// The code interpreter on port 49999, as @e2b/code-interpreter calls it: POST /execute streams
// NDJSON (stdout, stderr, results, error, execution count) for one cell; /contexts creates,
// lists, restarts and removes contexts — each a kernel process of its own (kernel.ts), so
// variables persist between the cells of one context and not across contexts.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AgentEvent } from "../agent/client.js";
import { BodyError, readJsonObject } from "../body.js";
import type { EnvdContext } from "../envd/context.js";
import { HttpError } from "../envd/files.js";
import type { ProcessEntry, SandboxRuntime } from "../runtime.js";
import { KERNEL_SOURCE } from "./kernel.js";

const MAX_BODY = 4 * 1024 * 1024;
/** How long an interrupted cell may take to stop before its kernel is killed (and restarted). */
const INTERRUPT_GRACE_MS = 3000;

interface Kernel {
  id: string;
  language: string;
  cwd: string;
  entry: ProcessEntry;
  /** Lines of the kernel's protocol go to the cell that is running. */
  onLine: ((msg: Record<string, unknown>) => void) | undefined;
  buf: string;
  /** Cells run one at a time per context. */
  queue: Promise<unknown>;
  exited: boolean;
}

const kernels = new WeakMap<SandboxRuntime, Map<string, Kernel>>();

function kernelsOf(rt: SandboxRuntime): Map<string, Kernel> {
  const m = kernels.get(rt) ?? new Map<string, Kernel>();
  kernels.set(rt, m);
  return m;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  try {
    return await readJsonObject(req, MAX_BODY);
  } catch (e) {
    if (e instanceof BodyError) throw new HttpError(e.kind === "too_large" ? 413 : 400, e.message);
    throw e;
  }
}

/** Starts a context's kernel; a restart keeps the context's queue of cells (`queue`). */
async function startKernel(
  ctx: EnvdContext,
  id: string,
  cwd: string,
  queue: Promise<unknown> = Promise.resolve(),
): Promise<Kernel> {
  const k: Kernel = {
    id,
    language: "python",
    cwd,
    entry: undefined as unknown as ProcessEntry,
    onLine: undefined,
    buf: "",
    queue,
    exited: false,
  };
  const listener = (ev: AgentEvent) => {
    if (ev.ev === "exit") {
      k.exited = true;
      k.onLine?.({ type: "error", name: "KernelDied", value: "the kernel exited", traceback: "" });
      k.onLine?.({ type: "__done__" });
      return;
    }
    if (ev.ev !== "out") return;
    if (ev.fd === 2) return;
    k.buf += Buffer.from(ev.data, "base64").toString("utf8");
    let nl = k.buf.indexOf("\n");
    while (nl >= 0) {
      const line = k.buf.slice(0, nl);
      k.buf = k.buf.slice(nl + 1);
      try {
        k.onLine?.(JSON.parse(line) as Record<string, unknown>);
      } catch {}
      nl = k.buf.indexOf("\n");
    }
    if (k.buf.length > 8 * 1024 * 1024) k.buf = "";
  };
  k.entry = await ctx.runtime.startProcess(
    { cmd: "python3", args: ["-u", "-c", KERNEL_SOURCE], envs: {}, cwd },
    { stdin: true, user: ctx.user, tag: `interpreter-${id}` },
    listener,
  );
  kernelsOf(ctx.runtime).set(id, k);
  return k;
}

function info(k: Kernel): Record<string, string> {
  return { id: k.id, language: k.language, cwd: k.cwd };
}

function language(v: unknown): string {
  if (v === undefined || v === null || v === "python" || v === "python3") return "python";
  throw new HttpError(400, `language '${String(v)}' is not supported (only python)`);
}

async function stopKernel(ctx: EnvdContext, k: Kernel): Promise<void> {
  kernelsOf(ctx.runtime).delete(k.id);
  if (!k.exited) await ctx.runtime.agent.call("signal", { pid: k.entry.pid, signal: 9 }).catch(() => {});
}

function send(res: ServerResponse, status: number, v?: unknown): void {
  if (v === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(v);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function execute(ctx: EnvdContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const b = await body(req);
  if (typeof b.code !== "string") throw new HttpError(400, "code is required");
  if (b.context_id !== undefined && b.context_id !== null && b.language !== undefined && b.language !== null)
    throw new HttpError(400, "give context_id or language, not both");
  language(b.language);
  const env = b.env_vars ?? {};
  if (typeof env !== "object" || Array.isArray(env)) throw new HttpError(400, "env_vars must be an object");
  const all = kernelsOf(ctx.runtime);
  let k: Kernel | undefined;
  if (typeof b.context_id === "string") {
    k = all.get(b.context_id);
    if (!k) throw new HttpError(404, `context ${b.context_id} not found`);
  } else {
    k = all.get("default") ?? (await startKernel(ctx, "default", ctx.runtime.home));
  }
  const id = k.id;
  const code = b.code;
  const run = k.queue.then(async () => {
    // The context's kernel when the cell's turn comes: one that died (killed after ignoring
    // an interrupt, out of memory) comes back empty; a removed context is gone.
    let kernel = all.get(id);
    if (!kernel) throw new HttpError(404, `context ${id} not found`);
    if (kernel.exited) kernel = await startKernel(ctx, id, kernel.cwd, kernel.queue);
    const current = kernel;
    await new Promise<void>((resolve) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        current.onLine = undefined;
        res.end();
        resolve();
      };
      current.onLine = (msg) => {
        if (msg.type === "__done__") finish();
        else if (!res.destroyed) res.write(`${JSON.stringify(msg)}\n`);
      };
      // A client that gives up (runCode's timeout) interrupts the cell: KeyboardInterrupt in
      // the current. A cell that does not stop in time has its kernel killed, so the context's
      // next cell is not stuck behind it.
      res.once("close", () => {
        if (finished) return;
        const signal = (n: number) =>
          void ctx.runtime.agent.call("signal", { pid: current.entry.pid, signal: n }).catch(() => {});
        signal(2);
        setTimeout(() => {
          if (!finished) signal(9);
        }, INTERRUPT_GRACE_MS).unref();
      });
      if (current.exited) {
        res.write(
          `${JSON.stringify({ type: "error", name: "KernelDied", value: "the kernel exited", traceback: "" })}\n`,
        );
        finish();
        return;
      }
      const line = `${JSON.stringify({ code, env })}\n`;
      ctx.runtime.agent
        .call("input", { pid: current.entry.pid, data: Buffer.from(line).toString("base64") })
        .catch(() => finish());
    });
  });
  k.queue = run.catch(() => {});
  await run;
  ctx.audit("exec", { command: `runCode: ${code.slice(0, 4000)}`, user: ctx.user, context: id });
}

/** Handler for requests routed to the sandbox's port 49999. */
export async function interpreterHandler(
  ctx: EnvdContext,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = url.pathname;
  if (path === "/health") {
    req.resume();
    send(res, 200, { status: "ok" });
    return;
  }
  if (path === "/execute" && req.method === "POST") return execute(ctx, req, res);
  if (path === "/contexts" && req.method === "POST") {
    const b = await body(req);
    language(b.language);
    const cwd = typeof b.cwd === "string" && b.cwd ? b.cwd : ctx.runtime.home;
    send(res, 200, info(await startKernel(ctx, randomUUID(), cwd)));
    return;
  }
  if (path === "/contexts" && req.method === "GET") {
    req.resume();
    send(res, 200, [...kernelsOf(ctx.runtime).values()].filter((k) => !k.exited).map(info));
    return;
  }
  const m = /^\/contexts\/([A-Za-z0-9-]{1,64})(\/restart)?$/.exec(path);
  if (m) {
    req.resume();
    const k = kernelsOf(ctx.runtime).get(m[1] as string);
    if (!k) throw new HttpError(404, `context ${m[1]} not found`);
    if (m[2] && req.method === "POST") {
      await stopKernel(ctx, k);
      await startKernel(ctx, k.id, k.cwd);
      send(res, 204);
      return;
    }
    if (!m[2] && req.method === "DELETE") {
      await stopKernel(ctx, k);
      send(res, 204);
      return;
    }
  }
  req.resume();
  throw new HttpError(404, `no such endpoint: ${req.method} ${path}`);
}
