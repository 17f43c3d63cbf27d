// Each running sandbox's metrics over time, for E2B's `getMetrics({ start, end })`: a reading
// every interval (5 s, as E2B collects them) while the sandbox runs, the last hour kept in memory
// per sandbox (720 readings), dropped when the sandbox ends. A node's own sandboxes only; a
// restart of the service starts the history anew.
import type { SandboxMetric } from "./sandbox-metrics.js";

export const METRICS_INTERVAL_MS = 5000;
const KEEP = 720;

export class MetricsHistory {
  private readonly samples = new Map<string, SandboxMetric[]>();

  add(id: string, m: SandboxMetric): void {
    const list = this.samples.get(id) ?? [];
    list.push(m);
    if (list.length > KEEP) list.splice(0, list.length - KEEP);
    this.samples.set(id, list);
  }

  /** Readings with start ≤ time ≤ end (Unix seconds; either bound may be left out). */
  range(id: string, start?: number, end?: number): SandboxMetric[] {
    return (this.samples.get(id) ?? []).filter(
      (m) =>
        (start === undefined || m.timestampUnix >= start) && (end === undefined || m.timestampUnix <= end),
    );
  }

  drop(id: string): void {
    this.samples.delete(id);
  }
}
