// repo_map: the workspace's files and definitions most related to a query, ranked over the
// graph of which files use which names (repo-map/). The index is shared with the session's
// first-request map and only re-parses files whose size or modification time changed.
import path from "node:path";
import { buildRepoMap, MAP_FRESH_FOR_MS, sharedIndex } from "../repo-map/index.js";
import { errorResult, workspaceRoot } from "./fs/errors.js";
import { REPO_MAP_DEFAULT_TOKENS, REPO_MAP_MAX_TOKENS, repoMapSpec } from "./specs.js";
import type { Tool } from "./types.js";

/** Longer queries are cut (a pasted log says no more than its start). */
const REPO_MAP_MAX_QUERY_CHARS = 4000;
const REPO_MAP_MAX_FILES = 100;

interface RepoMapArgs {
  query?: string;
  files?: string[];
  tokens?: number;
}

/** A focus path as the index keys it (workspace-relative, "/" separators), or undefined when it is outside. */
function indexKey(workspace: string, p: string): string | undefined {
  const abs = path.resolve(workspace, p);
  const rel = path.relative(workspace, abs);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join("/");
}

export const repoMapTool: Tool<RepoMapArgs> = {
  ...repoMapSpec,

  async execute(args, ctx) {
    const workspace = workspaceRoot(ctx);
    const tokens = Math.min(args.tokens ?? REPO_MAP_DEFAULT_TOKENS, REPO_MAP_MAX_TOKENS);
    const query = (args.query ?? "").slice(0, REPO_MAP_MAX_QUERY_CHARS);
    if ((args.files?.length ?? 0) > REPO_MAP_MAX_FILES)
      return errorResult(`at most ${REPO_MAP_MAX_FILES} files, got ${args.files?.length}`);
    const focus: string[] = [];
    const outside: string[] = [];
    for (const f of args.files ?? []) {
      const key = indexKey(workspace, f);
      if (key) focus.push(key);
      else outside.push(f);
    }
    if (outside.length > 0)
      return errorResult(`files must be inside the workspace; outside: ${outside.slice(0, 5).join(", ")}`);
    const index = sharedIndex({ workspace });
    let map: Awaited<ReturnType<typeof buildRepoMap>>;
    try {
      // No walk when the index was told of every change (freshness.ts: a map after an edit).
      map = await buildRepoMap(index, { text: query, files: focus }, tokens, {
        signal: ctx.signal,
        unlessFreshFor: MAP_FRESH_FOR_MS,
      });
    } catch (err) {
      return errorResult(`could not map the workspace: ${(err as Error).message}`);
    }
    if (map.refresh.aborted) return errorResult("aborted");
    const unknown = focus.filter((f) => !index.files.has(f));
    const notes: string[] = [];
    if (map.refresh.truncated)
      notes.push(`note: only the first ${map.refresh.files} source files were indexed.`);
    if (unknown.length > 0)
      notes.push(`note: not indexed (no such source file, or skipped): ${unknown.join(", ")}`);
    const skipped = Object.entries(map.refresh.skipped).map(([why, n]) => `${n} ${why}`);
    const head = `${map.files.length} of ${map.refresh.files} source files, ${map.definitions} definitions (~${map.tokens} tokens)${skipped.length ? `; skipped: ${skipped.join(", ")}` : ""}`;
    const body = map.text || "(no source files with definitions found in the workspace)";
    return {
      output: [head, ...notes, body].join("\n"),
      data: {
        files: map.files,
        definitions: map.definitions,
        tokens: map.tokens,
        indexedFiles: map.refresh.files,
        parsed: map.refresh.parsed,
        skipped: map.refresh.skipped,
        truncated: map.refresh.truncated,
        refreshMs: Math.round(map.refresh.ms),
        rankMs: Math.round(map.rankMs),
      },
    };
  },
};
