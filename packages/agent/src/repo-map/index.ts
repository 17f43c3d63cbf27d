// The repository map: which files define what and which files use it, across the workspace,
// ranked for a task and fitted to a token budget. Used by the repo_map tool and for the short
// map in a session's first request. Indexing (repo-index.ts) is incremental and cached.
import { buildGraph, type FileGraph, type Ranking, type RankQuery, rankDefinitions } from "./rank.js";
import { type RenderedMap, renderMap } from "./render.js";
import type { RefreshStats, RepoIndex } from "./repo-index.js";
import type { FileTags } from "./tags.js";

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

/** The graph of an index's files as of its version: made again only when a file changed. */
const graphs = new WeakMap<RepoIndex, { version: number; files: Map<string, FileTags>; graph: FileGraph }>();
function graphOf(index: RepoIndex): { files: Map<string, FileTags>; graph: FileGraph } {
  let g = graphs.get(index);
  if (!g || g.version !== index.version) {
    const files = tagsByFile(index);
    g = { version: index.version, files, graph: buildGraph(files) };
    graphs.set(index, g);
  }
  return g;
}

/** Refreshes `index`, ranks it for `query` and renders the map within `tokens`. */
export async function buildRepoMap(
  index: RepoIndex,
  query: RankQuery,
  tokens: number,
  signal?: AbortSignal,
  /** Parse for at most this long, then use quick tags for the rest (RefreshOptions.parseForMs). */
  parseForMs?: number,
): Promise<MapResult> {
  const refresh = await index.refresh({
    ...(signal ? { signal } : {}),
    ...(parseForMs !== undefined ? { parseForMs } : {}),
  });
  const started = performance.now();
  const { files, graph } = graphOf(index);
  const ranking: Ranking = rankDefinitions(files, query, graph);
  const map = renderMap(ranking, tokens);
  return { ...map, refresh, rankMs: performance.now() - started };
}
