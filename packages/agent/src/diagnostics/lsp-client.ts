// One language server over stdio, spoken to with vscode-languageserver-protocol: initialize,
// keep documents in sync (full text), and get a document's diagnostics for a given version —
// pulled where the server offers a request for it (tsserver's sync diagnostics through
// typescript-language-server's `typescript.tsserverRequest`; LSP 3.17's `textDocument/diagnostic`,
// which pyright registers once it is told the client can pull), else waited for as pushed
// `publishDiagnostics` of that version. A pull is answered for the text the server holds when
// the request arrives: the messages are ordered, so that is the version `sync` sent just before.
// Pyright, told the client pulls, checks a file when asked instead of in its background loop
// (whose pushed answer, on a loaded machine, came long after the wait had ended).
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { LongLivedProcess } from "@hands/sandbox";
import {
  CancellationTokenSource,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticRequest,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  type ProtocolConnection,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node.js";
import { DiagnosticsTimeout, fmtSeconds, ServerGone } from "./errors.js";
import type { ServerId } from "./servers.js";

/** A diagnostic as Hands keeps it: 0-based line and column, error/warning/…. */
export interface Diag {
  line: number;
  character: number;
  endLine: number;
  message: string;
  /** 1 error, 2 warning, 3 information, 4 hint (LSP's numbers). */
  severity: number;
  code?: string;
}

interface OpenDoc {
  version: number;
  text: string;
}

type Waiter = { version: number; resolve: (d: Diag[]) => void };

/** How a server's diagnostics are got: tsserver requests, or LSP pull (else push). */
export type DiagnosticsMode = "tsserver" | "pull";

const STDERR_KEPT = 2000;

export class LspClient {
  private readonly conn: ProtocolConnection;
  private readonly docs = new Map<string, OpenDoc>();
  private readonly pushed = new Map<string, { version: number | undefined; diags: Diag[] }>();
  private readonly waiters = new Map<string, Waiter[]>();
  private stderrTail = "";
  /** Whether the server takes `textDocument/diagnostic` (declared at initialize or registered later). */
  private pull = false;
  private pullRegistered!: () => void;
  private readonly pullReady = new Promise<void>((r) => {
    this.pullRegistered = r;
  });
  /** Set once the process has ended (the reason, for messages). */
  exitReason: string | undefined;

  private constructor(
    readonly id: ServerId,
    private readonly proc: LongLivedProcess,
    private readonly mode: DiagnosticsMode,
  ) {
    proc.stderr.on("data", (c: Buffer) => {
      this.stderrTail = (this.stderrTail + c.toString("utf8")).slice(-STDERR_KEPT);
    });
    // A write after the server's pipe closed (a read's background sync racing the session's end)
    // emits "error" on the pipe; unheard, it ended the CLI with exit 1. The connection's close
    // and the process's exit already say the server is gone.
    proc.stdin.on("error", () => {});
    this.conn = createProtocolConnection(
      new StreamMessageReader(proc.stdout),
      new StreamMessageWriter(quietWrites(proc.stdin)),
    );
    // Requests a server may send a client; answered minimally (no settings, nothing to show).
    this.conn.onRequest("workspace/configuration", (p: { items?: unknown[] }) =>
      (p.items ?? []).map(() => null),
    );
    this.conn.onRequest("client/registerCapability", (p: { registrations?: Array<{ method?: string }> }) => {
      if (p.registrations?.some((r) => r.method === DocumentDiagnosticRequest.method)) this.enablePull();
      return null;
    });
    this.conn.onRequest("client/unregisterCapability", () => null);
    this.conn.onRequest("window/workDoneProgress/create", () => null);
    // A puller is told to pull again when the server's settings change; each edit pulls anyway.
    // (Left unanswered, pyright exits on the error.)
    this.conn.onRequest("workspace/diagnostic/refresh", () => null);
    this.conn.onRequest("window/showMessageRequest", () => null);
    this.conn.onRequest("workspace/applyEdit", () => ({ applied: false }));
    this.conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      const diags = p.diagnostics.map(toDiag);
      this.pushed.set(p.uri, { version: p.version, diags });
      this.settle(p.uri, p.version, diags);
    });
    this.conn.onError(() => {});
    const exitText = (e: { code: number | null; signal: string | null }) =>
      e.signal ? `it was killed (${e.signal})` : `it exited with code ${e.code ?? "?"}`;
    // Its pipes close just before it exits: the exit (with its code) is the better reason.
    this.conn.onClose(() => {
      const grace = new Promise<undefined>((r) => setTimeout(r, 500, undefined).unref());
      void Promise.race([proc.exited, grace]).then((e) =>
        this.fail(e ? exitText(e) : "its connection closed"),
      );
    });
    void proc.exited.then((e) => this.fail(exitText(e)));
    this.conn.listen();
  }

  private enablePull(): void {
    this.pull = true;
    this.pullRegistered();
  }

  /** Hands `diags` (of `version` of `uri`, when known) to the waiters for that version or older. */
  private settle(uri: string, version: number | undefined, diags: Diag[]): void {
    const list = this.waiters.get(uri) ?? [];
    const left = list.filter((w) => {
      if (version !== undefined && version < w.version) return true;
      w.resolve(diags);
      return false;
    });
    if (left.length) this.waiters.set(uri, left);
    else this.waiters.delete(uri);
  }

  /** Starts the protocol on `proc` and initializes the server within `timeoutMs`. */
  static async start(
    id: ServerId,
    proc: LongLivedProcess,
    initializationOptions: unknown,
    timeoutMs: number,
    mode: DiagnosticsMode = id === "typescript" ? "tsserver" : "pull",
  ): Promise<LspClient> {
    const client = new LspClient(id, proc, mode);
    const root = pathToFileURL(proc.workspacePath).href;
    const cancel = new CancellationTokenSource();
    const init = client.conn.sendRequest(
      InitializeRequest.type,
      {
        processId: null,
        rootUri: root,
        workspaceFolders: [{ uri: root, name: "workspace" }],
        capabilities: {
          textDocument: {
            publishDiagnostics: { versionSupport: true },
            synchronization: { didSave: false },
            diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
          },
          workspace: { configuration: true, workspaceFolders: true },
        },
        initializationOptions,
      },
      cancel.token,
    );
    try {
      const result = await client.race(init, timeoutMs, "answer initialize");
      if (result.capabilities.diagnosticProvider) client.enablePull();
    } catch (e) {
      cancelQuietly(cancel);
      client.kill();
      throw e;
    }
    await client.conn.sendNotification(InitializedNotification.type, {});
    return client;
  }

  get alive(): boolean {
    return this.exitReason === undefined;
  }

  /** The last lines the server wrote to stderr (why it failed). */
  get stderr(): string {
    return this.stderrTail.trim().split("\n").slice(-3).join(" | ").slice(-400);
  }

  uri(workspaceRel: string): string {
    return pathToFileURL(`${this.proc.workspacePath}/${workspaceRel}`).href;
  }

  /** The text the server holds for `uri`, if it is open. */
  textOf(uri: string): string | undefined {
    return this.docs.get(uri)?.text;
  }

  /** Pushed diagnostics of the text the server holds for `uri`, if they came (a late answer). */
  latest(uri: string, text: string): Diag[] | undefined {
    const doc = this.docs.get(uri);
    const have = this.pushed.get(uri);
    if (!doc || doc.text !== text || !have || have.version !== doc.version) return undefined;
    return have.diags;
  }

  /** Makes the server hold `text` for `uri` (opens or replaces it); returns its version. */
  async sync(uri: string, languageId: string, text: string): Promise<number> {
    if (!this.alive) throw new ServerGone(this.exitReason);
    const doc = this.docs.get(uri);
    if (doc && doc.text === text) return doc.version;
    if (!doc) {
      this.docs.set(uri, { version: 1, text });
      await this.conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId, version: 1, text },
      });
      return 1;
    }
    doc.version++;
    doc.text = text;
    await this.conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: doc.version },
      contentChanges: [{ text }],
    });
    return doc.version;
  }

  /** The diagnostics of `uri` at `version` (the one `sync` returned), within `timeoutMs`. */
  async diagnostics(uri: string, version: number, timeoutMs: number): Promise<Diag[]> {
    if (!this.alive) throw new ServerGone(this.exitReason);
    if (this.mode === "tsserver") return this.tsserverDiagnostics(uri, timeoutMs);
    const have = this.pushed.get(uri);
    if (have && have.version !== undefined && have.version >= version) return have.diags;
    const pushed = new Promise<Diag[]>((resolve) => {
      const list = this.waiters.get(uri) ?? [];
      list.push({ version, resolve });
      this.waiters.set(uri, list);
    });
    // Pyright registers pull just after `initialized`: the first edit may come before that.
    const pulled = this.pull
      ? this.pullDiagnostics(uri, version)
      : this.pullReady.then(() => this.pullDiagnostics(uri, version));
    return this.race(Promise.race([pushed, pulled]), timeoutMs, "report diagnostics");
  }

  /**
   * `textDocument/diagnostic` for the text the server holds. Not cancelled when the edit stops
   * waiting: the check goes on (a first check loads the file's imports, seconds of work the next
   * edit would redo), and its answer, when it comes, is kept as that version's (the next edit's
   * "before"). One pull per document at a time: a later one waits for it, and one whose version
   * was replaced meanwhile is dropped, so pulls that timed out never pile up in the server.
   */
  private pullDiagnostics(uri: string, version: number): Promise<Diag[]> {
    const previous = this.inflight.get(uri) ?? Promise.resolve();
    const run = previous.then(async () => {
      const have = this.pushed.get(uri);
      if (have && have.version === version) return have.diags;
      // The document moved on while this waited its turn: its edit stopped waiting long ago.
      if ((this.docs.get(uri)?.version ?? version) > version)
        throw new DiagnosticsTimeout(`version ${version} was replaced before it was checked`);
      const r = await this.conn.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
      const diags = r.kind === "full" ? r.items.map(toDiag) : (this.pushed.get(uri)?.diags ?? []);
      if (this.docs.get(uri)?.version === version) {
        this.pushed.set(uri, { version, diags });
        this.settle(uri, version, diags);
      }
      return diags;
    });
    const settled = run.then(
      () => {},
      () => {},
    );
    this.inflight.set(uri, settled);
    void settled.then(() => {
      if (this.inflight.get(uri) === settled) this.inflight.delete(uri);
    });
    return run;
  }

  private readonly inflight = new Map<string, Promise<void>>();

  /** tsserver's syntactic and semantic errors of an open file, asked for synchronously. */
  private async tsserverDiagnostics(uri: string, timeoutMs: number): Promise<Diag[]> {
    const cancel = new CancellationTokenSource();
    const ask = (command: string) =>
      this.conn.sendRequest(
        ExecuteCommandRequest.type,
        { command: "typescript.tsserverRequest", arguments: [command, { file: uri }] },
        cancel.token,
      ) as Promise<{ success?: boolean; body?: TsDiag[]; message?: string } | null>;
    try {
      const both = Promise.all([ask("syntacticDiagnosticsSync"), ask("semanticDiagnosticsSync")]);
      const [syn, sem] = await this.race(both, timeoutMs, "report diagnostics");
      for (const r of [syn, sem])
        if (!r || r.success === false) throw new Error(`tsserver failed: ${r?.message ?? "no answer"}`);
      return [...(syn?.body ?? []), ...(sem?.body ?? [])].map(fromTsserver);
    } finally {
      cancelQuietly(cancel);
    }
  }

  /** `p`, or a DiagnosticsTimeout after `ms`, or ServerGone when the server ends first. */
  private race<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new DiagnosticsTimeout(`did not ${what} within ${fmtSeconds(ms)}`)),
        ms,
      );
      // The timer goes with the server too: `p` may never settle then (its waiters are dropped),
      // and a live timer kept the process up for its whole length after close (120 s in tests).
      const onGone = () => {
        clearTimeout(timer);
        reject(new ServerGone(`${this.exitReason}${this.stderr ? ` (stderr: ${this.stderr})` : ""}`));
      };
      this.goneListeners.add(onGone);
      p.then(resolve, reject).finally(() => {
        clearTimeout(timer);
        this.goneListeners.delete(onGone);
      });
    });
  }

  private readonly goneListeners = new Set<() => void>();

  private fail(reason: string): void {
    if (this.exitReason !== undefined) return;
    this.exitReason = reason;
    for (const l of [...this.goneListeners]) l();
    this.waiters.clear();
    this.proc.kill();
  }

  kill(): void {
    this.fail("it was stopped");
    this.conn.dispose();
  }

  /** Asks the server to shut down, then kills it (after at most `ms`). */
  async stop(ms = 500): Promise<void> {
    if (this.alive) {
      const bye = (async () => {
        await this.conn.sendRequest(ShutdownRequest.type);
        await this.conn.sendNotification(ExitNotification.type);
      })();
      await this.race(bye, ms, "shut down").catch(() => {});
    }
    this.kill();
  }
}

interface TsDiag {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
}

function fromTsserver(d: TsDiag): Diag {
  const severity =
    d.category === "error" ? 1 : d.category === "warning" ? 2 : d.category === "suggestion" ? 4 : 3;
  return {
    line: d.start.line - 1,
    character: d.start.offset - 1,
    endLine: d.end.line - 1,
    message: d.text,
    severity,
    ...(d.code !== undefined ? { code: `TS${d.code}` } : {}),
  };
}

function toDiag(d: {
  range: { start: { line: number; character: number }; end: { line: number } };
  message: string;
  severity?: number;
  code?: number | string;
}): Diag {
  return {
    line: d.range.start.line,
    character: d.range.start.character,
    endLine: d.range.end.line,
    message: d.message,
    severity: d.severity ?? 1,
    ...(d.code !== undefined ? { code: String(d.code) } : {}),
  };
}

/**
 * The server's stdin as the protocol writer's stream, with writes after the server went away
 * dropped instead of failed. vscode-jsonrpc 8's sendRequest rethrows a failed write inside an
 * async Promise executor, a rejection nobody can handle: it ended the CLI with exit 1 after a
 * session that read many .py files. A dropped request never gets its answer; the exit (fail)
 * and the waits' own timeouts already say the server is gone.
 */
function quietWrites(
  stdin: NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean },
): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (stdin.destroyed || stdin.writableEnded) return done();
      stdin.write(chunk, () => done());
    },
    final(done) {
      if (!stdin.destroyed && !stdin.writableEnded) stdin.end();
      done();
    },
  });
}

/** Cancels a request; on a connection already closed, the cancel notification has nowhere to go. */
function cancelQuietly(cancel: CancellationTokenSource): void {
  try {
    cancel.cancel();
  } catch {}
}
