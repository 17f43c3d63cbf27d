// What every request carries before the conversation: the system prompt and the built-in
// tools' schemas. A change to them shows up here in review, and their size has a budget
// (bench/request-size.mjs measures it on the wire beside pi's).
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildSystemPrompt } from "./prompt.js";
import { builtinTools } from "./tools/index.js";

const ALL = builtinTools().map((t) => t.name);
const READ_ONLY = builtinTools()
  .filter((t) => t.readOnly)
  .map((t) => t.name);

/** Bytes of the tools as an OpenAI-compatible request sends them. */
const wireBytes = () =>
  Buffer.byteLength(
    JSON.stringify(
      builtinTools().map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    ),
  );

test("the built-in tools' schemas fit their budget (pi 0.73.1 sends 2,953 bytes for 4 tools)", () => {
  const bytes = wireBytes();
  // 4,700 for the first nine; repo_map (about 550 bytes) raised it.
  assert.ok(bytes <= 5_150, `the ${builtinTools().length} built-in tools take ${bytes} bytes`);
  for (const t of builtinTools()) {
    assert.ok(t.description.length <= 420, `${t.name}: ${t.description.length} characters`);
    assert.ok(!/\s{2}/.test(t.description), `${t.name}: doubled whitespace`);
  }
});

test("the system prompt fits its budget and names only offered tools", () => {
  const all = buildSystemPrompt({ workspace: "/w", tools: ALL });
  assert.ok(Buffer.byteLength(all) <= 800, `${Buffer.byteLength(all)} bytes:\n${all}`);
  for (const name of ["read_file", "edit_file", "write_file", "run_command", "grep", "code_outline"])
    assert.ok(all.includes(name), `names ${name}`);
  assert.equal(buildSystemPrompt({ workspace: "/w" }), all, "no list: every built-in tool");
  const readOnly = buildSystemPrompt({ workspace: "/w", tools: READ_ONLY });
  for (const name of ALL.filter((n) => !READ_ONLY.includes(n)))
    assert.ok(!readOnly.includes(name), `a read-only prompt names ${name}:\n${readOnly}`);
  assert.match(readOnly, /^Workspace: \/w$/m);
  assert.match(readOnly, /answer briefly with the result/);
});

test("instructions and the sandbox note are appended verbatim", () => {
  const p = buildSystemPrompt({ workspace: "/w", sandboxNote: "bwrap", instructions: "  Use tabs.\n" });
  assert.match(p, /\nCommands: bwrap\n\nUse tabs\.$/);
});
