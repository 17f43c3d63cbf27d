// The runs list: every trace under <data>/traces (one-shot runs and sessions' requests), read
// through the trace reader and folded by the same Timeline the run page uses. Each file is
// followed: when it grows (a live run), only the new lines are read and folded in.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TraceFollower, type TraceLiveness, traceLiveness } from "@hands/agent";
import type { RunSummary } from "./api-types.js";
import { runState, Timeline, totals } from "./timeline.js";

/** A run or session id as the CLI makes them (no path separators, no dot-dot). */
export const ID_PATTERN = /^[\w][\w.-]{0,200}$/;

export function tracePath(dataDir: string, id: string): string {
  if (!ID_PATTERN.test(id) || id.includes("..")) throw new Error(`invalid run id: ${id.slice(0, 80)}`);
  return join(dataDir, "traces", `${id}.jsonl`);
}

interface Followed {
  size: number;
  mtimeMs: number;
  follower: TraceFollower;
  timeline: Timeline;
  problems: number;
  error?: string;
}

/** A file's summary; a live run's file also keeps its follower, to read only what it appends. */
interface Cached {
  size: number;
  mtimeMs: number;
  summary: RunSummary;
  live?: Followed;
}

export class RunIndex {
  private readonly cache = new Map<string, Cached>();
  constructor(readonly dataDir: string) {}

  /** Newest first. */
  list(): RunSummary[] {
    const dir = join(this.dataDir, "traces");
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
    } catch {
      names = [];
    }
    const sessionIds = new Set(this.sessionIds());
    const out: RunSummary[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      const id = name.slice(0, -".jsonl".length);
      if (!ID_PATTERN.test(id)) continue;
      seen.add(id);
      const path = join(dir, name);
      let st: ReturnType<typeof lstatSync>;
      try {
        st = lstatSync(path);
      } catch {
        continue;
      }
      const hit = this.cache.get(id);
      let summary: RunSummary;
      if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs && hit.summary.status !== "running")
        summary = hit.summary;
      else {
        // Continue a live run's trace where it was; anything else is read from the start.
        let f = hit?.live;
        if (!f || st.size < f.follower.offset)
          f = {
            size: -1,
            mtimeMs: 0,
            follower: new TraceFollower(path),
            timeline: new Timeline(),
            problems: 0,
          };
        if (f.size !== st.size || f.mtimeMs !== st.mtimeMs) {
          try {
            const r = f.follower.poll();
            for (const e of r.events) f.timeline.add(e);
            f.problems += r.problems.length;
          } catch (err) {
            f.error = (err as Error).message;
          }
          f.size = st.size;
          f.mtimeMs = st.mtimeMs;
        }
        summary = summarize(id, f, traceLiveness(path));
        // Only a running run keeps its events in memory; a finished one keeps its summary.
        this.cache.set(id, {
          size: st.size,
          mtimeMs: st.mtimeMs,
          summary,
          ...(summary.status === "running" ? { live: f } : {}),
        });
      }
      const parent = parentOf(id);
      out.push({
        ...summary,
        kind: parent ? "subagent" : sessionIds.has(id) ? "session" : "run",
        ...(parent ? { parent } : {}),
      });
    }
    for (const id of this.cache.keys()) if (!seen.has(id)) this.cache.delete(id);
    return underParents(out, seen);
  }

  private sessionIds(): string[] {
    try {
      return readdirSync(join(this.dataDir, "sessions"))
        .filter((n) => n.endsWith(".jsonl"))
        .map((n) => n.slice(0, -".jsonl".length));
    } catch {
      return [];
    }
  }
}

/** A sub-agent's trace is named <parent id>.<child run id>.jsonl, its run id task-<hex>. */
export function parentOf(id: string): string | undefined {
  const m = /^(.+)\.(task-[0-9a-f]{8})$/.exec(id);
  return m?.[1];
}

/**
 * Newest first, each sub-agent's run right under its parent (in the order they started); one
 * whose parent's trace is gone is listed where its own time puts it.
 */
function underParents(runs: RunSummary[], ids: Set<string>): RunSummary[] {
  const children = new Map<string, RunSummary[]>();
  const top: RunSummary[] = [];
  for (const r of runs) {
    if (r.parent && ids.has(r.parent)) {
      const list = children.get(r.parent) ?? [];
      list.push(r);
      children.set(r.parent, list);
    } else top.push(r);
  }
  const out: RunSummary[] = [];
  const add = (r: RunSummary) => {
    out.push(r);
    for (const c of (children.get(r.id) ?? []).sort((a, b) => a.start - b.start)) add(c);
  };
  for (const r of top.sort((a, b) => b.updated - a.updated)) add(r);
  return out;
}

function summarize(id: string, f: Followed, liveness: TraceLiveness): RunSummary {
  const t = f.timeline;
  const first = t.runs[0];
  const last = t.runs[t.runs.length - 1];
  let tokens = 0;
  let cached = 0;
  let cost = 0;
  let durationMs = 0;
  let steps = 0;
  for (const r of t.runs) {
    const x = totals(r);
    tokens += x.input + x.output;
    cached += x.cached;
    cost += x.costUsd;
    steps += r.result?.steps ?? r.steps.length;
    durationMs += r.result?.durationMs ?? r.updated - r.start;
  }
  const status = f.error || !last ? "unreadable" : runState(last, liveness);
  // A last line without its newline, in a trace nobody writes any more: cut off by a crash.
  const torn = status !== "running" && f.follower.offset < f.size ? 1 : 0;
  return {
    id,
    kind: "run",
    workspace: first?.workspace ?? "",
    firstRequest: first?.task ?? "",
    model: last?.model ?? "",
    status,
    requests: t.runs.length,
    steps,
    tokens,
    cachedTokens: cached,
    costUsd: cost,
    durationMs,
    start: first?.start ?? f.mtimeMs,
    updated: Math.max(last?.updated ?? 0, f.mtimeMs),
    problems: f.problems + torn + t.orphans,
    ...(f.error
      ? { error: f.error }
      : last
        ? {}
        : { error: "no run_start event: not a Hands trace, or cut at its head" }),
  };
}
