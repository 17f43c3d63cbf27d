// @e2b/code-interpreter, unmodified, against hands serve (bwrap): runCode's stdout and stderr
// (streamed while the cell runs), the last expression as the main result in every notebook
// format, errors with their traceback, timeouts that
// interrupt, contexts (charts, DataFrames and other kernels: interpreter-kernels.test.ts). The latest SDK
// and an older one, 2.7.0 (pinned as "code-interpreter-older": the first that sends its calls to
// E2B_SANDBOX_URL; earlier ones address https://49999-<id>.<domain>, which needs wildcard DNS).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Result, Sandbox } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox as OlderSandbox } from "code-interpreter-older";
import { startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** Text without the ANSI colours of IPython's tracebacks. */
const plain = (s: string | undefined) => (s ?? "").replace(/\x1b\[[0-9;]*m/g, "");

let s: TestServe | undefined;
before(async () => {
  if (!skip) s = await startTestServe();
});
after(async () => {
  await s?.stop();
});

describe("@e2b/code-interpreter against hands serve", { skip, timeout: 120_000 }, () => {
  let sb: Sandbox;
  before(async () => {
    sb = await Sandbox.create();
  });
  after(async () => {
    await sb?.kill().catch(() => {});
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
    assert.match(plain(ex.error?.traceback), /in f\(\).*ZeroDivisionError/s);
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
    await assert.rejects(sb.runCode("1", { language: "java", requestTimeoutMs: 2000 }), /400/);
  });

  it("sends every _repr_*_ format of the last expression, and other MIME types as extra", async () => {
    const ex = await sb.runCode(`
class Rich:
    def __repr__(self): return "Rich()"
    def _repr_html_(self): return "<b>rich</b>"
    def _repr_markdown_(self): return "**rich**"
    def _repr_svg_(self): return "<svg xmlns='http://www.w3.org/2000/svg'/>"
    def _repr_png_(self): return b"\\x89PNG\\r\\n\\x1a\\nfake"
    def _repr_jpeg_(self): return (b"\\xff\\xd8\\xff", {"width": 1})
    def _repr_pdf_(self): return b"%PDF-1.4"
    def _repr_latex_(self): return r"$\\alpha$"
    def _repr_json_(self): return {"a": [1, 2], "b": None}
    def _repr_javascript_(self): return "console.log(1)"
class Bundle:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": "bundle", "text/html": "<i>b</i>", "application/vnd.hands+json": {"k": 1}}
r = Rich()
r`);
    assert.equal(ex.error, undefined);
    assert.equal(ex.results.length, 1);
    const r = ex.results[0] as Result;
    assert.equal(r.isMainResult, true);
    assert.equal(r.text, "Rich()");
    assert.equal(r.html, "<b>rich</b>");
    assert.equal(r.markdown, "**rich**");
    assert.equal(r.svg, "<svg xmlns='http://www.w3.org/2000/svg'/>");
    assert.equal(Buffer.from(r.png ?? "", "base64").toString("latin1"), "\x89PNG\r\n\x1a\nfake");
    assert.equal(Buffer.from(r.jpeg ?? "", "base64").toString("hex"), "ffd8ff");
    assert.equal(Buffer.from(r.pdf ?? "", "base64").toString(), "%PDF-1.4");
    assert.equal(r.latex, "$\\alpha$");
    assert.deepEqual(r.json, { a: [1, 2], b: null });
    assert.equal(r.javascript, "console.log(1)");
    assert.deepEqual(r.formats(), [
      "html",
      "markdown",
      "svg",
      "png",
      "jpeg",
      "pdf",
      "latex",
      "json",
      "javascript",
    ]);
    const b = (await sb.runCode("Bundle()")).results[0] as Result;
    assert.equal(b.text, "bundle");
    assert.equal(b.html, "<i>b</i>");
    assert.deepEqual(b.extra, { "application/vnd.hands+json": { k: 1 } });
    // A string's text has no quotes (as E2B's); None and a trailing ';' give no result.
    assert.equal((await sb.runCode("'quoted'")).text, "quoted");
    assert.equal((await sb.runCode("None")).results.length, 0);
    assert.equal((await sb.runCode("1 + 1;")).results.length, 0);
  });

  it("streams stdout and stderr while the cell runs; errors carry name, value, traceback", async () => {
    const t0 = Date.now();
    const times: number[] = [];
    const ex = await sb.runCode(
      'import sys, time\nprint("early", flush=True)\nprint("warn", file=sys.stderr)\ntime.sleep(1.5)\nprint("late")',
      {
        onStdout: () => void times.push(Date.now() - t0),
        onStderr: () => void times.push(Date.now() - t0),
      },
    );
    const total = Date.now() - t0;
    assert.deepEqual(ex.logs.stdout, ["early\n", "late\n"]);
    assert.deepEqual(ex.logs.stderr, ["warn\n"]);
    assert.ok((times[0] as number) < total - 1000, `first line streamed at ${times[0]} ms of ${total} ms`);
    const errors: string[] = [];
    const bad = await sb.runCode("def g(x):\n    return x['missing']\ng({})", {
      onError: (e) => void errors.push(e.name),
    });
    assert.equal(bad.error?.name, "KeyError");
    assert.equal(bad.error?.value, "'missing'");
    assert.match(
      plain(bad.error?.traceback),
      /line 3\n.*g\(\{\}\).*line 2, in g\(x\)\n.*return x\[.missing.\]/s,
    );
    assert.deepEqual(errors, ["KeyError"]);
  });

  it("counts executions per context", async () => {
    const ctx = await sb.createCodeContext();
    const first = await sb.runCode("1", { context: ctx });
    const second = await sb.runCode("2", { context: ctx });
    assert.equal(first.executionCount, 1);
    assert.equal(second.executionCount, 2);
    const elsewhere = await sb.runCode("3");
    assert.ok((elsewhere.executionCount ?? 0) > 2, "the default context counts its own cells");
    await sb.removeCodeContext(ctx);
  });

  it("a timeout interrupts the cell and keeps the context; one that ignores it loses its kernel", async () => {
    const ctx = await sb.createCodeContext();
    await sb.runCode("kept = 'yes'", { context: ctx });
    await assert.rejects(
      sb.runCode("import time\ntime.sleep(30)", { context: ctx, timeoutMs: 800 }),
      /timeout|abort/i,
    );
    const t0 = Date.now();
    assert.equal((await sb.runCode("kept", { context: ctx })).text, "yes");
    assert.ok(Date.now() - t0 < 3000, "the interrupted cell stopped at once");
    await assert.rejects(
      sb.runCode("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)", {
        context: ctx,
        timeoutMs: 800,
      }),
      /timeout|abort/i,
    );
    const t1 = Date.now();
    const next = await sb.runCode("kept", { context: ctx });
    // (A new IPython kernel starts in seconds; on a loaded machine in more.)
    assert.ok(Date.now() - t1 < 30_000, "the stuck kernel was killed after the grace period");
    assert.equal(next.error?.name, "NameError", "a killed kernel comes back empty");
    assert.equal((await sb.runCode("6 * 7", { context: ctx })).text, "42");
    await sb.removeCodeContext(ctx);
  });
});

describe("@e2b/code-interpreter 2.7.0 against hands serve", { skip, timeout: 120_000 }, () => {
  let sb: OlderSandbox;
  before(async () => {
    sb = await OlderSandbox.create();
  });
  after(async () => {
    await sb?.kill().catch(() => {});
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
