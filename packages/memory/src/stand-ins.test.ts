import assert from "node:assert/strict";
import { test } from "node:test";
import { Memory } from "./memory.js";
import { makeStandIn, type Outliner, turnStandIn } from "./stand-ins.js";
import { estimateTokens } from "./text.js";

const chunk = (content: string, meta: Record<string, string> = {}, type = "tool_result" as const) => ({
  content,
  tokens: estimateTokens(content),
  type,
  meta,
});
const opts = { maxTokens: 60, ratio: 0.25 };

test("a conversation turn keeps its speaker and its most informative whole sentence", () => {
  const s = turnStandIn(
    "Caroline: Oh wow, that is so cool. I went to the LGBTQ support group on 7 May with Jenna and Tom. It was fun.",
    "Caroline",
  );
  assert.equal(s, "Caroline: I went to the LGBTQ support group on 7 May with Jenna and Tom.");
  // One sentence is its own smallest useful unit: no stand-in.
  assert.equal(turnStandIn("Melanie: Wow, that's cool, Caroline!", "Melanie"), undefined);
});

test("a failing test run keeps the failing tests, their messages and the summary", async () => {
  const lines = ["$ npm test"];
  for (let i = 0; i < 60; i++) lines.push(`  ✓ parser handles case ${i} (3 ms)`);
  lines.splice(20, 0, "  ✗ parser rejects empty input", "    AssertionError: expected 'x' to equal 'y'");
  lines.push("Tests: 61 total, 1 failed, 60 passed");
  const s = (await makeStandIn(chunk(lines.join("\n"), { tool: "run_command" }), opts))!;
  assert.match(s, /✗ parser rejects empty input/);
  assert.match(s, /AssertionError: expected 'x' to equal 'y'/);
  assert.match(s, /Tests: 61 total, 1 failed/);
  assert.doesNotMatch(s, /handles case 30/);
});

test("command output keeps the exit code, the error lines and the tail", async () => {
  const out = [
    "exit code: 2",
    "stdout:",
    ...Array.from({ length: 80 }, (_, i) => `compiling module ${i} of 80`),
    "stderr:",
    "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
    "Found 1 error.",
  ].join("\n");
  const s = (await makeStandIn(chunk(out, { tool: "run_command" }), opts))!;
  assert.match(s, /^exit code: 2/);
  assert.match(s, /error TS2322/);
  assert.match(s, /Found 1 error\.$/);
  assert.doesNotMatch(s, /module 40 of/);
});

test("grep output becomes the files and their counts", async () => {
  const out = [
    ...Array.from({ length: 30 }, (_, i) => `src/a.ts:${i + 1}:  const parse = makeParser(${i});`),
    ...Array.from({ length: 12 }, (_, i) => `src/b/c.ts:${i + 3}:  parse(x${i})`),
  ].join("\n");
  const s = (await makeStandIn(chunk(out, { tool: "grep" }), opts))!;
  assert.equal(s, "2 files:\nsrc/a.ts: 30 matches\nsrc/b/c.ts: 12 matches");
});

test("source code becomes its outline, with the file's line numbers", async () => {
  const body = Array.from({ length: 40 }, (_, i) =>
    i === 2
      ? "def area(self) -> float:"
      : i === 20
        ? "class Shape:"
        : `    x_${i} = compute(${i}, 'padding text')`,
  );
  const numbered = body.map((l, i) => `${String(i + 101).padStart(6)}\t${l}`).join("\n");
  let seen = "";
  const outline: Outliner = async (source, path) => {
    seen = `${path}\n${source}`;
    return [
      { signature: "def area(self) -> float", startLine: 3, endLine: 10, depth: 0 },
      { signature: "class Shape", startLine: 21, endLine: 40, depth: 0 },
    ];
  };
  const s = (await makeStandIn(chunk(numbered, { tool: "read_file", path: "geo.py" }), {
    ...opts,
    outline,
  }))!;
  // The outliner got the source without the line-number gutter.
  assert.ok(seen.startsWith("geo.py\n    x_0 = compute(0"));
  assert.equal(
    s,
    "geo.py (lines 101-140), outline:\ndef area(self) -> float  [103-110]\nclass Shape  [121-140]",
  );
  // No outliner (or an unsupported language): whole lines, never a bag of words.
  const plain = await makeStandIn(chunk(numbered, { tool: "read_file", path: "geo.py" }), opts);
  if (plain) for (const part of plain.split(" … ")) assert.ok(numbered.includes(part), part);
});

test("a stand-in keeps its pointer: the context marks it and recall returns the original", async () => {
  const m = new Memory({ scope: "t" });
  const long =
    "Melanie: Thanks so much for asking, it has been a long week. I signed up for a pottery class on 2 July at the Riverside studio with my friend Anna. The kids were thrilled about it too and want to join.";
  const c = await m.add({
    type: "user_input",
    content: long,
    meta: { speaker: "Melanie", date: "3 July, 2023" },
  });
  assert.equal(
    c.short,
    "Melanie: I signed up for a pottery class on 2 July at the Riverside studio with my friend Anna.",
  );
  // A budget that fits the stand-in and not the turn.
  const ctx = await m.context("pottery class", { budget: 35, touch: false });
  assert.equal(ctx.items.length, 1);
  assert.equal(ctx.items[0]!.form, "compressed");
  assert.equal(ctx.text, `[3 July, 2023]\n${c.short} (recall ${c.id})`);
  assert.ok(ctx.tokens <= 35);
  assert.equal(m.recall(c.id)?.chunk.content, long);
  // With room, the whole turn.
  const wide = await m.context("pottery class", { budget: 200, touch: false });
  assert.equal(wide.text, `[3 July, 2023]\n${long}`);
  m.close();
});
