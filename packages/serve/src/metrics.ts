// Prometheus metrics for /metrics (prom-client, on a registry of our own so two services in one
// process — as in the tests — do not collide).
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface ServeMetrics {
  registry: Registry;
  createSeconds: Histogram;
  execSeconds: Histogram;
  reaps: Counter<"reason">;
  errors: Counter<"api" | "code">;
  forwarded: Counter<"plane" | "to">;
}

export function createMetrics(sources: {
  countByState: () => Promise<Record<string, number>>;
  queueLength: () => number;
  slotsInUse: () => number;
}): ServeMetrics {
  const registry = new Registry();
  new Gauge({
    name: "hands_serve_sandboxes",
    help: "Sandboxes by state",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const counts = await sources.countByState().catch(() => ({}) as Record<string, number>);
      for (const state of ["running", "paused", "killed", "lost"]) this.set({ state }, counts[state] ?? 0);
    },
  });
  new Gauge({
    name: "hands_serve_queue_length",
    help: "Creates waiting for capacity",
    registers: [registry],
    collect() {
      this.set(sources.queueLength());
    },
  });
  new Gauge({
    name: "hands_serve_slots_in_use",
    help: "Sandbox slots in use on this node",
    registers: [registry],
    collect() {
      this.set(sources.slotsInUse());
    },
  });
  return {
    registry,
    createSeconds: new Histogram({
      name: "hands_serve_create_seconds",
      help: "Sandbox create latency",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    execSeconds: new Histogram({
      name: "hands_serve_exec_seconds",
      help: "Command duration, start to exit",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [registry],
    }),
    reaps: new Counter({
      name: "hands_serve_reaps_total",
      help: "Sandboxes reaped",
      labelNames: ["reason"],
      registers: [registry],
    }),
    forwarded: new Counter({
      name: "hands_serve_forwarded_total",
      help: "Requests passed on to the node that has their sandbox",
      labelNames: ["plane", "to"],
      registers: [registry],
    }),
    errors: new Counter({
      name: "hands_serve_errors_total",
      help: "Error responses",
      labelNames: ["api", "code"],
      registers: [registry],
    }),
  };
}
