// What makes and manages sandboxes (the backends, the allow-list proxy, the E2B client), for
// front ends that load it when the first sandbox is needed rather than at start-up: a bundler
// then keeps it out of the start-up code, which reaches this package only for the path checks
// and the default kind (`@hands/sandbox`). Everything here is also exported from there.

export { listCgroups } from "./cgroups.js";
export { createSandbox } from "./create.js";
export { checkDocker, dockerClient, LABEL_SESSION } from "./docker.js";
export { resolveE2BConnection } from "./e2b.js";
export { buildImage } from "./image.js";
export { SessionManager } from "./manager.js";
export { startAllowListProxy } from "./proxy.js";
export { type EgressPolicy, parseEgressPolicy } from "./proxy-egress.js";
export { parseAllowRules } from "./proxy-rules.js";
export { reapLeftovers } from "./reaper.js";
