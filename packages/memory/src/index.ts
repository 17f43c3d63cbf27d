export * from "./embeddings.js";
export * from "./importance.js";
export * from "./memory.js";
export * from "./select.js";
export * from "./sqlite-store.js";
export type * from "./store.js";
export * from "./summarize.js";
export * from "./text.js";
export type * from "./types.js";
