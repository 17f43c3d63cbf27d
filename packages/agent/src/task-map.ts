// The short repository map a session's first request carries: the code most related to the
// task, from the workspace's index (repo-map/), which is loaded on first use so a start-up
// that never maps pays nothing for it. Bounded in time: a workspace too big to index within
// the limit gets no map this time; the index is built on meanwhile and saved for what follows.
import { realpathSync } from "node:fs";

export interface TaskMapOptions {
  workspace: string;
  task: string;
  tokens: number;
  /** Where the index is saved between sessions. */
  cacheFile?: string;
  /** Give up after this long (default 3 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface TaskMap {
  /** The map as the model reads it, with its heading. */
  text: string;
  files: string[];
  /** Files in the index, and how many were parsed for this map. */
  indexed: number;
  parsed: number;
  ms: number;
}

export const TASK_MAP_TIMEOUT_MS = 3000;
/** The share of the wait spent parsing before quick tags take over. */
export const TASK_MAP_PARSE_SHARE = 1 / 6;

/** The map for `task`, or undefined when there is nothing to show or it took too long. */
export async function repoMapForTask(o: TaskMapOptions): Promise<TaskMap | undefined> {
  const started = performance.now();
  const { buildRepoMap, MAP_FRESH_FOR_MS, sharedIndex } = await import("./repo-map/index.js");
  const index = sharedIndex({
    workspace: realpathSync(o.workspace),
    ...(o.cacheFile ? { cacheFile: o.cacheFile } : {}),
  });
  // The index is built on after the wait runs out (the repo_map tool and the next session use
  // it; it is saved when done); only the caller's signal stops it.
  // Parsing for up to a sixth of the wait, then the rest from quick tags (patterns): a big
  // workspace without a saved index still gets a map in time; its files are parsed right after.
  // (A third parsed 46 of 4,656 files, most of it spent loading the grammars: bench/repo-map.mjs.)
  const timeoutMs = o.timeoutMs ?? TASK_MAP_TIMEOUT_MS;
  const building = buildRepoMap(
    index,
    { text: o.task },
    o.tokens,
    { ...(o.signal ? { signal: o.signal } : {}), unlessFreshFor: MAP_FRESH_FOR_MS },
    timeoutMs * TASK_MAP_PARSE_SHARE,
  );
  index
    .whenParsed()
    .then(() => index.save())
    .catch(() => {}); // an unwritable data folder costs the next session a rebuild, nothing more
  building.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, undefined);
    timer.unref();
  });
  const map = await Promise.race([building, waited]);
  clearTimeout(timer);
  if (!map) return undefined;
  if (map.refresh.aborted || map.files.length === 0) return undefined;
  return {
    text: `Repository map: the code most related to the task (file, then line│ definition), ranked; repo_map shows more.\n${map.text}`,
    files: map.files,
    indexed: map.refresh.files,
    parsed: map.refresh.parsed,
    ms: performance.now() - started,
  };
}
