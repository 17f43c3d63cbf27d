// @hands/sdk: Hands as a library. Start or resume a session, run tasks, stream their events,
// answer approvals, get structured answers. See README.md ("Use Hands as a library").
import type { AgentEvent, WrittenTraceMessage } from "@hands/agent";

// The formats on disk, for tools that read them (the dashboard): a trace file is one AgentEvent
// or message line (the messages model requests sent, each once) per line; a session file is
// SessionLine per line (see @hands/agent's SessionStore).
export type {
  AgentEvent,
  AgentEventType,
  ApprovalMode,
  LoadedSession,
  MemoryAction,
  RunOutcome,
  RunStatus,
  SessionLine,
  SessionMeta,
  SessionSummary,
} from "@hands/agent";
// Your own tools and hooks (SessionOptions.tools / hooks).
export {
  defineTool,
  type HookAnswer,
  type HookEventName,
  type HookFunction,
  type HookInputs,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "@hands/agent";
// Memory for an Agent wired by hand (@hands/agent); sessions have it built in.
export type { AgentMemory } from "./agent-memory.js";
export { SettingsError } from "./errors.js";
export { type AgentMemoryOptions, openAgentMemory } from "./memory-for-agent.js";
export {
  type ApprovalAnswer,
  type ApprovalRequest,
  createSession,
  type RunOptions,
  type RunResult,
  type RunStream,
  type Safety,
  Session,
  type SessionOptions,
} from "./sdk.js";
export type { JsonSchema } from "./sdk-output.js";
/**
 * One line of a trace file (<data>/traces/<id>.jsonl): an event, or a message a model request
 * sent (model_request's `sent` lists their ids; a tool result's text may be left to its tool_end).
 */
export type TraceEvent = AgentEvent | WrittenTraceMessage;
export { dataDir } from "./paths.js";
