// The repository map: which files define what and which files use it, across the workspace,
// ranked for a task and fitted to a token budget. Used by the repo_map tool and for the short
// map in a session's first request. Indexing (repo-index.ts) is incremental and cached.
import { FileGraph } from "./graph.js";
import { type Ranking, type RankQuery, rankDefinitions } from "./rank.js";
import { type RenderedMap, renderMap } from "./render.js";
import type { RefreshStats, RepoIndex } from "./repo-index.js";
import type { FileTags } from "./tags.js";

export { markWorkspaceChanged, noteFilesWritten, workspaceGeneration } from "./freshness.js";
export { FileGraph } from "./graph.js";
export { quickTagsOf } from "./quick-tags.js";
export { type Ranking, type RankQuery, rankDefinitions } from "./rank.js";
export { MAP_CHARS_PER_TOKEN, type RenderedMap, renderMap } from "./render.js";
export {
  type IndexedFile,
  type RefreshOptions,
  type RefreshStats,
  RepoIndex,
  type RepoIndexOptions,
  sharedIndex,
} from "./repo-index.js";
export { MAP_MAX_FILE_BYTES, MAP_MAX_FILES } from "./scan.js";
export { type Definition, type FileTags, tagsOf } from "./tags.js";

export interface MapResult extends RenderedMap {
  refresh: RefreshStats;
  /** Time to rank and render, after the refresh. */
  rankMs: number;
}

/** The index's files as path → tags. */
export function tagsByFile(index: RepoIndex): Map<string, FileTags> {
  return new Map([...index.files].map(([rel, f]) => [rel, f.tags]));
}

/**
 * The graph of an index's files, kept with the index and brought up to date with what changed
 * in it since the last map (graph.ts): one edit re-links a few files, not the workspace.
 */
const graphs = new WeakMap<RepoIndex, { files: Map<string, FileTags>; graph: FileGraph }>();
function graphOf(index: RepoIndex): { files: Map<string, FileTags>; graph: FileGraph } {
  const g = graphs.get(index);
  const changes = index.takeChanges();
  if (!g || changes.all) {
    const files = tagsByFile(index);
    const made = { files, graph: FileGraph.of(files) };
    graphs.set(index, made);
    return made;
  }
  for (const rel of changes.rels) {
    const f = index.files.get(rel);
    if (f) g.files.set(rel, f.tags);
    else g.files.delete(rel);
  }
  if (changes.rels.size > 0) g.graph.update(g.files, changes.rels);
  return g;
}

/**
 * A map skips the walk of the workspace for this long after the last one when nothing but the
 * file tools' reported writes happened since (a person's editor reports nothing: bounded).
 */
export const MAP_FRESH_FOR_MS = 60_000;

export interface MapOptions {
  signal?: AbortSignal;
  /** Parse for at most this long, then use quick tags for the rest (RefreshOptions.parseForMs). */
  parseForMs?: number;
  /** Skip the walk when the index is this fresh (RefreshOptions.unlessFreshFor). */
  unlessFreshFor?: number;
}

/** Refreshes `index`, ranks it for `query` and renders the map within `tokens`. */
export async function buildRepoMap(
  index: RepoIndex,
  query: RankQuery,
  tokens: number,
  signalOrOptions?: AbortSignal | MapOptions,
  /** Parse for at most this long, then use quick tags for the rest (RefreshOptions.parseForMs). */
  parseForMs?: number,
): Promise<MapResult> {
  const o: MapOptions =
    signalOrOptions instanceof AbortSignal ? { signal: signalOrOptions } : { ...(signalOrOptions ?? {}) };
  if (parseForMs !== undefined) o.parseForMs = parseForMs;
  const refresh = await index.refresh(o);
  const started = performance.now();
  const { files, graph } = graphOf(index);
  const ranking: Ranking = rankDefinitions(files, query, graph);
  const map = renderMap(ranking, tokens);
  return { ...map, refresh, rankMs: performance.now() - started };
}
