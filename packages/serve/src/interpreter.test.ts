// @e2b/code-interpreter, unmodified, against hands serve: runCode's stdout, stderr, the last
// expression as the main result, errors with their traceback, and contexts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Sandbox } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("@e2b/code-interpreter against hands serve", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  before(async () => {
    s = await startTestServe();
    sb = await Sandbox.create();
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  it("runs a cell: stdout, stderr, the last expression as the main result", async () => {
    const out: string[] = [];
    const ex = await sb.runCode(
      'import sys, os\nprint("hello")\nprint("warn", file=sys.stderr)\nos.system("echo from-child")\nx = 6 * 7\nx',
      {
        onStdout: (m) => void out.push(m.line),
      },
    );
    assert.deepEqual(ex.logs.stdout.join(""), "hello\nfrom-child\n");
    assert.deepEqual(ex.logs.stderr, ["warn\n"]);
    assert.equal(ex.text, "42");
    assert.equal(ex.results.length, 1);
    assert.equal(ex.results[0]?.isMainResult, true);
    assert.equal(ex.error, undefined);
    assert.equal(out.join(""), "hello\nfrom-child\n");
  });

  it("keeps variables between cells and reports errors with a traceback", async () => {
    await sb.runCode("counter = 10");
    assert.equal((await sb.runCode("counter + 1")).text, "11");
    const ex = await sb.runCode("def f():\n    return 1 / 0\nf()");
    assert.equal(ex.error?.name, "ZeroDivisionError");
    assert.equal(ex.error?.value, "division by zero");
    assert.match(ex.error?.traceback ?? "", /in f\n.*ZeroDivisionError/s);
    assert.equal(ex.text, undefined);
    const syntax = await sb.runCode("def (");
    assert.equal(syntax.error?.name, "SyntaxError");
    assert.equal((await sb.runCode("counter")).text, "10", "an error does not lose the context");
  });

  it("passes env vars for one cell only", async () => {
    assert.equal(
      (await sb.runCode('import os\nos.environ.get("CELL_VAR")', { envs: { CELL_VAR: "v1" } })).text,
      "v1",
    );
    assert.equal((await sb.runCode('os.environ.get("CELL_VAR")')).text, undefined);
  });

  it("isolates contexts, lists, restarts and removes them", async () => {
    const a = await sb.createCodeContext();
    const b = await sb.createCodeContext({ cwd: "/tmp" });
    assert.equal(b.cwd, "/tmp");
    await sb.runCode("v = 'in a'", { context: a });
    assert.equal((await sb.runCode("v", { context: a })).text, "in a");
    assert.equal((await sb.runCode("v", { context: b })).error?.name, "NameError");
    assert.equal((await sb.runCode("import os\nos.getcwd()", { context: b })).text, "/tmp");
    const ids = (await sb.listCodeContexts()).map((c) => c.id);
    assert.ok(ids.includes(a.id) && ids.includes(b.id));
    await sb.restartCodeContext(a);
    assert.equal((await sb.runCode("v", { context: a })).error?.name, "NameError", "a restart forgets");
    await sb.removeCodeContext(b);
    assert.ok(!(await sb.listCodeContexts()).some((c) => c.id === b.id));
    // (A short requestTimeoutMs: the SDK leaves its request timer running when a call fails.)
    await assert.rejects(sb.runCode("1", { context: b, requestTimeoutMs: 2000 }), /not found/);
    await assert.rejects(sb.runCode("1", { language: "r", requestTimeoutMs: 2000 }), /400/);
  });
});
