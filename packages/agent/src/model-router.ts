// Rule-based model routing: which model answers each step. A request that reads as plain chat
// (no code, file or command in it) goes to the chat model on its first step; code work goes to
// the executor; after `escalateAfter` failed tool calls in a row the step goes to the strong
// model until a call succeeds again. Every choice is reported (model_choice) with its reason.
import type { Provider } from "@hands/llm";
import type { RouteChoice, RouteInfo } from "./agent.js";

export const MODEL_ROLES = ["planner", "executor", "summarizer", "subagent", "chat", "strong"] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

export interface RouterOptions {
  executor: Provider;
  /** Plain-chat requests (first step only). */
  chat?: Provider;
  /** Escalation after repeated failures. */
  strong?: Provider;
  /** Failed tool calls in a row before escalating (default 2). */
  escalateAfter?: number;
}

// Words and shapes that mean the request is about code, files or commands.
const CODE_SIGNS = [
  /`/,
  /\b[\w.-]+\.(?:[cm]?[jt]sx?|py|rs|go|java|c|h|cpp|hpp|rb|php|json|ya?ml|toml|md|sh|sql|css|html?)\b/i,
  /(?:^|\s)\.{0,2}\/[\w.-]/,
  /\b(?:fix|bug|test|tests|function|class|method|file|files|folder|directory|repo|repository|code|run|build|compile|error|stack trace|refactor|implement|install|commit|branch|diff|patch|script|command|deploy|lint|debug|crash|exception|api|endpoint)\b/i,
];

/** Whether a request reads as plain chat: no code, path, file name or code-work word in it. */
export function isPlainChat(text: string): boolean {
  return !CODE_SIGNS.some((re) => re.test(text));
}

/** The route function for AgentOptions.route. */
export function createRouter(options: RouterOptions): (info: RouteInfo) => RouteChoice {
  const after = options.escalateAfter ?? 2;
  return (info) => {
    if (options.strong && info.failuresInARow >= after)
      return {
        provider: options.strong,
        role: "strong",
        reason: `${info.failuresInARow} failed tool calls in a row`,
      };
    // Only the first step: once tools have run, the request has become work on the workspace.
    if (options.chat && info.step === 1 && isPlainChat(info.task))
      return {
        provider: options.chat,
        role: "chat",
        reason: "plain chat: no code, file or command in the request",
      };
    return {
      provider: options.executor,
      role: "executor",
      reason: info.step === 1 ? "code work" : "working on the request",
    };
  };
}
