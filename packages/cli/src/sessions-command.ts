// `hands sessions [--all]`: the saved sessions of this workspace (or of every one), as a table.
import { join } from "node:path";
import { SessionStore, type SessionSummary } from "@hands/agent";
import { formatCost } from "@hands/llm";
import { dataDir, realFolder } from "@hands/sdk/root";
import { UsageError } from "./args.js";
import { SESSIONS_HELP } from "./command-help.js";
import { oneLine } from "./render.js";
import { formatTable } from "./table.js";

export function runSessionsCommand(argv: string[], out: (s: string) => void): number {
  const unknown = argv.find((a) => a !== "--all");
  if (unknown !== undefined) throw new UsageError(`unknown argument ${unknown}\n\n${SESSIONS_HELP}`);
  const all = argv.includes("--all");
  const store = new SessionStore(join(dataDir(), "sessions"));
  const ws = realFolder(process.cwd(), "workspace folder");
  const list = store.list().filter((s) => all || s.workspace === ws);
  out(
    `${list.length ? formatSessions(list) : `No sessions${all ? "" : " in this workspace (--all lists every workspace)"}.`}\n`,
  );
  return 0;
}

/** One line per session: id, last used, steps, cost (`–` when the model has no known price), first request. */
export function formatSessions(list: SessionSummary[]): string {
  if (list.length === 0) return "No sessions yet.";
  const rows = list.map((s) => [
    s.id,
    new Date(s.updated).toISOString().replace("T", " ").slice(0, 16),
    String(s.steps),
    formatCost(s.costUsd),
    oneLine(s.firstRequest || "(no request)", 60),
  ]);
  return formatTable(
    [
      { header: "ID" },
      { header: "last used" },
      { header: "steps", align: "right" },
      { header: "cost", align: "right" },
      { header: "first request" },
    ],
    rows,
  );
}
