import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { executePythonTool } from "./execute-python.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("execute_python", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
  });
  after(() => t.cleanup());

  it("runs code and returns its output", async () => {
    const r = await executePythonTool.execute(
      { code: "import os\nprint(sum(range(11)))\nprint(os.getcwd())" },
      t,
    );
    assert.equal(r.output, `55\n${t.workspace}`);
    // no temp files left in the workspace
    assert.deepEqual(readdirSync(t.workspace), []);
  });

  it("a syntax error shows the traceback and a non-zero exit code", async () => {
    const r = await executePythonTool.execute({ code: "def f(:\n    pass\n" }, t);
    assert.match(r.output, /^exit code: 1\nstderr:\n/);
    assert.match(r.output, /SyntaxError/);
    assert.equal(r.data?.["exitCode"], 1);
  });

  it("a runtime error shows the traceback after earlier output", async () => {
    const r = await executePythonTool.execute({ code: "print('start')\nraise ValueError('boom')" }, t);
    assert.match(r.output, /^exit code: 1\nstdout:\nstart\nstderr:\nTraceback \(most recent call last\):/);
    assert.match(r.output, /ValueError: boom$/);
  });

  it("times out", async () => {
    const r = await executePythonTool.execute(
      { code: "import time\nprint('x', flush=True)\ntime.sleep(30)", timeout: 1 },
      t,
    );
    assert.match(r.output, /TIMED OUT after 1 s/);
    assert.equal(r.data?.["timedOut"], true);
  });
});
