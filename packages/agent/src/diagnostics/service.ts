// The diagnostics of a session: one language server per kind, started on the first edit of a
// file it reads, in the session's sandbox, and kept warm until the session ends. `check` gives
// the errors an edit introduced, or a clear line saying why there are none to give: no server
// reads the file, the server is missing or crashed (restarted once, then off), or it had no
// answer in time ("pending"). It never throws and never waits longer than its budget.
import type { LongLivedProcess, Sandbox, SandboxKind } from "@hands/sandbox";
import { introducedErrors } from "./diff.js";
import { DiagnosticsTimeout, fmtSeconds, ServerGone } from "./errors.js";
// The protocol library loads with the first server, not with the session.
import type { Diag, LspClient } from "./lsp-client.js";
import {
  languageOf,
  launchPlan,
  packageFolder,
  SANDBOX_PACKAGES_DIR,
  SERVERS,
  type ServerId,
  type ServerSpec,
} from "./servers.js";

export interface DiagnosticsOptions {
  /** The session's sandbox (the server runs in it). */
  sandbox: () => Promise<Sandbox>;
  /** Its backend, known before it is made (e2b cannot run a server: none is made for it). */
  kind?: () => SandboxKind;
  /**
   * How long an edit waits for its diagnostics once the server is up, for every server (default:
   * each server's own, ServerSpec.waitMs: 1.5 s for tsserver, 5 s for pyright).
   */
  waitMs?: number;
  /** How long the first edit waits for a server to start and load the project (default 10,000 ms). */
  startWaitMs?: number;
  /** Most errors listed (default 10). */
  maxErrors?: number;
  /** Finds an npm package's folder (tests replace it to act out a missing server). */
  findPackage?: (name: string) => string | undefined;
  /** Overrides a server's command (tests: a server that crashes or hangs). */
  launchOverride?: Partial<Record<ServerId, { argv: string[] }>>;
}

export type DiagnosticsStatus = "ok" | "pending" | "unavailable" | "failed";

export interface DiagnosticsReport {
  server: ServerId;
  status: DiagnosticsStatus;
  /** The new errors (status ok), 1-based lines. */
  errors: Array<{ line: number; column: number; message: string; code?: string }>;
  /** How many new errors there were in all (errors lists at most maxErrors). */
  total: number;
  /** Why there are no diagnostics (status other than ok). */
  reason?: string;
  durationMs: number;
}

export interface EditCheck {
  /** Workspace-relative path with forward slashes. */
  path: string;
  /** The file before the edit (undefined: it did not exist). */
  before: string | undefined;
  after: string;
  signal?: AbortSignal;
}

const DEFAULT_START_WAIT_MS = 10_000;
const DEFAULT_MAX_ERRORS = 10;
/** A server that has not answered initialize by then is stuck: it is killed and counts as failed. */
const START_LIMIT_MS = 120_000;
/** Restarts after a crash before the server is given up for the session. */
const MAX_RESTARTS = 1;
/** Files larger than this are not given to a server on read (an edit still checks them). */
const PRIME_MAX_BYTES = 1024 * 1024;

interface ServerState {
  client?: Promise<LspClient>;
  /** Whether the server has answered diagnostics once (the project is loaded). */
  warm: boolean;
  restarts: number;
  /** Set once it is given up: why (every later check says so). */
  off?: string;
  /** Diagnostics of the text last checked per document (the "before" of the next edit). */
  known: Map<string, { text: string; diags: Diag[] }>;
  /** Per document, its text and diagnostics when the session first checked it (diff.ts introducedErrors). */
  first: Map<string, { text: string; diags: Diag[] }>;
}

export class Diagnostics {
  private readonly servers = new Map<ServerId, ServerState>();
  private closed = false;
  /** Every server process started (a start still waiting for initialize included), for close. */
  private readonly procs = new Set<LongLivedProcess>();
  private readonly clients = new Set<LspClient>();
  private readonly waitMs: number | undefined;
  private readonly startWaitMs: number;
  private readonly maxErrors: number;

  constructor(private readonly options: DiagnosticsOptions) {
    this.waitMs = options.waitMs;
    this.startWaitMs = options.startWaitMs ?? DEFAULT_START_WAIT_MS;
    this.maxErrors = options.maxErrors ?? DEFAULT_MAX_ERRORS;
  }

  /** Whether some server reads `path` (others are not checked at all). */
  handles(path: string): boolean {
    return languageOf(path) !== undefined;
  }

  /**
   * A file was read (read_file): give its server the text now, in the background, so the edit
   * that often follows finds the server started and the "before" checked (a file's first check
   * loads its imports: seconds, on a loaded machine). Read through the sandbox's confined file
   * API; never throws, never waited for.
   */
  prime(path: string): void {
    const lang = languageOf(path);
    if (!lang || this.closed || path.startsWith("../") || path.startsWith("/")) return;
    const state = this.state(lang.server);
    if (state.off) return;
    void (async () => {
      const client = await this.clientFor(lang.server, state, START_LIMIT_MS);
      const uri = client.uri(path);
      if (client.textOf(uri) !== undefined) return;
      const sandbox = await this.options.sandbox();
      const bytes = await sandbox.readFile(path);
      if (bytes.length > PRIME_MAX_BYTES || bytes.includes(0)) return;
      const text = bytes.toString("utf8");
      if (client.textOf(uri) !== undefined) return;
      const v = await client.sync(uri, lang.languageId, text);
      await client.diagnostics(uri, v, START_LIMIT_MS);
    })().catch(() => {});
  }

  /** The new errors an edit of a file introduced; undefined when no server reads the file. */
  async check(edit: EditCheck): Promise<DiagnosticsReport | undefined> {
    const lang = languageOf(edit.path);
    if (!lang || this.closed || edit.signal?.aborted) return undefined;
    const started = performance.now();
    const state = this.state(lang.server);
    const report = (status: DiagnosticsStatus, reason?: string, errors: Diag[] = []): DiagnosticsReport => ({
      server: lang.server,
      status,
      errors: errors.slice(0, this.maxErrors).map((d) => ({
        line: d.line + 1,
        column: d.character + 1,
        message: d.message,
        ...(d.code ? { code: d.code } : {}),
      })),
      total: errors.length,
      ...(reason ? { reason } : {}),
      durationMs: Math.round(performance.now() - started),
    });
    if (state.off) return report("unavailable", state.off);
    const budget = state.warm ? (this.waitMs ?? SERVERS[lang.server].waitMs) : this.startWaitMs;
    const deadline = started + budget;
    const left = () => Math.max(1, deadline - performance.now());
    let client: LspClient;
    try {
      client = await this.clientFor(lang.server, state, budget);
    } catch (e) {
      if (e instanceof DiagnosticsTimeout)
        return report(
          "pending",
          `${SERVERS[lang.server].label} is still starting (waited ${fmtSeconds(budget)})`,
        );
      return report(state.off ? "unavailable" : "failed", state.off ?? (e as Error).message);
    }
    // Only the first edit waits for the project to load; later ones get the short budget.
    state.warm = true;
    const uri = client.uri(edit.path);
    try {
      let before: Diag[] = [];
      if (edit.before !== undefined) {
        const known = state.known.get(uri);
        // An edit after a "pending" one: the answer that came late serves as the "before".
        const late = known?.text === edit.before ? undefined : client.latest(uri, edit.before);
        if (known && known.text === edit.before) before = known.diags;
        else if (late) before = late;
        else {
          const v = await client.sync(uri, lang.languageId, edit.before);
          before = await client.diagnostics(uri, v, left());
        }
      }
      if (edit.before !== undefined && !state.first.has(uri))
        state.first.set(uri, { text: edit.before, diags: before });
      const v = await client.sync(uri, lang.languageId, edit.after);
      const after = await client.diagnostics(uri, v, left());
      state.known.set(uri, { text: edit.after, diags: after });
      const introduced = introducedErrors(
        { text: edit.before ?? "", diags: before },
        { text: edit.after, diags: after },
        state.first.get(uri),
      );
      return report("ok", undefined, introduced);
    } catch (e) {
      if (e instanceof DiagnosticsTimeout)
        return report("pending", `${SERVERS[lang.server].label} had no answer within ${fmtSeconds(budget)}`);
      if (e instanceof ServerGone || !client.alive) {
        const why = this.crashed(state, lang.server, client);
        return report(state.off ? "unavailable" : "failed", why);
      }
      return report("failed", `${SERVERS[lang.server].label}: ${(e as Error).message}`);
    }
  }

  private state(id: ServerId): ServerState {
    let s = this.servers.get(id);
    if (!s) {
      s = { warm: false, restarts: 0, known: new Map(), first: new Map() };
      this.servers.set(id, s);
    }
    return s;
  }

  /**
   * The running client, started (or restarted after a crash) when there is none. A start slower
   * than `budget` is not given up: it goes on, and the next edit waits for it again.
   */
  private async clientFor(id: ServerId, state: ServerState, budget: number): Promise<LspClient> {
    const deadline = performance.now() + budget;
    for (;;) {
      if (!state.client) {
        const starting = this.startServer(SERVERS[id]);
        state.client = starting;
        starting.catch((e: unknown) => {
          if (state.client !== starting) return;
          state.client = undefined;
          state.off = `${SERVERS[id].label} could not start: ${(e as Error).message}; diagnostics are off for this session`;
        });
      }
      const starting = state.client;
      const client = await withTimeout(starting, Math.max(1, deadline - performance.now())).catch(
        (e: unknown) => {
          if (e instanceof DiagnosticsTimeout) throw e;
          throw new Error(state.off ?? (e as Error).message);
        },
      );
      if (client.alive) return client;
      // It died since the last edit: restart once.
      const why = this.crashed(state, id, client);
      if (state.off) throw new Error(why);
    }
  }

  /** Counts a crash: a restart is allowed once, then the server is off. Returns the reason. */
  private crashed(state: ServerState, id: ServerId, client: LspClient): string {
    const label = SERVERS[id].label;
    const tail = client.stderr ? ` (${client.stderr})` : "";
    state.client = undefined;
    state.known.clear();
    state.warm = false;
    if (state.restarts >= MAX_RESTARTS) {
      state.off = `${label} crashed again: ${client.exitReason ?? "it stopped"}${tail}; diagnostics are off for this session`;
      return state.off;
    }
    state.restarts++;
    return `${label} crashed: ${client.exitReason ?? "it stopped"}${tail}; it is restarted on the next edit`;
  }

  private async startServer(spec: ServerSpec): Promise<LspClient> {
    const kind = this.options.kind?.();
    if (kind === "e2b") throw new Error(`the ${kind} sandbox cannot run a language server yet`);
    const sandbox = await this.options.sandbox();
    const { spawnLongLived } = await import("@hands/sandbox");
    // Docker's container has its own /usr (no node): node is copied in with the packages.
    const placement = { dir: SANDBOX_PACKAGES_DIR, sharesHostSystem: sandbox.kind !== "docker" };
    const plan = launchPlan(spec, sandbox.isolated, this.options.findPackage ?? packageFolder, placement);
    const argv = this.options.launchOverride?.[spec.id]?.argv ?? plan.argv;
    const proc = await spawnLongLived(sandbox, argv, { readOnlyBinds: plan.readOnlyBinds });
    if (this.closed) {
      proc.kill();
      throw new Error("the session has ended");
    }
    this.procs.add(proc);
    void proc.exited.then(() => this.procs.delete(proc));
    const { LspClient } = await import("./lsp-client.js");
    const client = await LspClient.start(spec.id, proc, plan.initializationOptions, START_LIMIT_MS);
    this.clients.add(client);
    return client;
  }

  /** Stops every server (with the session): asks the running ones to shut down, kills the rest. */
  async close(): Promise<void> {
    this.closed = true;
    this.servers.clear();
    // A start still waiting for initialize is not waited for: its process is killed below.
    await Promise.all([...this.clients].map((c) => c.stop()));
    for (const proc of this.procs) proc.kill();
    await Promise.all([...this.procs].map((proc) => proc.exited));
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DiagnosticsTimeout(`no answer within ${fmtSeconds(ms)}`)), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** The lines the model reads after an edit's own result (nothing when there is nothing to say). */
export function formatReport(r: DiagnosticsReport, path: string): string {
  if (r.status === "ok") {
    if (r.total === 0) return "";
    const head = `${r.total} new error${r.total === 1 ? "" : "s"} from ${SERVERS[r.server].label} after this edit:`;
    const lines = r.errors.map(
      (e) => `  ${path}:${e.line}:${e.column}: ${e.code ? `${e.code} ` : ""}${oneLine(e.message)}`,
    );
    if (r.total > r.errors.length) lines.push(`  … and ${r.total - r.errors.length} more`);
    return [head, ...lines].join("\n");
  }
  if (r.status === "pending") return `Diagnostics pending: ${r.reason ?? "no answer in time"}.`;
  return `Diagnostics unavailable: ${r.reason ?? "unknown reason"}.`;
}

function oneLine(s: string): string {
  const flat = s.replace(/\s*\n\s*/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}
