export { confinePath, isInside, realPathOf, realpathOrSelf, SandboxPathError } from "./confine.js";
export { createSandbox } from "./create.js";
export { isSecretEnv, NON_INTERACTIVE_ENV, SECRET_ENV_NAMES, SECRET_ENV_PREFIXES, scrubEnv } from "./env.js";
export {
  DEFAULT_TIMEOUT_MS,
  findShell,
  KILL_GRACE_MS,
  LOCAL_SANDBOX_WARNING,
  LocalSandbox,
  type LocalSandboxOptions,
} from "./local.js";
export { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
export * from "./types.js";
