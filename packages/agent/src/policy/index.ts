export * from "./command-policy.js";
export * from "./defaults.js";
export * from "./diff.js";
export * from "./gate.js";
export * from "./load.js";
export * from "./preview.js";
export { loadShellParser } from "./shell-parse.js";
