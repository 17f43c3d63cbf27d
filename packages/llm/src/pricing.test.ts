import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { costOf, formatCost, priceFor, withCost } from "./pricing.js";

describe("pricing", () => {
  test("longest prefix wins, router prefixes are tolerated, unknown models have no price", () => {
    assert.equal(priceFor("gpt-4o-2024-08-06")?.input, 2.5);
    assert.equal(priceFor("gpt-4o-mini")?.input, 0.15);
    assert.equal(priceFor("gpt-4.1-mini-2025-04-14")?.input, 0.4);
    assert.equal(priceFor("openai/gpt-4o")?.input, 2.5);
    assert.equal(priceFor("claude-sonnet-4-20250514")?.output, 15);
    assert.equal(priceFor("deepseek-chat")?.output, 0.42);
    assert.equal(priceFor("qwen2.5-coder:7b"), undefined);
  });

  test("cost uses the cached rate for cached input", () => {
    const cost = costOf(
      { inputTokens: 1_000_000, cachedInputTokens: 500_000, outputTokens: 100_000 },
      {
        input: 2,
        output: 8,
        cachedInput: 0.5,
      },
    );
    assert.ok(Math.abs(cost - (1 + 0.25 + 0.8)) < 1e-9);
  });

  test("withCost: table, override, unknown", () => {
    assert.ok((withCost({ inputTokens: 1000, outputTokens: 0 }, "gpt-4o").costUsd ?? 0) > 0);
    assert.equal(
      withCost({ inputTokens: 1e6, outputTokens: 0 }, "local", { input: 1, output: 1 }).costUsd,
      1,
    );
    assert.equal("costUsd" in withCost({ inputTokens: 1, outputTokens: 1 }, "local"), false);
  });
});

test("formatCost: – when no price is known (never $0.0000), else cents or dollars", () => {
  assert.equal(formatCost(undefined), "–");
  assert.equal(formatCost(0), "–");
  assert.equal(formatCost(Number.NaN), "–");
  assert.equal(formatCost(0.00001), "<$0.0001");
  assert.equal(formatCost(0.0012), "$0.0012");
  assert.equal(formatCost(12.5), "$12.50");
});
