// What every request carries before the conversation: the system prompt and the built-in
// tools' schemas. A change to them shows up here in review, and their size has a budget
// (bench/request-size.mjs measures it on the wire beside pi's).
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildSystemPrompt } from "./prompt.js";
import { ToolRegistry } from "./registry.js";
import { builtinTools } from "./tools/index.js";

const ALL = builtinTools().map((t) => t.name);
const READ_ONLY = builtinTools()
  .filter((t) => t.readOnly)
  .map((t) => t.name);

/** Bytes of the tools as an OpenAI-compatible request sends them. */
const wireBytes = () =>
  Buffer.byteLength(
    JSON.stringify(
      new ToolRegistry(builtinTools()).schemas().map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    ),
  );

test("the built-in tools' schemas fit their budget (pi 0.73.1 sends 2,953 bytes for 4 tools)", () => {
  const bytes = wireBytes();
  // 5,150 before the 2026-12-02 cut (issue 24: every 200-step loop ≤ pi's bytes needs ≤ ~4 KB).
  assert.ok(bytes <= 3_950, `the ${builtinTools().length} built-in tools take ${bytes} bytes`);
  for (const t of builtinTools()) {
    assert.ok(t.description.length <= 300, `${t.name}: ${t.description.length} characters`);
    assert.ok(!/\s{2}/.test(t.description), `${t.name}: doubled whitespace`);
  }
});

test("the system prompt fits its budget and names only offered tools", () => {
  const all = buildSystemPrompt({ workspace: "/w", tools: ALL });
  assert.ok(Buffer.byteLength(all) <= 640, `${Buffer.byteLength(all)} bytes:\n${all}`);
  for (const name of ["read_file", "edit_file", "write_file", "run_command", "grep", "code_outline"])
    assert.ok(all.includes(name), `names ${name}`);
  assert.equal(buildSystemPrompt({ workspace: "/w" }), all, "no list: every built-in tool");
  const readOnly = buildSystemPrompt({ workspace: "/w", tools: READ_ONLY });
  for (const name of ALL.filter((n) => !READ_ONLY.includes(n)))
    assert.ok(!readOnly.includes(name), `a read-only prompt names ${name}:\n${readOnly}`);
  assert.match(readOnly, /^Workspace: \/w$/m);
  assert.match(readOnly, /answer briefly with the result/);
});

// The whole text, so any change to what every request tells the model is seen in review.
test("the system prompt, word for word", () => {
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(
    buildSystemPrompt({ workspace: "/w", tools: ALL }),
    [
      "You are Hands, a coding agent. Do the user's request in the workspace with the tools until it is done and verified.",
      "- Look before you change: list_dir, glob, grep, code_outline, read_file.",
      "- Prefer those to cat, ls, find and grep in run_command.",
      "- Read a file before editing it (edit_file; write_file for a new one).",
      "- After changing code, run it or its tests.",
      "- On ERROR, fix the cause; do not repeat a failing call. Independent calls in one turn run in parallel.",
      "- Paths are relative to the workspace. When done, stop calling tools and answer briefly with the result asked for.",
      "Workspace: /w",
      `Platform: ${process.platform}; date: ${today}`,
    ].join("\n"),
  );
});

test("the tools on the wire carry no top-level additionalProperties, and calls are still checked against it", () => {
  const registry = new ToolRegistry(builtinTools());
  for (const s of registry.schemas()) assert.equal("additionalProperties" in s.parameters, false, s.name);
  const bad = registry.prepare({ id: "1", name: "read_file", arguments: '{"path":"a","colour":"red"}' });
  assert.equal(bad.ok, false);
  assert.match(
    !bad.ok ? bad.error : "",
    /must NOT have additional properties[\s\S]*"additionalProperties":false/,
  );
});

test("instructions and the sandbox note are appended verbatim", () => {
  const p = buildSystemPrompt({ workspace: "/w", sandboxNote: "bwrap", instructions: "  Use tabs.\n" });
  assert.match(p, /\nCommands: bwrap\n\nUse tabs\.$/);
});
