export { type AuditEvent, AuditLog, type AuditRecord, readAuditLog } from "./audit.js";
export { BwrapSandbox, type BwrapSandboxOptions, runBwrapOnce } from "./bwrap.js";
export { type NetworkMode, WORKSPACE_PATH } from "./bwrap-args.js";
export { Cgroup, DEFAULT_LIMITS, detectCgroups, type Limits, listCgroups } from "./cgroups.js";
export { confinePath, isInside, realPathOf, realpathOrSelf, SandboxPathError } from "./confine.js";
export { createSandbox } from "./create.js";
export { type DiagnoseFacts, type Diagnosis, type DiagnosisCause, diagnoseFailure } from "./diagnose.js";
export {
  checkDocker,
  DockerSandbox,
  type DockerSandboxOptions,
  dockerClient,
  LABEL_SESSION,
} from "./docker.js";
export { DOCKER_COPY_ROOT } from "./docker-long-lived.js";
export {
  bwrapChecks,
  type CheckStatus,
  cgroupCheck,
  type DoctorCheck,
  diskCheck,
  dockerChecks,
  proxyCheck,
} from "./doctor.js";
export {
  DEFAULT_E2B_TEMPLATE,
  DEFAULT_E2B_TTL_MS,
  type E2BConnection,
  type E2BOptions,
  E2BSandbox,
  type E2BSandboxOptions,
  REMOTE_WORKSPACE,
  resolveE2BConnection,
} from "./e2b.js";
export { SYNC_EXCLUDES } from "./e2b-script.js";
export { DEFAULT_SYNC_LIMITS, type SyncLimits } from "./e2b-sync.js";
export { isSecretEnv, NON_INTERACTIVE_ENV, SECRET_ENV_NAMES, SECRET_ENV_PREFIXES, scrubEnv } from "./env.js";
export { DEDICATED_SANDBOX_UID } from "./host-user.js";
export { buildImage, IMAGE_REPO, imageExists, imageTag } from "./image.js";
export { type ImageRuntime, listImageRuntimes } from "./image-contents.js";
export {
  DEFAULT_TIMEOUT_MS,
  findShell,
  KILL_GRACE_MS,
  LOCAL_SANDBOX_WARNING,
  LocalSandbox,
  type LocalSandboxOptions,
} from "./local.js";
export {
  canSpawnLongLived,
  type LongLivedOptions,
  type LongLivedProcess,
  type LongLivedSpawner,
  spawnLongLived,
} from "./long-lived.js";
export { SessionManager, type SessionManagerOptions } from "./manager.js";
export { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
export { buildPackageIndex, loadPackageIndex, type PackageIndex, packageIndexFile } from "./package-index.js";
export { DEFAULT_PROTECTED_PATHS } from "./protected-paths.js";
export {
  type AllowListProxy,
  type AllowListProxyOptions,
  MAX_HEADER_BYTES,
  type ProxyLogEntry,
  startAllowListProxy,
} from "./proxy.js";
export { canonicalIp, nonPublicRange } from "./proxy-address.js";
export { type EgressPolicy, parseEgressPolicy } from "./proxy-egress.js";
export { type Decision, decideDestination, type LookupFn, systemLookup } from "./proxy-policy.js";
export {
  type AllowRule,
  type Authority,
  AuthorityError,
  hostAllowed,
  parseAllowRules,
  parseAuthority,
} from "./proxy-rules.js";
export { type ReapReport, reapLeftovers } from "./reaper.js";
export { checkBwrap, defaultSandboxKind } from "./sandbox-kind.js";
export { shellJoin, shellQuote } from "./shell-quote.js";
export * from "./types.js";
