// How a reasoning level becomes Anthropic's thinking parameters. Two forms exist: a token budget
// (`thinking: {type: "enabled", budget_tokens}`), the only one of Claude models before 4.6, and
// adaptive thinking (`thinking: {type: "adaptive"}` with `output_config.effort`), where the model
// decides how much to think; from 4.6 on it is the recommended form, and from Opus 4.7 on the
// only one (a budget is refused with HTTP 400). The form is chosen by the model's name; a server
// that refuses it gets the other (anthropic.ts), so a name this cannot place costs one request.
import type { MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ReasoningLevel } from "./types.js";

export type ThinkingMode = "adaptive" | "budget";

/** Token budgets of `thinking.budget_tokens` per level (the API's minimum is 1,024). */
export const THINKING_BUDGET: Record<Exclude<ReasoningLevel, "off">, number> = {
  low: 2048,
  medium: 8192,
  high: 24576,
};

/**
 * Adaptive for Claude 4.6 and later (claude-opus-4-6, claude-sonnet-5, Bedrock's
 * anthropic.claude-opus-4-7-v1, the Fable and Mythos families); a budget for older Claude
 * models (claude-3-7-sonnet, claude-sonnet-4-5, claude-haiku-4-5) and for names that are not
 * Claude's (an Anthropic-compatible server's own models know the original form).
 */
export function thinkingModeFor(model: string): ThinkingMode {
  const name = model.toLowerCase();
  if (!name.includes("claude")) return "budget";
  if (/fable|mythos/.test(name)) return "adaptive";
  // claude-<family>-<major>[-<minor>], or the older claude-<major>[-<minor>]-<family>; a date
  // (claude-sonnet-4-20250514) is not a minor version.
  const version = /claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(name);
  if (!version) return "budget";
  const major = Number(version[1]);
  const minor = Number(version[2] ?? 0);
  return major > 4 || (major === 4 && minor >= 6) ? "adaptive" : "budget";
}

export interface ThinkingParams {
  max_tokens: number;
  thinking: NonNullable<MessageCreateParamsBase["thinking"]>;
  output_config?: { effort: Exclude<ReasoningLevel, "off"> };
}

/**
 * The request fields for `level`. Thinking counts toward max_tokens in both forms, so the
 * answer's tokens get the level's budget on top (adaptive: as room, the model may use less).
 * Adaptive thinking asks for summarized thinking text: newer models omit it by default, and
 * people read it as the run goes.
 */
export function thinkingParams(
  mode: ThinkingMode,
  level: Exclude<ReasoningLevel, "off">,
  answerTokens: number,
): ThinkingParams {
  const budget = THINKING_BUDGET[level];
  return mode === "budget"
    ? { max_tokens: budget + answerTokens, thinking: { type: "enabled", budget_tokens: budget } }
    : {
        max_tokens: budget + answerTokens,
        thinking: { type: "adaptive", display: "summarized" },
        output_config: { effort: level },
      };
}

/**
 * Whether a 400's message is about the thinking form (then the other form is tried): it names
 * the form's fields, not merely thinking (a thinking block missing from the history is the
 * history's fault, and the same in either form).
 */
export function refusesThinkingForm(message: string): boolean {
  return /budget_tokens|adaptive|effort|output_config|thinking\.type|thinking type/i.test(message);
}
