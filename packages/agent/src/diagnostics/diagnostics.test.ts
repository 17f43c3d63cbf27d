// Diagnostics after edits against the real language servers (typescript-language-server and
// pyright from npm) running in a real bubblewrap sandbox, through the real write_file and
// edit_file tools; and the bad states (missing, crashing, silent, stuck servers) with small
// LSP servers of the test's own over stdio. The budgets are generous because a cold tsserver
// on a loaded 2-core machine takes tens of seconds; the bad-state tests use short ones.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
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
import {
  BwrapSandbox,
  checkBwrap,
  checkDocker,
  DockerSandbox,
  imageExists,
  imageTag,
  LocalSandbox,
  type Sandbox,
} from "@hands/sandbox";
import { editFileTool } from "../tools/edit-file.js";
import { readFileTool } from "../tools/read-file.js";
import type { ToolContext } from "../tools/types.js";
import { writeFileTool } from "../tools/write-file.js";
import { Diagnostics } from "./service.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-diag-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

function bwrapOrSkip(): string | undefined {
  const skip = (process.env["HANDS_SANDBOX_SKIP"] ?? "").split(",").includes("bwrap");
  if (skip) return "HANDS_SANDBOX_SKIP lists bwrap";
  const c = checkBwrap();
  if (!c.ok) throw new Error(`bwrap unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
  return undefined;
}

/** Why docker cannot be used here (a failure unless HANDS_SANDBOX_SKIP lists docker). */
async function dockerOrSkip(): Promise<string | undefined> {
  if ((process.env["HANDS_SANDBOX_SKIP"] ?? "").split(",").includes("docker"))
    return "HANDS_SANDBOX_SKIP lists docker";
  const c = await checkDocker();
  if (!c.ok) throw new Error(`docker unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
  if (!(await imageExists(imageTag())))
    throw new Error(`docker image ${imageTag()} missing (scripts/test-env.sh)`);
  return undefined;
}
const dockerSkip = await dockerOrSkip();

function context(workspace: string, diagnostics: Diagnostics, sandbox: Sandbox): ToolContext {
  return {
    workspace,
    readRoots: [],
    sandbox: async () => sandbox,
    signal: new AbortController().signal,
    diagnostics,
  };
}

function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

describe("real language servers in a bwrap sandbox", { skip: bwrapOrSkip() }, () => {
  const ws = join(scratch, "project");
  let sandbox: Sandbox;
  let diagnostics: Diagnostics;
  let ctx: ToolContext;
  before(async () => {
    write(ws, {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { strict: true, target: "es2022", module: "nodenext" },
      }),
      "src/lib.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/main.ts":
        'import { add } from "./lib.js";\n\nexport const total: number = add(1, 2);\nconsole.log(total);\n',
      "py/calc.py": "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n",
    });
    sandbox = await BwrapSandbox.create({ workspace: ws });
    diagnostics = new Diagnostics({ sandbox: async () => sandbox, startWaitMs: 180_000, waitMs: 60_000 });
    ctx = context(realpathSync(ws), diagnostics, sandbox);
  });
  after(async () => {
    await diagnostics.close();
    await sandbox.destroy();
  });

  test("a type error made by edit_file comes back in its result: file:line:column, code, message", async () => {
    const r = await editFileTool.execute(
      { path: "src/main.ts", old_string: "add(1, 2)", new_string: 'add(1, "2")' },
      ctx,
    );
    assert.equal(r.isError, undefined, r.output);
    assert.match(r.output, /1 new error from typescript-language-server after this edit:/);
    assert.match(
      r.output,
      /src\/main\.ts:3:37: TS2345 Argument of type 'string' is not assignable to parameter of type 'number'\./,
    );
    const d = r.data?.["diagnostics"] as { status: string; total: number };
    assert.deepEqual([d.status, d.total], ["ok", 1]);
  });

  test("a clean edit adds nothing; an error already there is not reported again, even moved down", async () => {
    const clean = await editFileTool.execute(
      {
        path: "src/main.ts",
        old_string: 'import { add } from "./lib.js";\n',
        new_string: 'import { add } from "./lib.js";\n// totals\n\n',
      },
      ctx,
    );
    assert.doesNotMatch(clean.output, /error|Diagnostics/, clean.output);
    const cleanReport = clean.data?.["diagnostics"] as { total: number } | undefined;
    assert.equal(cleanReport?.total, 0);
    // The TS2345 of the first test is still there (two lines lower): only the new one is listed.
    const r = await editFileTool.execute(
      { path: "src/main.ts", old_string: "console.log(total);", new_string: "console.log(totl);" },
      ctx,
    );
    assert.match(r.output, /1 new error/);
    assert.match(r.output, /src\/main\.ts:6:13: TS2552 Cannot find name 'totl'\. Did you mean 'total'\?/);
    assert.doesNotMatch(r.output, /TS2345/);
  });

  test("a change in one file that breaks its own calls is reported (arity)", async () => {
    const r = await writeFileTool.execute(
      {
        path: "src/lib.ts",
        content:
          "export function add(a: number, b: number): number {\n  return a + b;\n}\nexport const three = add(1);\n",
      },
      ctx,
    );
    assert.match(r.output, /src\/lib\.ts:4:22: TS2554 Expected 2 arguments, but got 1\./);
  });

  test("python: an undefined name and a wrong arity from pyright, a clean rewrite gives nothing", async () => {
    const bad = await editFileTool.execute(
      {
        path: "py/calc.py",
        old_string: "print(area(2, 3))",
        new_string: "print(area(2))\nprint(volume(2, 3))",
      },
      ctx,
    );
    assert.match(bad.output, /2 new errors from pyright after this edit:/, bad.output);
    assert.match(bad.output, /py\/calc\.py:5:7: reportCallIssue Argument missing for parameter "h"/);
    assert.match(bad.output, /py\/calc\.py:6:7: reportUndefinedVariable "volume" is not defined/);
    const fixed = await writeFileTool.execute(
      { path: "py/calc.py", content: "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n" },
      ctx,
    );
    assert.doesNotMatch(fixed.output, /error|Diagnostics/, fixed.output);
  });

  test("a new file: all its errors are new; a file no server reads is not checked", async () => {
    const r = await writeFileTool.execute(
      { path: "src/new.ts", content: "const n: number = 'x';\nexport {};\n" },
      ctx,
    );
    assert.match(r.output, /src\/new\.ts:1:7: TS2322 Type 'string' is not assignable to type 'number'\./);
    const txt = await writeFileTool.execute({ path: "notes.txt", content: "const n: number = 'x';\n" }, ctx);
    assert.equal(txt.data?.["diagnostics"], undefined);
  });
});

const hostileBackends: Array<{
  kind: string;
  skip: string | undefined;
  make: (ws: string) => Promise<Sandbox>;
}> = [
  { kind: "bwrap", skip: bwrapOrSkip(), make: (ws) => BwrapSandbox.create({ workspace: ws }) },
  { kind: "docker", skip: dockerSkip, make: (ws) => DockerSandbox.create({ workspace: ws }) },
];

for (const backend of hostileBackends)
  describe(`the workspace's own typescript runs inside the ${backend.kind} sandbox, never on the host`, {
    skip: backend.skip,
  }, () => {
    test("a hostile node_modules/typescript/lib/tsserver.js writes only where the sandbox lets it", async () => {
      const ws = join(scratch, `hostile-${backend.kind}`);
      const hostMarker = join(scratch, `host-marker-${backend.kind}`);
      // What tsserver.js does when typescript-language-server starts it: write two markers.
      write(ws, {
        "tsconfig.json": "{}",
        "a.ts": "export const a = 1;\n",
        "node_modules/typescript/package.json": JSON.stringify({ name: "typescript", version: "5.9.3" }),
        "node_modules/typescript/lib/tsserver.js": `const fs = require("fs");
fs.writeFileSync("/workspace/ran-inside", String(process.getuid()));
try { fs.writeFileSync(${JSON.stringify(hostMarker)}, "escaped"); } catch {}
try { fs.writeFileSync("/run/hands/lsp/typescript/lib/tsserver.js", "tampered"); } catch {}
setInterval(() => {}, 1000);
`,
      });
      const sandbox = await backend.make(realpathSync(ws));
      const diagnostics = new Diagnostics({
        sandbox: async () => sandbox,
        startWaitMs: 60_000,
        waitMs: 5_000,
      });
      try {
        const started = Date.now();
        const r = await diagnostics.check({
          path: "a.ts",
          before: "export const a = 1;\n",
          after: "export const a = 2;\n",
        });
        assert.ok(r && r.status !== "ok", JSON.stringify(r));
        assert.ok(Date.now() - started < 70_000, "bounded");
        assert.ok(existsSync(join(ws, "ran-inside")), "the workspace's tsserver.js was the one started");
        assert.notEqual(readFileSync(join(ws, "ran-inside"), "utf8"), "0", "not as root");
        assert.equal(existsSync(hostMarker), false, "it could not write outside the workspace");
        // Nor change the server Hands gave the sandbox (read-only there).
        const shipped = await sandbox.exec("head -c 8 /run/hands/lsp/typescript/lib/tsserver.js || true");
        assert.doesNotMatch(shipped.stdout, /tampered/);
        const hostCopy = join(
          createRequire(import.meta.url).resolve("typescript/package.json"),
          "../lib/tsserver.js",
        );
        assert.doesNotMatch(readFileSync(hostCopy, "utf8").slice(0, 16), /tampered/);
      } finally {
        await diagnostics.close();
        await sandbox.destroy();
      }
    });
  });

describe("real language servers in a docker sandbox (node and the servers copied into the container)", {
  skip: dockerSkip,
}, () => {
  test("a TypeScript and a Python error after write_file, from servers in the container", async () => {
    const ws = realpathSync(mkdtempSync(join(scratch, "docker-")));
    write(ws, {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, module: "nodenext" } }),
      "a.ts": "export const a = 1;\n",
      "m.py": "def area(w, h):\n    return w * h\n",
    });
    const sandbox = await DockerSandbox.create({ workspace: ws });
    const diagnostics = new Diagnostics({
      sandbox: async () => sandbox,
      startWaitMs: 120_000,
      waitMs: 30_000,
    });
    const ctx = context(ws, diagnostics, sandbox);
    try {
      const ts = await writeFileTool.execute(
        { path: "a.ts", content: "export const a: number = 'x';\n" },
        ctx,
      );
      assert.match(
        ts.output,
        /a\.ts:1:14: TS2322 Type 'string' is not assignable to type 'number'\./,
        ts.output,
      );
      const py = await writeFileTool.execute(
        { path: "m.py", content: "def area(w, h):\n    return w * h\n\n\nprint(area(2))\n" },
        ctx,
      );
      assert.match(py.output, /m\.py:5:7: reportCallIssue Argument missing for parameter "h"/, py.output);
      // The servers are processes of the container (its user), not of this host's session.
      const ps = await sandbox.exec("ps -eo user:20,args | grep -c '[l]angserver.index.js'");
      assert.equal(ps.stdout.trim(), "1", ps.stdout + ps.stderr);
      const mine = await sandbox.exec("touch /run/hands/lsp/x 2>&1; ls -ld /run/hands/lsp");
      assert.match(mine.stdout, /Permission denied/);
      assert.match(mine.stdout, /^dr[-w]xr-xr-x \d+ root root/m);
    } finally {
      await diagnostics.close();
      await sandbox.destroy();
    }
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
