// What front ends use before any sandbox is made — path confinement checks, the paths a
// sandbox protects, the default backend — apart from the backends (`@hands/sandbox/backends`),
// so that a bundler keeps those out of the start-up code. Everything here is also exported
// from `@hands/sandbox`.
export { confinePath, isInside, realPathOf, realpathOrSelf, SandboxPathError } from "./confine.js";
export { DEFAULT_PROTECTED_PATHS } from "./protected-paths.js";
export { checkBwrap, defaultSandboxKind } from "./sandbox-kind.js";
export { shellJoin, shellQuote } from "./shell-quote.js";
export type { Sandbox, SandboxKind } from "./types.js";
