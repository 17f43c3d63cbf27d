// Diagnostics after edits: language servers in the sandbox, new errors only (see service.ts).

export { withDiagnostics } from "./attach.js";
export { languageOf, type ServerId } from "./servers.js";
export {
  Diagnostics,
  type DiagnosticsOptions,
  type DiagnosticsReport,
  type DiagnosticsStatus,
  type EditCheck,
  formatReport,
} from "./service.js";
