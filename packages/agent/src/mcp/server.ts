// One MCP server, supervised: started within a bounded wait (its stderr in the report when it
// will not start), tool calls with a per-server timeout (a server that stops answering is
// stopped and started again), and a server that stops is reported and restarted a bounded
// number of times with backoff — never left advertising tools that answer "Not connected".
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ToolResult } from "../tools/types.js";
import { MCP_DEFAULTS, type McpServerConfig } from "./config.js";
import { renderToolResult } from "./content.js";
import { ChildStdioTransport } from "./stdio-transport.js";

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface SupervisorOptions {
  clientName: string;
  clientVersion: string;
  /** Told when a server stops, is restarted or is given up on (one line each). */
  onNotice?: (message: string) => void;
  /** The first restart waits this long, each further one twice as long (default 500 ms). */
  restartDelayMs?: number;
}

type State = "starting" | "ready" | "restarting" | "failed" | "closed";

// MCP error codes (JSON-RPC server range) the SDK uses for its own failures.
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;
/** A server that ran this long before stopping gets its full restart budget back. */
const STABLE_MS = 60_000;
const MAX_RESTART_DELAY_MS = 10_000;
const PAGE_LIMIT = 100;

const errorCode = (err: unknown) => (err as { code?: unknown })?.code;
const message = (err: unknown) => (err as Error)?.message ?? String(err);
/** "fetch failed (ECONNREFUSED 127.0.0.1:1)": the cause is what says what to fix. */
const withCause = (err: unknown) => {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message;
  return why && !message(err).includes(why) ? `${message(err)} (${cause?.message ?? why})` : message(err);
};
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

const quoted = (text: string) =>
  text
    .split("\n")
    .map((l) => `  | ${l}`)
    .join("\n");

/** What a stdio server left behind that explains a failure: its stderr, stray stdout lines. */
function diagnostics(transport: ChildStdioTransport): string {
  const stderr = transport.stderr.text();
  let out = stderr ? `\n  its last stderr lines:\n${quoted(stderr)}` : "";
  if (transport.stdoutNoiseLines > 0)
    out += `\n  ${transport.stdoutNoiseLines} lines on its stdout were not JSON-RPC; the last:\n${quoted(transport.stdoutNoise.text())}`;
  return out;
}

export class McpServerSupervisor {
  tools: ListedTool[] = [];
  private state: State = "starting";
  private client: Client | undefined;
  private transport: Transport | undefined;
  private restarts = 0;
  private startedAt = 0;
  private restarting: Promise<void> | undefined;
  private wakeRestart: (() => void) | undefined;
  /** Why the server is not running, for the errors its tools answer with. */
  private problem = "";
  /** Set when Hands stopped the server itself, so the report says why. */
  private killedBecause: string | undefined;

  constructor(
    readonly name: string,
    private readonly cfg: McpServerConfig,
    private readonly opts: SupervisorOptions,
  ) {}

  private get timeoutMs(): number {
    return this.cfg.timeoutMs ?? MCP_DEFAULTS.timeoutMs;
  }

  /** Starts the server and lists its tools; on failure throws an Error whose message is the report. */
  async start(): Promise<void> {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const transport = await this.makeTransport();
    const client = new Client({ name: this.opts.clientName, version: this.opts.clientVersion });
    const startup = this.cfg.startupTimeoutMs ?? MCP_DEFAULTS.startupTimeoutMs;
    const deadline = Date.now() + startup;
    client.onclose = () => this.onClosed(client, transport);
    // Errors belong to the request they break, where they are reported; stray ones are noise.
    client.onerror = () => {};
    this.client = client;
    this.transport = transport;
    this.killedBecause = undefined;
    let phase = "initialize";
    try {
      await client.connect(transport, { timeout: startup });
      phase = "tools/list";
      this.tools = client.getServerCapabilities()?.tools ? await listAllTools(client, deadline) : [];
    } catch (err) {
      this.client = undefined;
      if (transport instanceof ChildStdioTransport) transport.kill();
      await client.close().catch(() => {});
      throw new Error(this.startFailure(err, transport, phase, startup));
    }
    if (this.is("closed")) {
      await client.close().catch(() => {});
      return;
    }
    this.state = "ready";
    this.startedAt = Date.now();
  }

  /** Calls one of the server's tools; every failure is an ERROR result the model can read. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const data = { server: this.name, tool };
    const fail = (output: string): ToolResult => ({ output: `ERROR: ${output}`, isError: true, data });
    if (this.state === "restarting") await untilAborted(this.restarting, signal);
    if (signal.aborted) return fail(`${tool} was aborted`);
    const client = this.client;
    if (this.state !== "ready" || !client)
      return fail(`MCP server ${this.name} is not available: ${this.problem}`);

    // A controller per call: the SDK never removes the listener it adds to the signal it is
    // given, so handing it the run's signal would pile up one listener per call.
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const r = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: controller.signal,
        timeout: this.timeoutMs,
      });
      const text = renderToolResult(r);
      if (r.isError) return fail(text || `${tool} failed (the server gave no reason)`);
      return { output: text || "(no output)", data };
    } catch (err) {
      if (signal.aborted) return fail(`${tool} was aborted`);
      if (errorCode(err) === REQUEST_TIMEOUT) return fail(await this.timedOut(client, tool));
      if (errorCode(err) === CONNECTION_CLOSED || client !== this.client) {
        const report = `MCP server ${this.name} stopped while running ${tool}: ${this.problem}`;
        return fail(
          this.is("restarting")
            ? afterFirstLine(report, "; it is being restarted, the call can be tried again")
            : report,
        );
      }
      return fail(`${tool} on MCP server ${this.name} failed: ${message(err)}`);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    this.state = "closed";
    this.wakeRestart?.();
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
    await this.restarting;
  }

  private async makeTransport(): Promise<Transport> {
    const cfg = this.cfg;
    if (cfg.command) {
      const { getDefaultEnvironment } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      return new ChildStdioTransport({
        command: cfg.command,
        args: cfg.args ?? [],
        env: { ...getDefaultEnvironment(), ...(cfg.env ?? {}) },
        ...(cfg.cwd ? { cwd: cfg.cwd } : {}),
      });
    }
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return new StreamableHTTPClientTransport(new URL(cfg.url!), {
      requestInit: { headers: cfg.headers ?? {} },
    });
  }

  private startFailure(err: unknown, transport: Transport, phase: string, startup: number): string {
    const timedOut = errorCode(err) === REQUEST_TIMEOUT;
    const late = `did not answer ${phase} within ${seconds(startup)} (its "startupTimeoutMs" setting)`;
    if (!(transport instanceof ChildStdioTransport))
      return timedOut ? late : `${this.cfg.url}: ${withCause(err)}`;
    const exit = transport.exit;
    let what: string;
    if (exit?.spawnError)
      what = `could not start ${JSON.stringify(this.cfg.command)}: ${exit.spawnError.message}`;
    else if (timedOut) what = `${late}, so it was stopped`;
    else if (exit) what = `${exitWords(exit)} before it was ready`;
    else what = message(err);
    return `${what}${diagnostics(transport)}`;
  }

  // A timed-out call was cancelled; if the server does not answer a ping either, it is stuck
  // (a busy loop, a deadlock): stop it, so the restart gives the next call a working server.
  private async timedOut(client: Client, tool: string): Promise<string> {
    const head = `${tool} on MCP server ${this.name} did not finish within ${seconds(this.timeoutMs)} (its "timeoutMs" setting) and was cancelled.`;
    try {
      await client.ping({ timeout: Math.min(2_000, this.timeoutMs) });
      return head;
    } catch {
      const transport = this.transport;
      if (client !== this.client || !(transport instanceof ChildStdioTransport))
        return `${head} The server does not answer pings either.`;
      this.killedBecause = `stopped answering (no reply to a ping after ${tool} timed out), so Hands stopped it`;
      transport.kill();
      return `${head} The server did not answer a ping afterwards either, so it was stopped; it is being restarted.`;
    }
  }

  private onClosed(client: Client, transport: Transport): void {
    if (client !== this.client || this.state !== "ready") return;
    this.client = undefined;
    if (Date.now() - this.startedAt >= STABLE_MS) this.restarts = 0;
    const how =
      transport instanceof ChildStdioTransport
        ? `${this.killedBecause ?? (transport.exit ? exitWords(transport.exit) : "stopped")}${diagnostics(transport)}`
        : "closed the connection";
    this.problem = how;
    this.state = "restarting";
    this.restarting = this.restartLoop(how);
  }

  private async restartLoop(why: string): Promise<void> {
    const max = this.cfg.maxRestarts ?? MCP_DEFAULTS.maxRestarts;
    const base = this.opts.restartDelayMs ?? 500;
    while (this.restarts < max) {
      this.restarts++;
      const delay = Math.min(base * 2 ** (this.restarts - 1), MAX_RESTART_DELAY_MS);
      this.notice(
        `MCP server ${this.name} ${why}\n  restarting it in ${seconds(delay)} (restart ${this.restarts} of ${max})`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeRestart = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (this.is("closed")) return;
      try {
        await this.start();
        if (this.is("ready")) this.notice(`MCP server ${this.name} is running again`);
        return;
      } catch (err) {
        why = message(err);
        this.problem = why;
        if (this.is("closed")) return;
      }
    }
    this.state = "failed";
    this.notice(
      `MCP server ${this.name} ${why}\n  it is not restarted again (${max} restarts used); its tools now answer with this error`,
    );
  }

  // Read through a method: the state changes across awaits, which narrowing cannot see.
  private is(state: State): boolean {
    return this.state === state;
  }

  private notice(text: string): void {
    this.opts.onNotice?.(text);
  }
}

/** Adds to a report's headline, before the lines that explain it. */
function afterFirstLine(report: string, words: string): string {
  const nl = report.indexOf("\n");
  return nl === -1 ? report + words : report.slice(0, nl) + words + report.slice(nl);
}

function exitWords(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

async function listAllTools(client: Client, deadline: number): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < PAGE_LIMIT; page++) {
    const timeout = Math.max(1, deadline - Date.now());
    const r = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...(r.tools as ListedTool[]));
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** Waits for `p`, or until the signal aborts, whichever comes first. */
async function untilAborted(p: Promise<void> | undefined, signal: AbortSignal): Promise<void> {
  if (!p || signal.aborted) return;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    p,
    new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener("abort", onAbort, { once: true });
    }),
  ]);
  if (onAbort) signal.removeEventListener("abort", onAbort);
}
