// Diagnostics after edits: one real pyright, warm, shared by this file's cases (bubblewrap);
// and the bad states (missing, crashing, silent, stuck servers) with small LSP servers of the
// test's own over stdio. Every cold start of the real servers in every sandbox, the hostile
// workspace configurations, and TypeScript: diagnostics.heavy.test.ts (npm run test:heavy).
import assert from "node:assert/strict";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { BwrapSandbox, LocalSandbox, type Sandbox } from "@hands/sandbox";
import { readFileTool } from "../tools/read-file.js";
import type { ToolContext } from "../tools/types.js";
import { writeFileTool } from "../tools/write-file.js";
import { Diagnostics } from "./service.js";
import { bwrapOrSkip, context, write } from "./testing.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-diag-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("one warm pyright in a bwrap sandbox, shared by the cases", { skip: bwrapOrSkip() }, () => {
  const ws = join(scratch, "warm");
  let sandbox: Sandbox;
  let diagnostics: Diagnostics;
  let ctx: ToolContext;
  before(async () => {
    write(ws, { "calc.py": "def area(w, h):\n    return w * h\n" });
    sandbox = await BwrapSandbox.create({ workspace: ws });
    diagnostics = new Diagnostics({ sandbox: async () => sandbox, startWaitMs: 120_000, waitMs: 30_000 });
    ctx = context(realpathSync(ws), diagnostics, sandbox);
  });
  after(async () => {
    await diagnostics.close();
    await sandbox.destroy();
  });

  test("write_file: pyright's wrong arity and undefined name come back in the result, file:line:column", async () => {
    const r = await writeFileTool.execute(
      {
        path: "calc.py",
        content: "def area(w, h):\n    return w * h\n\n\nprint(area(2))\nprint(aera(2, 3))\n",
      },
      ctx,
    );
    assert.match(r.output, /2 new errors from pyright after this edit:/, r.output);
    assert.match(r.output, /calc\.py:5:7: reportCallIssue Argument missing for parameter "h"/, r.output);
    assert.match(r.output, /calc\.py:6:7: reportUndefinedVariable "aera" is not defined/, r.output);
  });

  test("a clean edit of the same file (warm) reports nothing, an error left in place is not new", async () => {
    const r = await writeFileTool.execute(
      {
        path: "calc.py",
        content:
          "# area of a box\ndef area(w, h):\n    return w * h\n\n\nprint(area(2))\nprint(area(2, 3))\n",
      },
      ctx,
    );
    assert.doesNotMatch(r.output, /new error/, r.output);
    assert.equal((r.data?.["diagnostics"] as { status?: string } | undefined)?.status, "ok");
  });
});

// --- Bad states, with servers of the test's own (LSP over stdio, through the real library) ---

const protocolUrl = pathToFileURL(
  createRequire(import.meta.url).resolve("vscode-languageserver-protocol/node.js"),
).href;

/** An LSP server script: answers initialize unless `hang`, then does `onOpen` on the first didOpen. */
function fakeServer(name: string, opts: { hang?: boolean; onOpen: string }): string {
  const file = join(scratch, `${name}.mjs`);
  writeFileSync(
    file,
    `import P from ${JSON.stringify(protocolUrl)};
const c = P.createProtocolConnection(new P.StreamMessageReader(process.stdin), new P.StreamMessageWriter(process.stdout));
c.onRequest(P.InitializeRequest.type, () => ${opts.hang ? "new Promise(() => {})" : "({ capabilities: { textDocumentSync: 1 } })"});
c.onRequest(P.ShutdownRequest.type, () => null);
c.onNotification(P.DidOpenTextDocumentNotification.type, (p) => { ${opts.onOpen} });
c.listen();
`,
  );
  return file;
}

function localCase(options: Partial<ConstructorParameters<typeof Diagnostics>[0]>) {
  const ws = mkdtempSync(join(scratch, "local-"));
  const sandbox = new LocalSandbox({ workspace: ws });
  const diagnostics = new Diagnostics({ sandbox: async () => sandbox, ...options });
  return {
    diagnostics,
    check: () => diagnostics.check({ path: "m.py", before: "x = 1\n", after: "x = 2\n" }),
    close: async () => {
      await diagnostics.close();
      await sandbox.destroy();
    },
  };
}

/** PIDs of live processes whose command line mentions `needle`. */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) out.push(Number(pid));
    } catch {}
  }
  return out;
}

test("a server that is not installed: one clear line, at once", async () => {
  const c = localCase({ findPackage: () => undefined });
  try {
    const r = await c.check();
    assert.equal(r?.status, "unavailable");
    assert.match(
      r?.reason ?? "",
      /pyright could not start: pyright is not installed .*diagnostics are off for this session/,
    );
    assert.ok((r?.durationMs ?? 1e9) < 2000);
  } finally {
    await c.close();
  }
});

test("a server that crashes is restarted once, then left off for the session", async () => {
  const script = fakeServer("crash", {
    onOpen: "process.stderr.write('boom: bad config\\n'); process.exit(7);",
  });
  const c = localCase({
    launchOverride: { pyright: { argv: [process.execPath, script] } },
    startWaitMs: 30_000,
    waitMs: 30_000,
  });
  try {
    const first = await c.check();
    assert.equal(first?.status, "failed");
    assert.match(
      first?.reason ?? "",
      /pyright crashed: it exited with code 7 .*boom: bad config.*restarted on the next edit/,
    );
    const second = await c.check();
    assert.equal(second?.status, "unavailable");
    assert.match(
      second?.reason ?? "",
      /pyright crashed again: it exited with code 7.*diagnostics are off for this session/,
    );
    const third = await c.check();
    assert.equal(third?.status, "unavailable");
    assert.ok((third?.durationMs ?? 1e9) < 100, "no third start");
  } finally {
    await c.close();
  }
});

test("a server that never reports: 'pending' after the wait, and it is gone after close", async () => {
  const script = fakeServer("silent", { onOpen: "" });
  const c = localCase({
    launchOverride: { pyright: { argv: [process.execPath, script] } },
    startWaitMs: 3000,
    waitMs: 1500,
  });
  try {
    const first = await c.check();
    assert.equal(first?.status, "pending", JSON.stringify(first));
    assert.match(first?.reason ?? "", /pyright had no answer within 3 s/);
    assert.deepEqual(processesWith(script).length, 1);
    const started = Date.now();
    const second = await c.check();
    assert.equal(second?.status, "pending");
    assert.match(second?.reason ?? "", /within 1\.5 s/);
    const took = Date.now() - started;
    assert.ok(took >= 1400 && took < 3000, `waited ${took} ms`);
  } finally {
    await c.close();
  }
  assert.deepEqual(processesWith(script), [], "the server was stopped with the session");
});

test("a server stuck before answering initialize: 'still starting', never a hang", async () => {
  const script = fakeServer("stuck", { hang: true, onOpen: "" });
  const c = localCase({
    launchOverride: { pyright: { argv: [process.execPath, script] } },
    startWaitMs: 1000,
    waitMs: 1000,
  });
  try {
    const started = Date.now();
    const r = await c.check();
    assert.equal(r?.status, "pending");
    assert.match(r?.reason ?? "", /pyright is still starting \(waited 1 s\)/);
    assert.ok(Date.now() - started < 2500);
  } finally {
    await c.close();
  }
  assert.deepEqual(processesWith(script), []);
});

test("an e2b sandbox: unavailable, and no sandbox is made for it", async () => {
  let made = 0;
  const d = new Diagnostics({
    sandbox: async () => {
      made++;
      throw new Error("not expected");
    },
    kind: () => "e2b",
  });
  const r = await d.check({ path: "a.ts", before: undefined, after: "x" });
  assert.equal(r?.status, "unavailable");
  assert.match(r?.reason ?? "", /the e2b sandbox cannot run a language server yet/);
  assert.equal(made, 0);
  await d.close();
});

test("read_file hands the file to its server at once (the edit after it finds it checked)", async () => {
  const marker = join(scratch, "opened.json");
  const script = fakeServer("opener", {
    onOpen: `import("node:fs").then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, JSON.stringify(p.textDocument)));`,
  });
  const ws = mkdtempSync(join(scratch, "prime-"));
  writeFileSync(join(ws, "m.py"), "x = 1\n");
  writeFileSync(join(ws, "notes.txt"), "x = 1\n");
  const sandbox = new LocalSandbox({ workspace: ws });
  const diagnostics = new Diagnostics({
    sandbox: async () => sandbox,
    launchOverride: { pyright: { argv: [process.execPath, script] } },
  });
  try {
    const ctx = context(realpathSync(ws), diagnostics, sandbox);
    await readFileTool.execute({ path: "notes.txt" }, ctx);
    const r = await readFileTool.execute({ path: "m.py" }, ctx);
    assert.match(r.output, /x = 1/);
    const deadline = Date.now() + 20_000;
    while (!existsSync(marker) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const opened = JSON.parse(readFileSync(marker, "utf8"));
    assert.equal(opened.uri, pathToFileURL(join(realpathSync(ws), "m.py")).href);
    assert.equal(opened.text, "x = 1\n");
    assert.equal(opened.languageId, "python");
  } finally {
    await diagnostics.close();
    await sandbox.destroy();
  }
});
