export * from "./checkpoints.js";
export { MAX_SNAPSHOT_FILE_BYTES, shadowRepoPath } from "./git-checkpoints.js";
export * from "./instructions.js";
export { MemoryCheckpoints } from "./memory-checkpoints.js";
export * from "./store.js";
