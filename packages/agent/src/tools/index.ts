// The built-in tool set, in the order the model sees them. Each tool's name, description and
// schema (specs.ts) are all a request needs; its implementation, with the libraries it uses
// (picomatch, ignore, tree-sitter's outline code, the atomic writer…), is imported on its
// first call, so start-up does not read or compile code a run may never call.

import { type DatabaseToolOptions, queryDescription, writeDescription } from "./database/config.js";
import {
  codeOutlineSpec,
  editFileSpec,
  executePythonSpec,
  globSpec,
  grepSpec,
  listDirSpec,
  queryDatabaseSpec,
  readFileSpec,
  repoMapSpec,
  runCommandSpec,
  type ToolSpec,
  webFetchSpec,
  writeDatabaseSpec,
  writeFileSpec,
} from "./specs.js";
import type { Tool } from "./types.js";
import type { WebFetchOptions } from "./web/web-fetch.js";

export type { EditorAccess, EditorCommandOptions } from "./editor-access.js";
export type { FileChange, FileStates } from "./fs/file-states.js";

/** The workspace snapshot of sizes and mtimes (fs/file-states.ts), loaded when first used. */
export const loadFileStates = () => import("./fs/file-states.js");
export { RECALL_TOOL, type RecallSource, recallTool } from "./recall.js";
export type { ToolSpec } from "./specs.js";

/** `spec` with an `execute` that imports the implementation once, on the first call. */
function lazyTool(spec: ToolSpec, load: () => Promise<Tool>): Tool {
  let impl: Promise<Tool> | undefined;
  return {
    ...spec,
    async execute(args, ctx) {
      impl ??= load().catch((err: unknown) => {
        impl = undefined; // a failed import is tried again on the next call
        throw err;
      });
      return (await impl).execute(args, ctx);
    },
  };
}

export const readFileTool = lazyTool(
  readFileSpec,
  async () => (await import("./read-file.js")).readFileTool as Tool,
);
export const writeFileTool = lazyTool(
  writeFileSpec,
  async () => (await import("./write-file.js")).writeFileTool as Tool,
);
export const editFileTool = lazyTool(
  editFileSpec,
  async () => (await import("./edit-file.js")).editFileTool as Tool,
);
export const listDirTool = lazyTool(
  listDirSpec,
  async () => (await import("./list-dir.js")).listDirTool as Tool,
);
export const globTool = lazyTool(globSpec, async () => (await import("./glob.js")).globTool as Tool);
export const grepTool = lazyTool(grepSpec, async () => (await import("./grep.js")).grepTool as Tool);
export const runCommandTool = lazyTool(
  runCommandSpec,
  async () => (await import("./run-command.js")).runCommandTool as Tool,
);
export const executePythonTool = lazyTool(
  executePythonSpec,
  async () => (await import("./execute-python.js")).executePythonTool as Tool,
);
export const codeOutlineTool = lazyTool(
  codeOutlineSpec,
  async () => (await import("./code-outline.js")).codeOutlineTool as Tool,
);

export const repoMapTool = lazyTool(
  repoMapSpec,
  async () => (await import("./repo-map.js")).repoMapTool as Tool,
);
/** web_fetch under `options.rules` (the --allow-domain rules); its HTML/DOM libraries load on its first call. */
export function webFetchTool(options: WebFetchOptions): Tool {
  return lazyTool(
    webFetchSpec,
    async () => (await import("./web/web-fetch.js")).createWebFetchTool(options) as unknown as Tool,
  );
}
export type { WebFetchOptions } from "./web/web-fetch.js";

/**
 * query_database, and write_database when a database allows writes; their drivers (better-sqlite3
 * in a child process, pg) load on the first call. Both share one SQLite process.
 */
export function databaseTools(options: DatabaseToolOptions): { tools: Tool[]; close(): void } {
  let made: Promise<{ query: Tool; write: Tool; close(): void }> | undefined;
  const load = () =>
    (made ??= import("./database/query-database.js")
      .then((m) => m.createDatabaseTools(options) as unknown as { query: Tool; write: Tool; close(): void })
      .catch((err: unknown) => {
        made = undefined;
        throw err;
      }));
  const tools = [
    lazyTool(
      { ...queryDatabaseSpec, description: queryDescription(options) },
      async () => (await load()).query,
    ),
  ];
  if (options.databases.some((d) => d.writes))
    tools.push(
      lazyTool(
        { ...writeDatabaseSpec, description: writeDescription(options) },
        async () => (await load()).write,
      ),
    );
  // Stops the SQLite process, if a query started one.
  return { tools, close: () => void made?.then((m) => m.close()).catch(() => {}) };
}
export {
  type DatabaseEntry,
  type DatabaseToolOptions,
  parseDatabases,
} from "./database/config.js";
export { findSqliteFiles } from "./database/discover.js";

export function builtinTools(): Tool[] {
  return [
    readFileTool,
    writeFileTool,
    editFileTool,
    listDirTool,
    globTool,
    grepTool,
    runCommandTool,
    executePythonTool,
    codeOutlineTool,
    repoMapTool,
  ];
}
