// The code interpreter on port 49999, as @e2b/code-interpreter calls it: POST /execute streams
// NDJSON (stdout, stderr, results, error, execution count) for one cell; /contexts creates,
// lists, restarts and removes contexts — each a real Jupyter kernel in the sandbox driven by a
// bridge process of its own (bridge.ts; the kernel of each language: kernels.ts), so variables
// persist between the cells of one context and not across contexts.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AgentEvent } from "../agent/client.js";
import { BodyError, readJsonObject } from "../body.js";
import type { EnvdContext } from "../envd/context.js";
import { HttpError } from "../envd/files.js";
import type { ProcessEntry, SandboxRuntime } from "../runtime.js";
import { BRIDGE_SOURCE } from "./bridge.js";
import { type KernelSpec, kernelFor, specArgument } from "./kernels.js";

const MAX_BODY = 4 * 1024 * 1024;
/** How long an interrupted cell may take to stop before its kernel is killed (and restarted). */
const INTERRUPT_GRACE_MS = 3000;

interface Kernel {
  id: string;
  spec: KernelSpec;
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

/** Contexts a sandbox may have at once (each is a kernel): past it, a create is refused. */
export const MAX_CONTEXTS = 16;
/**
 * What one context is charged by its sandbox's memory cgroup, its kernel and its bridge (~55 MB)
 * together, by language — measured by bench/interpreter-memory.mjs (bwrap, after a first cell):
 * IPython +181 MB, Deno +213–280 MB, IRkernel +172 MB, the Bash kernel +86 MB. Rounded up: a
 * kernel grows with what its cells hold, and one that does not fit is killed while it starts.
 */
const CONTEXT_MEMORY_MB: Record<string, number> = {
  python: 192,
  javascript: 288,
  typescript: 288,
  r: 192,
  bash: 112,
};
/** Kept for the agent and the cells' own processes (the agent alone is ~12 MB). */
const RESERVED_BYTES = 32 * 1024 * 1024;

/** The memory a context of this language is charged against its sandbox's budget. */
export function contextMemoryBytes(language: string): number {
  return (CONTEXT_MEMORY_MB[language] ?? 288) * 1024 * 1024;
}

/**
 * The contexts of one language a sandbox of this much memory may have: more kernels than fit
 * are killed by its memory cgroup while they start or run (four Deno contexts in 512 MB: three
 * OOM kills), so past the bound a create is refused with 429, not answered with a dead kernel.
 * Contexts of several languages share the budget (each charged contextMemoryBytes).
 */
export function contextLimit(memoryBytes: number, language = "python"): number {
  if (!(memoryBytes > 0)) return MAX_CONTEXTS;
  const budget = Math.max(0, memoryBytes - RESERVED_BYTES);
  return Math.max(1, Math.min(MAX_CONTEXTS, Math.floor(budget / contextMemoryBytes(language))));
}

interface Contexts {
  kernels: Map<string, Kernel>;
  /** Kernels being started, by context id: a second start of the same context waits for it. */
  starting: Map<string, Promise<Kernel>>;
  /** The language of each kernel being started (its memory is reserved from the start). */
  startingLanguage: Map<string, string>;
}

const contexts = new WeakMap<SandboxRuntime, Contexts>();

function contextsOf(rt: SandboxRuntime): Contexts {
  let c = contexts.get(rt);
  if (!c) {
    c = { kernels: new Map(), starting: new Map(), startingLanguage: new Map() };
    contexts.set(rt, c);
  }
  return c;
}

function kernelsOf(rt: SandboxRuntime): Map<string, Kernel> {
  return contextsOf(rt).kernels;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  try {
    return await readJsonObject(req, MAX_BODY);
  } catch (e) {
    if (e instanceof BodyError) throw new HttpError(e.kind === "too_large" ? 413 : 400, e.message);
    throw e;
  }
}

/** The sandbox went away while a kernel started: the answer is cut off (see execute). */
class SandboxGone extends Error {}

/** Waits this long for a kernel to answer its first request (R and Deno take seconds). */
const KERNEL_START_MS = 120_000;

/** The id of a language's default context (the one a cell without a context runs in). */
function defaultId(language: string): string {
  return language === "python" ? "default" : `default-${language}`;
}

/**
 * Starts a context's kernel (a restart, or a kernel that died, keeps the context's queue of
 * cells: `queue`). A new context is refused past MAX_CONTEXTS, counting those still starting, so
 * parallel creates cannot overshoot (the count and the reservation are one synchronous step); a context already starting is not started twice.
 */
function startKernel(
  ctx: EnvdContext,
  id: string,
  spec: KernelSpec,
  cwd: string,
  queue: Promise<unknown> = Promise.resolve(),
): Promise<Kernel> {
  const c = contextsOf(ctx.runtime);
  const pending = c.starting.get(id);
  if (pending) return pending;
  if (!c.kernels.has(id)) {
    // Contexts and their memory, counting those still starting (each charged by its language).
    let count = 0;
    let charged = 0;
    for (const k of c.kernels.values()) {
      count++;
      charged += contextMemoryBytes(k.language);
    }
    for (const [s, language] of c.startingLanguage)
      if (!c.kernels.has(s)) {
        count++;
        charged += contextMemoryBytes(language);
      }
    const memory = ctx.runtime.memoryBytes;
    const fits =
      count < MAX_CONTEXTS &&
      (!(memory > 0) ||
        count === 0 ||
        charged + contextMemoryBytes(spec.language) <= memory - RESERVED_BYTES);
    if (!fits)
      return Promise.reject(
        new HttpError(
          429,
          `the sandbox already has ${count} code contexts, the most its memory allows (${Math.round(memory / 1048576)} MB; a ${spec.language} context takes ~${Math.round(contextMemoryBytes(spec.language) / 1048576)} MB): remove one (DELETE /contexts/{id}) first`,
        ),
      );
  }
  const p = spawnKernel(ctx, id, spec, cwd, queue, c.kernels.has(id)).finally(() => {
    c.starting.delete(id);
    c.startingLanguage.delete(id);
  });
  c.starting.set(id, p);
  c.startingLanguage.set(id, spec.language);
  return p;
}

async function spawnKernel(
  ctx: EnvdContext,
  id: string,
  spec: KernelSpec,
  cwd: string,
  queue: Promise<unknown>,
  replacing: boolean,
): Promise<Kernel> {
  const k: Kernel = {
    id,
    spec,
    language: spec.language,
    cwd,
    entry: undefined as unknown as ProcessEntry,
    onLine: undefined,
    buf: "",
    queue,
    exited: false,
  };
  // The bridge's first line says whether its kernel started.
  let started!: (err?: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    started = (err) => (err ? reject(err) : resolve());
  });
  k.onLine = (msg) => {
    if (msg.type === "ready") started();
    else if (msg.type === "__gone__") started(new SandboxGone());
    else
      started(
        new HttpError(
          500,
          msg.type === "start_error"
            ? String(msg.value)
            : `the ${spec.language} kernel exited while starting`,
        ),
      );
  };
  const listener = (ev: AgentEvent) => {
    if (ev.ev === "exit") {
      k.exited = true;
      // With its sandbox: the cell's answer is cut off, as E2B's (the SDK then finds the
      // sandbox gone and rejects with its TimeoutError instead of an empty result).
      if (ev.sandboxGone) {
        k.onLine?.({ type: "__gone__" });
        return;
      }
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
    { cmd: "python3", args: ["-u", "-c", BRIDGE_SOURCE, specArgument(spec)], envs: {}, cwd },
    { stdin: true, user: ctx.user, tag: `interpreter-${id}` },
    listener,
  );
  const timer = setTimeout(
    () =>
      started(new HttpError(500, `the ${spec.language} kernel did not start in ${KERNEL_START_MS / 1000} s`)),
    KERNEL_START_MS,
  );
  try {
    await ready;
  } catch (e) {
    await killKernel(ctx, k);
    throw e;
  } finally {
    clearTimeout(timer);
    k.onLine = undefined;
  }
  const all = kernelsOf(ctx.runtime);
  if (replacing && !all.has(id)) {
    // Removed while its new kernel started: the kernel goes too.
    await killKernel(ctx, k);
    throw new HttpError(404, `context ${id} not found`);
  }
  all.set(id, k);
  // A new context (also the default one a cell starts) is audited once, where it is started.
  if (!replacing) ctx.audit("context", { op: "create", context: id, language: k.language, cwd });
  return k;
}

function info(k: Kernel): Record<string, string> {
  return { id: k.id, language: k.language, cwd: k.cwd };
}

function specOf(v: unknown): KernelSpec {
  const choice = kernelFor(v);
  if (!choice.ok) throw new HttpError(400, choice.reason);
  return choice.spec;
}

/** How long a bridge may take to end its kernel on SIGTERM before both are killed. */
const TERM_GRACE_MS = 3000;

/**
 * Ends a context's kernel: SIGTERM first, on which the bridge kills the kernel (in a session of
 * its own, a SIGKILL to the bridge's group would leave it running), then SIGKILL.
 */
async function killKernel(ctx: EnvdContext, k: Kernel): Promise<void> {
  if (k.exited) return;
  const signal = (n: number) =>
    ctx.runtime.agent.call("signal", { pid: k.entry.pid, signal: n }).catch(() => {});
  await signal(15);
  const until = Date.now() + TERM_GRACE_MS;
  while (!k.exited && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  if (!k.exited) await signal(9);
}

async function stopKernel(ctx: EnvdContext, k: Kernel): Promise<void> {
  kernelsOf(ctx.runtime).delete(k.id);
  await killKernel(ctx, k);
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
  const spec = specOf(b.language);
  const env = b.env_vars ?? {};
  if (typeof env !== "object" || Array.isArray(env)) throw new HttpError(400, "env_vars must be an object");
  const all = kernelsOf(ctx.runtime);
  let k: Kernel | undefined;
  if (typeof b.context_id === "string") {
    k = all.get(b.context_id);
    if (!k) throw new HttpError(404, `context ${b.context_id} not found`);
  } else {
    const did = defaultId(spec.language);
    try {
      k = all.get(did) ?? (await startKernel(ctx, did, spec, ctx.runtime.home));
    } catch (e) {
      // Killed while its kernel started: cut off, as a running cell's answer is (the SDK then
      // finds the sandbox gone and rejects with its TimeoutError, not a 500).
      if (!(e instanceof SandboxGone)) throw e;
      res.destroy();
      return;
    }
  }
  const id = k.id;
  const code = b.code;
  const run = k.queue.then(async () => {
    // The context's kernel when the cell's turn comes: one that died (killed after ignoring
    // an interrupt, out of memory) comes back empty; a removed context is gone.
    let kernel = all.get(id);
    if (!kernel) throw new HttpError(404, `context ${id} not found`);
    if (kernel.exited) kernel = await startKernel(ctx, id, kernel.spec, kernel.cwd, kernel.queue);
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
        if (msg.type === "__gone__") {
          finished = true;
          current.onLine = undefined;
          res.destroy();
          resolve();
        } else if (msg.type === "__done__") finish();
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
          if (!finished) void killKernel(ctx, current);
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
    const spec = specOf(b.language);
    const cwd = typeof b.cwd === "string" && b.cwd ? b.cwd : ctx.runtime.home;
    send(res, 200, info(await startKernel(ctx, randomUUID(), spec, cwd)));
    return;
  }
  if (path === "/contexts" && req.method === "GET") {
    req.resume();
    // Every context, also one whose kernel died (its next cell starts a fresh one); the
    // default Python and JavaScript ones are there before their first cell (as E2B's), each
    // kernel started by that cell.
    const listed = [...kernelsOf(ctx.runtime).values()].map(info);
    for (const language of ["javascript", "python"]) {
      const id = defaultId(language);
      // (Not when the sandbox is at its context bound: a cell without a context is refused then.)
      if (!listed.some((c) => c.id === id) && listed.length < contextLimit(ctx.runtime.memoryBytes))
        listed.unshift({ id, language, cwd: ctx.runtime.home });
    }
    send(res, 200, listed);
    return;
  }
  const m = /^\/contexts\/([A-Za-z0-9-]{1,64})(\/restart)?$/.exec(path);
  if (m) {
    req.resume();
    const k = kernelsOf(ctx.runtime).get(m[1] as string);
    if (!k) throw new HttpError(404, `context ${m[1]} not found`);
    if (m[2] && req.method === "POST") {
      // The context keeps its slot while its kernel is replaced.
      await killKernel(ctx, k);
      await startKernel(ctx, k.id, k.spec, k.cwd);
      ctx.audit("context", { op: "restart", context: k.id });
      send(res, 204);
      return;
    }
    if (!m[2] && req.method === "DELETE") {
      await stopKernel(ctx, k);
      ctx.audit("context", { op: "remove", context: k.id });
      send(res, 204);
      return;
    }
  }
  req.resume();
  throw new HttpError(404, `no such endpoint: ${req.method} ${path}`);
}
