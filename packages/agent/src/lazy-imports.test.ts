// What importing @hands/agent loads: not the parts a run may never use. The MCP SDK (its zod
// schemas are ~5 MB of heap) loads when the first MCP server starts; web-tree-sitter and the
// shell grammar when the first command is judged or the first outline made.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createApprovalGate } from "./policy/gate.js";
import { loadCommandPolicy } from "./policy/load.js";
import { parseShell, shellParserLoaded } from "./policy/shell-parse.js";
import { ToolRegistry } from "./registry.js";
import { builtinTools } from "./tools/index.js";
import type { Tool } from "./tools/types.js";

const dir = mkdtempSync(join(tmpdir(), "hands-lazy-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("importing the agent loads neither the MCP SDK, zod, tree-sitter nor the tools' implementations", () => {
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
  // The tools' implementations (and picomatch, ignore) load on their first call.
  const unwanted = loaded.filter((u) =>
    /@modelcontextprotocol|\/zod\/|vscode-|web-tree-sitter|tree-sitter-bash|\/picomatch\/|\/ignore\/|\/tools\/(read-file|write-file|edit-file|list-dir|glob|grep|run-command|execute-python|code-outline)\.js$/.test(
      u,
    ),
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

test("the built-in tools tell the model exactly what their implementations say, and run them", async () => {
  const implementations: Tool[] = [
    (await import("./tools/read-file.js")).readFileTool,
    (await import("./tools/write-file.js")).writeFileTool,
    (await import("./tools/edit-file.js")).editFileTool,
    (await import("./tools/list-dir.js")).listDirTool,
    (await import("./tools/glob.js")).globTool,
    (await import("./tools/grep.js")).grepTool,
    (await import("./tools/run-command.js")).runCommandTool,
    (await import("./tools/execute-python.js")).executePythonTool,
    (await import("./tools/code-outline.js")).codeOutlineTool,
    (await import("./tools/repo-map.js")).repoMapTool,
  ] as Tool[];
  const lazy = builtinTools();
  const spec = (t: Tool) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    readOnly: t.readOnly,
  });
  // What a provider encodes into every request (the registry's schemas), byte for byte.
  assert.equal(
    JSON.stringify(new ToolRegistry(lazy).schemas()),
    JSON.stringify(new ToolRegistry(implementations).schemas()),
  );
  assert.deepEqual(lazy.map(spec), implementations.map(spec));
  assert.ok(lazy.every((t, i) => t !== implementations[i]));

  const ws = mkdtempSync(join(tmpdir(), "hands-lazy-ws-"));
  try {
    writeFileSync(join(ws, "a.txt"), "one\ntwo\n");
    const ctx = {
      workspace: realpathSync(ws),
      readRoots: [],
      sandbox: () => Promise.reject(new Error("no sandbox in this test")),
      signal: new AbortController().signal,
    };
    const grep = lazy.find((t) => t.name === "grep")!;
    assert.deepEqual(
      await grep.execute({ pattern: "tw" }, ctx),
      await implementations[5]!.execute({ pattern: "tw" }, ctx),
    );
    const read = await lazy[0]!.execute({ path: "a.txt" }, ctx);
    assert.equal(read.output, "one\ntwo");
    const missing = await lazy[0]!.execute({ path: "nope.txt" }, ctx);
    assert.equal(missing.isError, true);
    assert.match(missing.output, /^ERROR: /);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
