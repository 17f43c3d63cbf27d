import assert from "node:assert/strict";
import { test } from "node:test";
import { UsageError } from "./args.js";
import { durationMs } from "./duration.js";

test("durations: a bare number in the option's unit, or with a unit", () => {
  assert.equal(durationMs("30", "--max-age", 60_000), 30 * 60_000);
  assert.equal(durationMs("90s", "--max-age", 60_000), 90_000);
  assert.equal(durationMs("1.5h", "--max-age", 60_000), 5_400_000);
  assert.equal(durationMs("2d", "--max-age", 60_000), 2 * 86_400_000);
  assert.equal(durationMs("250ms", "--x", 1000), 250);
});

test("durations: anything else is a usage error naming the flag and the value", () => {
  for (const bad of [
    "abc",
    "",
    " ",
    "0",
    "0s",
    "-5",
    "10x",
    "1e3",
    "NaN",
    "Infinity",
    "5 m m",
    "9".repeat(400),
  ])
    assert.throws(
      () => durationMs(bad, "--max-age", 60_000),
      (e: unknown) =>
        e instanceof UsageError && e.message.includes("--max-age") && e.message.includes(`"${bad}"`),
      JSON.stringify(bad),
    );
});
