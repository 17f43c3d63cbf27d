// What importing @hands/agent loads: not the parts a run may never use. The MCP SDK (its zod
// schemas are ~5 MB of heap) loads when the first MCP server starts; web-tree-sitter and the
// shell grammar when the first command is judged or the first outline made.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createApprovalGate } from "./policy/gate.js";
import { loadCommandPolicy } from "./policy/load.js";
import { parseShell, shellParserLoaded } from "./policy/shell-parse.js";

const dir = mkdtempSync(join(tmpdir(), "hands-lazy-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("importing the agent loads neither the MCP SDK, zod nor tree-sitter", () => {
  const log = join(dir, "loaded.txt");
  // A module hook (its own thread) writes every URL the import loads.
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + "\\n"); return next(url, context); }`,
  );
  const index = pathToFileURL(fileURLToPath(new URL("./index.js", import.meta.url))).href;
  execFileSync(process.execPath, [
    "--input-type=module",
    "-e",
    `import { register } from "node:module";
register(${JSON.stringify(pathToFileURL(hooks).href)});
await import(${JSON.stringify(index)});`,
  ]);
  const loaded = readFileSync(log, "utf8").split("\n").filter(Boolean);
  assert.ok(
    loaded.some((u) => u.endsWith("/agent/dist/agent.js")),
    "the hook saw the agent load",
  );
  const unwanted = loaded.filter((u) =>
    /@modelcontextprotocol|\/zod\/|web-tree-sitter|tree-sitter-bash/.test(u),
  );
  assert.deepEqual(unwanted, []);
});

test("the gate loads the shell parser for the first command, not for file tools", async () => {
  assert.equal(shellParserLoaded(), false);
  assert.throws(() => parseShell("ls"), /shell parser is not loaded yet/);
  const gate = createApprovalGate({ workspace: dir, policy: loadCommandPolicy({}), mode: () => "auto" });
  const req = (name: string, args: Record<string, unknown>) => ({
    call: { id: "c1", name, arguments: JSON.stringify(args) },
    name,
    args,
    step: 1,
    signal: new AbortController().signal,
  });
  assert.equal((await gate(req("read_file", { path: "a.txt" }))).allow, true);
  assert.equal(shellParserLoaded(), false);
  // The first command is parsed (so the spelling trick is seen through) and denied.
  const d = await gate(req("run_command", { command: "/bin/rm -rf '/'" }));
  assert.deepEqual([d.allow, d.source], [false, "policy"]);
  assert.equal(shellParserLoaded(), true);
  assert.deepEqual(
    parseShell("a | b").commands.map((c) => c.words.map((w) => w.value).join(" ")),
    ["a", "b"],
  );
});
