// What every data-plane handler gets: the sandbox it was routed to, the E2B user the request
// runs as (mapped onto the sandbox's one unprivileged uid), and the audit and metrics sinks.
import type { ServeMetrics } from "../metrics.js";
import type { SandboxRuntime } from "../runtime.js";
import type { SandboxRow } from "../store.js";

export interface EnvdContext {
  runtime: SandboxRuntime;
  row: SandboxRow;
  user: string;
  metrics: ServeMetrics;
  audit: (event: string, detail?: Record<string, unknown>) => void;
}
