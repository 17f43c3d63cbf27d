// Streaming markdown: what is drawn while text arrives never changes shape later.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnswerBlock, lastSafeCut, stablePrefix } from "./markdown.js";

describe("streamed markdown", () => {
  test("a table header waits for its separator row; a fence or a rule-like line waits for its end", () => {
    assert.equal(stablePrefix("Intro\n\n| a | b |\n"), "Intro\n");
    assert.equal(stablePrefix("Intro\n\n| a | b |\n|---|---|\n| 1 |"), "Intro\n\n| a | b |\n|---|---|");
    assert.equal(stablePrefix("text\n``"), "text");
    assert.equal(stablePrefix("Title\n=="), "Title");
    assert.equal(stablePrefix("a paragraph still arri"), "a paragraph still arri");
  });

  test("cuts only after a blank line outside a fence, before a new block", () => {
    const t = "para one\n\n```\ncode\n\nmore code\n```\n\n- item\n\n  continued\n\nlast\n";
    const cut = lastSafeCut(t, 0);
    assert.equal(t.slice(cut), "last\n");
    assert.equal(lastSafeCut("```\na\n\nb\n", 0), -1, "never inside a fence");
  });

  test("streamed piece by piece, the answer renders as it does whole", () => {
    const text = `# Title\n\nSome **bold** text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\`\`\`ts\nconst x = 1;\n\n// after a blank line\n\`\`\`\n\n1. one\n2. two\n\nEnd.`;
    for (const size of [1, 3, 7, 40]) {
      const streamed = new AnswerBlock(true);
      for (let i = 0; i < text.length; i += size) {
        streamed.append(text.slice(i, i + size));
        for (const l of streamed.render(50))
          assert.ok(!/\| a \| b \|/.test(l), "a raw table row never shows");
      }
      streamed.finish();
      const whole = new AnswerBlock(true);
      whole.append(text);
      whole.finish();
      assert.deepEqual(streamed.render(50), whole.render(50), `pieces of ${size}`);
    }
  });
});
