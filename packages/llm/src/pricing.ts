// Per-million-token prices for common models, used to put a dollar figure on each response.
import type { Usage } from "./types.js";

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
  /** USD per million cached input tokens (defaults to `input`). */
  cachedInput?: number;
}

/**
 * Keys are model-name prefixes; the longest matching prefix wins, so "gpt-4o-mini" is not
 * billed as "gpt-4o". Prices are list prices at the time of writing and only an estimate.
 */
export const PRICING: Readonly<Record<string, ModelPrice>> = {
  "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 },
  "gpt-4.1": { input: 2, output: 8, cachedInput: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cachedInput: 0.1 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4, cachedInput: 0.025 },
  "gpt-5": { input: 1.25, output: 10, cachedInput: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cachedInput: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cachedInput: 0.005 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cachedInput: 0.275 },
  "deepseek-chat": { input: 0.28, output: 0.42, cachedInput: 0.028 },
  "deepseek-reasoner": { input: 0.28, output: 0.42, cachedInput: 0.028 },
  "claude-sonnet-4": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-opus-4": { input: 15, output: 75, cachedInput: 1.5 },
  "claude-opus-4-5": { input: 5, output: 25, cachedInput: 0.5 },
  "claude-haiku-4": { input: 1, output: 5, cachedInput: 0.1 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cachedInput: 0.08 },
  "claude-3-7-sonnet": { input: 3, output: 15, cachedInput: 0.3 },
};

/** Finds the price of `model` by longest prefix; tolerates router prefixes like "openai/gpt-4o". */
export function priceFor(
  model: string,
  table: Readonly<Record<string, ModelPrice>> = PRICING,
): ModelPrice | undefined {
  const candidates = [model.toLowerCase()];
  const slash = model.lastIndexOf("/");
  if (slash >= 0) candidates.push(model.slice(slash + 1).toLowerCase());
  for (const name of candidates) {
    let best: string | undefined;
    for (const prefix of Object.keys(table)) {
      if (name.startsWith(prefix.toLowerCase()) && (best === undefined || prefix.length > best.length)) {
        best = prefix;
      }
    }
    if (best !== undefined) return table[best];
  }
  return undefined;
}

/** Dollar cost of one response; cached input tokens are billed at the cached rate. */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const cost =
    fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.outputTokens * price.output;
  return cost / 1_000_000;
}

/** Adds `costUsd` to `usage` when a price is known (an explicit price overrides the table). */
export function withCost(usage: Usage, model: string, override?: ModelPrice): Usage {
  const price = override ?? priceFor(model);
  return price ? { ...usage, costUsd: costOf(usage, price) } : usage;
}

/**
 * A cost as people read it: `–` when none is known (a model without a price, or nothing spent
 * yet: "$0.0000" would claim it was free), cents for small sums, else dollars and cents.
 * The dashboard's pages show costs the same way.
 */
export function formatCost(usd: number | undefined): string {
  if (!usd || !Number.isFinite(usd) || usd < 0) return "–";
  if (usd < 0.0001) return "<$0.0001";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}
