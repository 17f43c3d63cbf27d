// The runs list: every trace under <data>/traces (one-shot runs and sessions' requests), read
// through the trace reader and folded by the same Timeline the run page uses. A file is parsed
// again only when its size or time changed.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readTrace, type TraceRead } from "@hands/agent";
import type { RunSummary } from "./api-types.js";
import { runState, Timeline, totals } from "./timeline.js";

/** A run or session id as the CLI makes them (no path separators, no dot-dot). */
export const ID_PATTERN = /^[\w][\w.-]{0,200}$/;

export function tracePath(dataDir: string, id: string): string {
  if (!ID_PATTERN.test(id) || id.includes("..")) throw new Error(`invalid run id: ${id.slice(0, 80)}`);
  return join(dataDir, "traces", `${id}.jsonl`);
}

interface Cached {
  size: number;
  mtimeMs: number;
  summary: RunSummary;
}

export class RunIndex {
  private readonly cache = new Map<string, Cached>();
  constructor(readonly dataDir: string) {}

  /** Newest first. */
  list(now = Date.now()): RunSummary[] {
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
      if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) summary = hit.summary;
      else {
        summary = summarize(id, path, st.mtimeMs, now);
        this.cache.set(id, { size: st.size, mtimeMs: st.mtimeMs, summary });
      }
      // A running run's state depends on the clock, not only on the file.
      if (summary.status === "running" || summary.status === "unfinished")
        summary = { ...summary, status: now - st.mtimeMs < LIVE_WINDOW_MS ? "running" : "unfinished" };
      out.push({ ...summary, kind: sessionIds.has(id) ? "session" : "run" });
    }
    for (const id of this.cache.keys()) if (!seen.has(id)) this.cache.delete(id);
    return out.sort((a, b) => b.updated - a.updated);
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

/** A trace without a result that changed within this window is taken to be running. */
export const LIVE_WINDOW_MS = 10 * 60_000;

function summarize(id: string, path: string, mtimeMs: number, now: number): RunSummary {
  let read: TraceRead;
  try {
    read = readTrace(path);
  } catch (err) {
    return {
      id,
      kind: "run",
      workspace: "",
      firstRequest: "",
      model: "",
      status: "unreadable",
      requests: 0,
      steps: 0,
      tokens: 0,
      cachedTokens: 0,
      costUsd: 0,
      durationMs: 0,
      start: mtimeMs,
      updated: mtimeMs,
      problems: 0,
      error: (err as Error).message,
    };
  }
  const t = new Timeline(read.events);
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
  return {
    id,
    kind: "run",
    workspace: first?.workspace ?? "",
    firstRequest: first?.task ?? "",
    model: last?.model ?? "",
    status: last ? runState(last, mtimeMs, now, LIVE_WINDOW_MS) : "unreadable",
    requests: t.runs.length,
    steps,
    tokens,
    cachedTokens: cached,
    costUsd: cost,
    durationMs,
    start: first?.start ?? mtimeMs,
    updated: Math.max(last?.updated ?? 0, mtimeMs),
    problems: read.problems.length + t.orphans,
    ...(last
      ? {}
      : { error: read.problems[0]?.message ?? "no run_start event: not a Hands trace, or cut at its head" }),
  };
}
