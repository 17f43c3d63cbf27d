// An older @e2b/code-interpreter, 2.7.0 (pinned as "code-interpreter-older": the first that sends
// its calls to E2B_SANDBOX_URL; earlier ones address https://49999-<id>.<domain>, which needs
// wildcard DNS), against hands serve on bwrap: results, display data, errors, contexts, timeouts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "code-interpreter-older";
import { startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("@e2b/code-interpreter 2.7.0 against hands serve", { skip, timeout: 120_000 }, () => {
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

  it("runs cells with rich and display results, errors and contexts", async () => {
    const results: boolean[] = [];
    const ex = await sb.runCode(
      'from IPython.display import Markdown, display\nprint("hi")\ndisplay(Markdown("**md**"))\nclass H:\n    def _repr_html_(self): return "<p>h</p>"\n    def __repr__(self): return "H()"\nH()',
      { onResult: (r) => void results.push(r.isMainResult) },
    );
    assert.deepEqual(ex.logs.stdout, ["hi\n"]);
    assert.deepEqual(results, [false, true]);
    assert.equal(ex.results[0]?.markdown, "**md**");
    assert.equal(ex.results[1]?.html, "<p>h</p>");
    assert.equal(ex.text, "H()");
    assert.equal((await sb.runCode("[][1]")).error?.name, "IndexError");
    const ctx = await sb.createCodeContext({ cwd: "/tmp" });
    await sb.runCode("z = 5", { context: ctx });
    assert.equal((await sb.runCode("z * 2", { context: ctx })).text, "10");
    assert.equal((await sb.runCode("z")).error?.name, "NameError", "the default context is another kernel");
    await assert.rejects(sb.runCode("import time\ntime.sleep(30)", { context: ctx, timeoutMs: 800 }));
    assert.equal(
      (await sb.runCode("z", { context: ctx })).text,
      "5",
      "an interrupted cell keeps the context",
    );
    await sb.removeCodeContext(ctx.id);
  });
});
