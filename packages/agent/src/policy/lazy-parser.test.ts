// The shell parser loads on the first command judged, not when the agent is imported: a run
// that never runs a command does not pay for tree-sitter-bash. The gate loads it itself.
import assert from "node:assert/strict";
import { test } from "node:test";
import "../index.js";
import { createApprovalGate } from "./gate.js";
import { loadCommandPolicy } from "./load.js";
import { parseShell, shellParserLoaded } from "./shell-parse.js";

test("importing the agent does not load the shell parser; the gate loads it for the first command", async () => {
  assert.equal(shellParserLoaded(), false);
  assert.throws(() => parseShell("ls"), /shell parser is not loaded yet/);
  const gate = createApprovalGate({
    workspace: "/nonexistent-ws",
    policy: loadCommandPolicy({}),
    mode: () => "auto",
  });
  const req = (name: string, args: Record<string, unknown>) => ({
    call: { id: "c1", name, arguments: JSON.stringify(args) },
    name,
    args,
    step: 1,
    signal: new AbortController().signal,
  });
  // A file tool needs no parsing.
  assert.equal((await gate(req("read_file", { path: "a.txt" }))).allow, true);
  assert.equal(shellParserLoaded(), false);
  // The first command: parsed (so the spelling trick is seen through) and denied.
  const d = await gate(req("run_command", { command: "/bin/rm -rf '/'" }));
  assert.equal(d.allow, false);
  assert.equal(d.source, "policy");
  assert.equal(shellParserLoaded(), true);
  assert.deepEqual(
    parseShell("a | b").commands.map((c) => c.words.map((w) => w.value).join(" ")),
    ["a", "b"],
  );
});
