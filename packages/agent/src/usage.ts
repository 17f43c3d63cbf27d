import type { Usage } from "@hands/llm";

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
}

/** Adds `step` into `total` in place. */
export function addUsage(total: Usage, step: Usage): Usage {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  total.cachedInputTokens = (total.cachedInputTokens ?? 0) + (step.cachedInputTokens ?? 0);
  if (step.reasoningTokens) total.reasoningTokens = (total.reasoningTokens ?? 0) + step.reasoningTokens;
  total.costUsd = (total.costUsd ?? 0) + (step.costUsd ?? 0);
  return total;
}
