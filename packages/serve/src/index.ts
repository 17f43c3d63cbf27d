export { AgentClient, AgentError } from "./agent/client.js";
export { createApiRouter, ENVD_VERSION } from "./api.js";
export { Cluster } from "./cluster.js";
export { defaultDataDir, runServeCommand, SERVE_HELP } from "./command.js";
export { createSandboxRouter, ENVD_PORT, INTERPRETER_PORT } from "./envd/router.js";
export { Keys } from "./keys.js";
export { createMetrics, type ServeMetrics } from "./metrics.js";
export { CapacityError, FairQueue } from "./queue.js";
export { E2B_HOME, SandboxRuntime } from "./runtime.js";
export { type RunningServe, type ServeOptions, startServe } from "./server.js";
export { ApiError, DEFAULT_TEMPLATES, SandboxService, type TemplateSpec } from "./service.js";
export {
  DEFAULT_LIMITS,
  type SandboxRow,
  type Store,
  type Tenant,
  type TenantLimits,
} from "./store.js";
export { openStore } from "./store-open.js";
export { SqliteStore } from "./store-sqlite.js";
