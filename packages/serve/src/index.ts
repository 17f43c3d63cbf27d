export { SandboxRuntime } from "./runtime.js";
