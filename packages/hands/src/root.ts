// The composition root's parts, for Hands' own front ends (the CLI's commands): settings and
// trust, the data folders, sandbox and model set-up, memory, policy, and the session builder.
// No stability promise: library users use the SDK (index.ts).
export * from "./agent-memory.js";
export * from "./audit.js";
export * from "./discover.js";
export * from "./errors.js";
export * from "./memory-config.js";
export * from "./memory-events.js";
export * from "./memory-for-agent.js";
export * from "./memory-open.js";
export * from "./memory-outline.js";
export * from "./model-roles.js";
export * from "./paths.js";
export * from "./policy.js";
export * from "./private-data.js";
export * from "./project-scan.js";
export * from "./provider.js";
export * from "./sandbox-setup.js";
export * from "./session.js";
export * from "./settings.js";
export * from "./settings-flags.js";
export * from "./settings-schema.js";
export * from "./trust.js";
export * from "./trust-store.js";
