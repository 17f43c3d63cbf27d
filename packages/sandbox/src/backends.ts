// What makes and manages sandboxes (the backends, the allow-list proxy, the E2B client), for
// front ends that load it when the first sandbox is needed rather than at start-up: a bundler
// then keeps it out of the start-up code, which reaches this package only for the path checks
// and the default kind (`@hands/sandbox`). Everything here is also exported from there.

export { DEFAULT_LIMITS, listCgroups } from "./cgroups.js";
export { createSandbox } from "./create.js";
export { type DiagnoseFacts, type Diagnosis, type DiagnosisCause, diagnoseFailure } from "./diagnose.js";
export { checkDocker, dockerClient, LABEL_SESSION } from "./docker.js";
export {
  bwrapChecks,
  type CheckStatus,
  cgroupCheck,
  type DoctorCheck,
  diskCheck,
  dockerChecks,
  proxyCheck,
} from "./doctor.js";
export { resolveE2BConnection } from "./e2b.js";
export { buildImage, IMAGE_REPO, imageTag } from "./image.js";
export { type ImageRuntime, listImageRuntimes } from "./image-contents.js";
export { SessionManager } from "./manager.js";
export { buildPackageIndex, loadPackageIndex, type PackageIndex, packageIndexFile } from "./package-index.js";
export { startAllowListProxy } from "./proxy.js";
export { type EgressPolicy, parseEgressPolicy } from "./proxy-egress.js";
export { parseAllowRules } from "./proxy-rules.js";
export { reapLeftovers } from "./reaper.js";
export {
  buildTemplate,
  findTemplate,
  listTemplates,
  parseRecipe,
  preflightRecipe,
  removeTemplate,
  startTemplateCommand,
  TEMPLATE_REPO,
  type TemplateInfo,
  type TemplateRecipe,
  templateHash,
} from "./template.js";
export {
  type BuildStep,
  buildInContainer,
  type ContainerBuildResult,
  checkSteps,
  removeTemplateImage,
} from "./template-container.js";
