// The code contexts' memory bound, by language, against what bench/interpreter-memory.mjs
// measured each context to be charged (IPython +181 MB, Deno +213–280, IRkernel +172, Bash +86;
// the agent ~12): four Deno contexts in a 512 MB sandbox had three OOM-killed under the old
// bound of one per 128 MB. The whole path (40 parallel creates, 429 past the bound) is
// security/interpreter-access.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contextLimit, contextMemoryBytes, MAX_CONTEXTS } from "./service.js";

const MB = 1024 * 1024;
const MEASURED_MB: Record<string, number> = {
  python: 181,
  javascript: 280,
  typescript: 213,
  r: 172,
  bash: 86,
};

describe("code contexts per sandbox memory", () => {
  it("admits no more contexts of a language than their measured charge fits", () => {
    for (const memory of [512, 1024, 2048])
      for (const [language, measured] of Object.entries(MEASURED_MB)) {
        const n = contextLimit(memory * MB, language);
        assert.ok(n >= 1);
        if (n > 1) assert.ok(12 + n * measured <= memory, `${n} ${language} contexts in ${memory} MB`);
        assert.ok(contextMemoryBytes(language) >= measured * MB, `${language} is charged less than it takes`);
      }
    assert.equal(contextLimit(512 * MB, "javascript"), 1, "one Deno context in 512 MB");
    assert.ok(contextLimit(1024 * MB, "python") >= 4, "the code-interpreter template keeps room for several");
  });

  it("never exceeds the hard cap, and a sandbox of unknown memory gets the cap", () => {
    assert.equal(contextLimit(64 * 1024 * MB, "bash"), MAX_CONTEXTS);
    assert.equal(contextLimit(0), MAX_CONTEXTS);
    assert.equal(contextLimit(Number.NaN), MAX_CONTEXTS);
    assert.equal(contextLimit(100 * MB), 1, "a small sandbox still gets one context");
  });

  it("charges an unknown language as the largest kernel", () => {
    assert.equal(contextMemoryBytes("cobol"), contextMemoryBytes("javascript"));
  });
});
