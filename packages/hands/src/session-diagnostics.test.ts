// End to end: a real session (SDK) against the scripted model server over HTTP. The model writes
// a TypeScript file with a type error; the request after it must carry, in the tool result the
// server received, the error typescript-language-server found (run in the session's sandbox);
// and in Python on bwrap, the scripted model acts on pyright's error it was sent and fixes it.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { createSession } from "./index.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-session-diag-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function run(extra: { diagnosticsOff?: boolean }) {
  const server = await startScriptedServer([
    {
      toolCalls: [
        { name: "write_file", arguments: { path: "src/bad.ts", content: "export const n: number = 'x';\n" } },
      ],
    },
    { content: "done" },
  ]);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(join(workspace, ".hands"), { recursive: true });
  writeFileSync(join(workspace, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true } }));
  // A cold tsserver on a busy machine takes long: the first edit may wait up to 3 minutes here.
  writeFileSync(
    join(workspace, ".hands", "config.json"),
    JSON.stringify({
      diagnostics: { startWaitMs: 180_000, ...(extra.diagnosticsOff ? { enabled: false } : {}) },
    }),
  );
  const session = await createSession({
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env: { HOME: home, XDG_CONFIG_HOME: join(home, "config") },
    configFiles: true,
    sandbox: "local",
    memory: false,
  });
  try {
    const result = await session.run("write the file");
    assert.equal(result.status, "done");
  } finally {
    await session.close();
    await server.close();
  }
  const chat = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
  assert.equal(chat.length, 2);
  const tool = chat[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
  return tool.content as string;
}

test("the model receives the new error of its write_file in the tool result", async () => {
  const seen = await run({});
  assert.match(seen, /Created src\/bad\.ts/);
  assert.match(seen, /1 new error from typescript-language-server after this edit:/);
  assert.match(seen, /src\/bad\.ts:1:14: TS2322 Type 'string' is not assignable to type 'number'\./);
});

test("with diagnostics off (config enabled: false) the tool result has none", async () => {
  const seen = await run({ diagnosticsOff: true });
  assert.match(seen, /Created src\/bad\.ts/);
  assert.doesNotMatch(seen, /TS2322|Diagnostics/);
});

test("python in a bwrap sandbox: the scripted model reads pyright's error and fixes it", async () => {
  const bad = "def area(w, h):\n    return w * h\n\n\nprint(area(2))\n";
  const good = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n";
  const seen: string[] = [];
  // The model's side: each turn looks at the tool result it was sent and acts on what it says.
  const server = await startScriptedServer((req, i) => {
    const messages = req.body?.messages ?? [];
    const last = messages[messages.length - 1];
    if (i === 0) return { toolCalls: [{ name: "write_file", arguments: { path: "calc.py", content: bad } }] };
    seen.push(String(last?.role === "tool" ? last.content : ""));
    if (i === 1) {
      if (!/calc\.py:5:7: reportCallIssue Argument missing for parameter "h"/.test(seen[0] ?? ""))
        return { content: "no diagnostics seen" };
      return {
        toolCalls: [
          {
            name: "edit_file",
            arguments: { path: "calc.py", old_string: "area(2))", new_string: "area(2, 3))" },
          },
        ],
      };
    }
    return { content: /new error/.test(seen[1] ?? "") ? "still broken" : "fixed" };
  });
  const home = mkdtempSync(join(scratch, "py-"));
  const workspace = join(home, "ws");
  mkdirSync(join(workspace, ".hands"), { recursive: true });
  writeFileSync(
    join(workspace, ".hands", "config.json"),
    JSON.stringify({ diagnostics: { startWaitMs: 180_000 } }),
  );
  const session = await createSession({
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env: { HOME: home, XDG_CONFIG_HOME: join(home, "config") },
    configFiles: true,
    sandbox: "bwrap",
    memory: false,
  });
  try {
    const result = await session.run("write calc.py");
    assert.equal(result.status, "done");
    assert.equal(result.answer.trim(), "fixed", JSON.stringify(seen));
  } finally {
    await session.close();
    await server.close();
  }
  assert.match(seen[0] ?? "", /1 new error from pyright after this edit:/);
  assert.doesNotMatch(seen[1] ?? "", /new error/);
  assert.equal(readFileSync(join(workspace, "calc.py"), "utf8"), good);
});
