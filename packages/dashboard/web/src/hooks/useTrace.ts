// One run's trace as a Timeline, kept up to date while the run writes it (server-sent events
// from the byte where the first read stopped, so nothing is read twice or missed).
import type { TraceLiveness, TraceProblem } from "@hands/agent";
import { useEffect, useState } from "react";
import type { LiveBatch, TracePayload } from "../../../src/api-types.js";
import { Timeline } from "../../../src/timeline.js";
import { getJson } from "../api.js";

export interface TraceState {
  timeline?: Timeline;
  problems: TraceProblem[];
  error?: string;
  live: boolean;
  /** Changes whenever the timeline does. */
  version: number;
  /** When the trace file last changed. */
  updated: number;
  /** Whether a process is writing the trace (a run without a result: running or interrupted). */
  liveness: TraceLiveness;
}

const EMPTY: TraceState = { problems: [], live: false, version: 0, updated: 0, liveness: "none" };

export function useTrace(id: string): TraceState {
  const [state, setState] = useState<TraceState>(EMPTY);
  useEffect(() => {
    let source: EventSource | undefined;
    let stopped = false;
    setState(EMPTY);
    getJson<TracePayload>(`/api/runs/${encodeURIComponent(id)}`).then(
      (t) => {
        if (stopped) return;
        const timeline = new Timeline(t.events);
        const problems = [...t.problems];
        setState({
          timeline,
          problems,
          live: false,
          version: timeline.version,
          updated: t.updated,
          liveness: t.liveness,
        });
        // Follow the file: a running run, or a session that takes another request.
        source = new EventSource(`/api/runs/${encodeURIComponent(id)}/live?offset=${t.offset}`);
        source.addEventListener("open", () => setState((s) => ({ ...s, live: true })));
        source.addEventListener("error", () => setState((s) => ({ ...s, live: false })));
        source.addEventListener("liveness", (m) => {
          const { liveness } = JSON.parse((m as MessageEvent<string>).data) as { liveness: TraceLiveness };
          setState((s) => ({ ...s, liveness }));
        });
        source.addEventListener("events", (m) => {
          const batch = JSON.parse((m as MessageEvent<string>).data) as LiveBatch;
          for (const e of batch.events) timeline.add(e);
          problems.push(...batch.problems);
          setState((s) => ({
            ...s,
            problems: [...problems],
            version: timeline.version,
            updated: Date.now(),
          }));
        });
      },
      (e: Error) => !stopped && setState({ ...EMPTY, error: e.message }),
    );
    return () => {
      stopped = true;
      source?.close();
    };
  }, [id]);
  return state;
}
