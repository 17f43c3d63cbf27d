export * from "./agent.js";
export * from "./events.js";
export * from "./output-cap.js";
export * from "./prompt.js";
export * from "./registry.js";
export * from "./scheduler.js";
export * from "./tools/index.js";
export type * from "./tools/types.js";
export * from "./trace.js";
