// Which tools a request offers the model. Every tool's name, description and schema go out with
// every request, so a tool the session cannot use is left out rather than sent to be refused:
// in approval mode read-only every tool that is not read-only is refused before it runs,
// execute_python cannot run where the sandbox has no python3, web_fetch reaches nothing without
// an --allow-domain rule, and query_database has nothing to query without a database.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Tool } from "@hands/agent";

/** The PATH of a bubblewrap sandbox: host system folders, mounted read-only (packages/sandbox). */
const BWRAP_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

function executableIn(dirs: readonly string[], name: string): boolean {
  for (const dir of dirs) {
    if (!dir) continue;
    try {
      const file = join(dir, name);
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return true;
    } catch {}
  }
  return false;
}

/**
 * Whether commands of the sandbox `kind` (a --sandbox value) find python3, judged without
 * starting one: local runs with the host's PATH, bubblewrap with the host's system folders,
 * "auto" is one of the two (resolving it would spawn a probe); the docker image installs
 * python3 and an E2B template is not known from here, so both count as having it. The local
 * backend runs commands with this process's environment, hence `env` defaults to it.
 */
export function sandboxHasPython(kind: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const hostPath = (env.PATH ?? "").split(delimiter);
  switch (kind) {
    case "local":
      return executableIn(hostPath, "python3");
    case "bwrap":
      return executableIn(BWRAP_PATH, "python3");
    case "auto":
      return executableIn([...BWRAP_PATH, ...hostPath], "python3");
    default:
      return true;
  }
}

export interface ToolConditions {
  /** The approval mode of the request: "read-only" refuses every tool that is not read-only. */
  approval: string;
  /** Whether the sandbox's commands find python3 (see sandboxHasPython). */
  python: boolean;
  /** Whether an --allow-domain rule lets web_fetch reach anything (unset: yes). */
  web?: boolean;
  /** Whether a database is named in the settings or an SQLite file is in the workspace (unset: yes). */
  databases?: boolean;
}

/** Why a request in these conditions cannot use `tool`, or undefined when it can. */
export function whyUnusable(tool: Tool, when: ToolConditions): string | undefined {
  if (when.approval === "read-only" && !tool.readOnly)
    return "the session is read-only (approval mode read-only): no writes or commands";
  if (!when.python && tool.name === "execute_python")
    return "python3 was not found in the sandbox; use run_command to check which Python is available";
  if (when.web === false && tool.name === "web_fetch")
    return "no domain is allowed: web_fetch reaches only what --allow-domain names";
  if (when.databases === false && (tool.name === "query_database" || tool.name === "write_database"))
    return 'no database: none is named in the settings ("databases", --database) and the workspace has no SQLite file';
  return undefined;
}

/** The tools of `all` a request in these conditions can use, in their order. */
export function usableTools(all: readonly Tool[], when: ToolConditions): Tool[] {
  return all.filter((t) => whyUnusable(t, when) === undefined);
}

/** The tools of `all` left out in these conditions, each with the reason. */
export function withheldTools(all: readonly Tool[], when: ToolConditions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of all) {
    const why = whyUnusable(t, when);
    if (why) out[t.name] = why;
  }
  return out;
}
