// The parent side of sqlite-child.ts: one child process per session, started on the first
// SQLite query and reused; a statement that runs past its time (or a cancelled run) kills the
// child — the only way to stop a step that never returns — and the next query starts a new one.
import { type ChildProcess, fork } from "node:child_process";
import type { SqliteRequest } from "./sqlite-run.js";
import type { QueryTable } from "./table.js";

export class SqliteError extends Error {
  constructor(
    message: string,
    readonly kind: "timeout" | "aborted" | "sql" | "refused" | "crashed",
  ) {
    super(message);
  }
}

const CHILD = new URL("./sqlite-child.js", import.meta.url);

export class SqliteRunner {
  private child: ChildProcess | undefined;
  private next = 1;
  private busy: Promise<unknown> = Promise.resolve();

  /** Runs `req` (one at a time: the child runs one statement at a time). */
  run(req: SqliteRequest, timeoutMs: number, signal: AbortSignal): Promise<QueryTable> {
    const run = this.busy.then(() => this.send(req, timeoutMs, signal));
    this.busy = run.catch(() => {});
    return run;
  }

  private start(): ChildProcess {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null && this.child.connected)
      return this.child;
    const child = fork(CHILD, [], {
      serialization: "advanced",
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    this.child = child;
    return child;
  }

  private send(req: SqliteRequest, timeoutMs: number, signal: AbortSignal): Promise<QueryTable> {
    if (signal.aborted) return Promise.reject(new SqliteError("the query was cancelled", "aborted"));
    const child = this.start();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        child.off("message", onMessage);
        child.off("exit", onExit);
        fn();
      };
      const kill = () => {
        child.kill("SIGKILL");
        if (this.child === child) this.child = undefined;
      };
      const onMessage = (m: {
        id: number;
        ok: boolean;
        table?: QueryTable;
        error?: string;
        refused?: boolean;
      }) => {
        if (m.id !== id) return;
        done(() =>
          m.ok
            ? resolve(m.table as QueryTable)
            : reject(new SqliteError(m.error ?? "failed", m.refused ? "refused" : "sql")),
        );
      };
      const onExit = (code: number | null, sig: string | null) =>
        done(() => reject(new SqliteError(`the SQLite process ended (${sig ?? `exit ${code}`})`, "crashed")));
      const onAbort = () =>
        done(() => {
          kill();
          reject(new SqliteError("the query was cancelled", "aborted"));
        });
      const timer = setTimeout(
        () =>
          done(() => {
            kill();
            reject(
              new SqliteError(
                `the query ran past its time limit of ${timeoutMs / 1000} s and was stopped`,
                "timeout",
              ),
            );
          }),
        timeoutMs,
      );
      signal.addEventListener("abort", onAbort, { once: true });
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send({ id, req });
    });
  }

  close(): void {
    this.child?.kill("SIGKILL");
    this.child = undefined;
  }
}
