export type * from "./api-types.js";
export { DASHBOARD_HELP, DashboardUsageError, runDashboardCommand } from "./command.js";
export * from "./eval-log.js";
export { type DashboardOptions, type RunningDashboard, startDashboard } from "./server.js";
export * from "./timeline.js";
