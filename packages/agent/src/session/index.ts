export * from "./checkpoints.js";
export * from "./instructions.js";
export * from "./store.js";
