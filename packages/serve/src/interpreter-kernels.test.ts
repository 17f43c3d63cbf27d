// The code interpreter's real Jupyter kernels through the official @e2b/code-interpreter SDK, on
// bwrap and docker: IPython (indented cells, `!` shell escapes, display(), PIL's show(), a
// matplotlib chart as structured data, a DataFrame as `data`), Deno for JavaScript and
// TypeScript, Bash, R; env vars for one cell; languages the server cannot run refused the way
// the SDK reports; a killed sandbox's runCode rejecting; an interrupted cell keeping its context.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { Sandbox } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { dockerSkip, startTestServe, type TestServe } from "./test-support.js";

// dockerd may keep a destroyed container's exec stream open (see e2b-docker.test.ts): leave once
// the results are out.
after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

const bwrapSkip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;
/** bwrap sandboxes see the host's /usr: its Jupyter packages, R and Deno. */
function hostKernelsSkip(): string | false {
  if (bwrapSkip) return bwrapSkip;
  for (const p of [
    "/usr/lib/python3/dist-packages/ipykernel",
    "/usr/lib/python3/dist-packages/jupyter_client",
  ])
    if (!existsSync(p)) return `${p} is missing (scripts/test-env.sh installs it)`;
  return false;
}
const hostR = existsSync("/usr/lib/R/site-library/IRkernel");
const hostDeno = existsSync("/usr/local/bin/deno");

for (const [template, skip, hasR, hasDeno] of [
  ["bwrap", hostKernelsSkip(), hostR, hostDeno],
  ["docker", await dockerSkip(), true, true],
] as const) {
  describe(`code interpreter kernels (${template})`, { skip, timeout: 300_000 }, () => {
    let s: TestServe;
    let sb: Sandbox;
    before(async () => {
      s = await startTestServe();
      sb = await Sandbox.create(template, { envs: { FROM_CREATE: "created" } });
    });
    after(async () => {
      await sb?.kill().catch(() => {});
      await s?.stop();
    });

    it("python is IPython: indented cells, ! shell escapes, display() and the last value", async () => {
      const indented = await sb.runCode("\n    x = 6\n    if x:\n        print('six')\n    x * 7\n    ");
      assert.equal(indented.error, undefined, indented.error?.traceback);
      assert.deepEqual(indented.logs.stdout, ["six\n"]);
      assert.equal(indented.text, "42");
      const pwd = await sb.runCode("!pwd");
      const home = (await sb.commands.run("pwd")).stdout.trim();
      assert.equal(pwd.logs.stdout.join("").trim(), home);
      const shown = await sb.runCode(
        "from IPython.display import display, HTML\ndisplay(HTML('<b>x</b>'))\n'quoted'",
      );
      assert.equal(shown.results.length, 2);
      assert.equal(shown.results[0]?.html, "<b>x</b>");
      assert.equal(shown.results[0]?.isMainResult, false);
      assert.equal(shown.text, "quoted", "a string's text comes without its quotes, as E2B's");
      const err = await sb.runCode("def f():\n    return 1 / 0\nf()");
      assert.equal(err.error?.name, "ZeroDivisionError");
      assert.equal(err.error?.value, "division by zero");
      assert.match((err.error?.traceback ?? "").replace(/\x1b\[[0-9;]*m/g, ""), /return 1 \/ 0/);
    });

    it("a matplotlib bar chart comes back as a chart and a PNG; a DataFrame as data", async () => {
      const chart = await sb.runCode(
        "import matplotlib.pyplot as plt\nplt.bar(['a', 'b', 'c'], [3, 1, 2], label='sold')\nplt.title('Sales')\nplt.xlabel('Item')\nplt.ylabel('Count (units)')\nplt.show()",
      );
      assert.equal(chart.error, undefined, chart.error?.traceback);
      const r = chart.results[0];
      assert.ok(r?.png?.startsWith("iVBORw0KGgo"), "a PNG image");
      assert.deepEqual(r?.extra, {}, "the chart is not an unknown format");
      const c = r?.chart as unknown as Record<string, unknown> & { elements: Array<Record<string, unknown>> };
      assert.equal(c.type, "bar");
      assert.equal(c.title, "Sales");
      assert.equal(c.x_label, "Item");
      assert.equal(c.y_unit, "units");
      assert.deepEqual(
        c.elements.map((e) => [e.label, e.value, e.group]),
        [
          ["a", 3, "sold"],
          ["b", 1, "sold"],
          ["c", 2, "sold"],
        ],
      );
      const line = await sb.runCode(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [2, 4, 8], label='up')\nax.set_yscale('log')\nfig",
      );
      const lc = line.results.find((x) => x.chart)?.chart as unknown as Record<string, unknown> & {
        elements: Array<{ label: string; points: unknown[] }>;
      };
      assert.equal(lc.type, "line");
      assert.equal(lc.y_scale, "log");
      assert.deepEqual(lc.elements[0]?.points, [
        [1, 2],
        [2, 4],
        [3, 8],
      ]);
      const frame = await sb.runCode("import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', None]})");
      assert.equal(frame.error, undefined, frame.error?.traceback);
      assert.deepEqual(frame.results[0]?.data, {
        columns: ["a", "b"],
        index: [0, 1],
        data: [
          [1, "x"],
          [2, null],
        ],
      });
      assert.match(frame.results[0]?.html ?? "", /<table/);
      const image = await sb.runCode(
        "from PIL import Image\nImage.new('RGB', (4, 4), 'red').show()\nprint('done')",
      );
      assert.ok(image.results[0]?.png, "PIL's show() is a PNG result");
      assert.deepEqual(image.logs.stdout, ["done\n"]);
    });

    it("env vars: the sandbox's, and a cell's own for that cell only", async () => {
      assert.equal((await sb.runCode("import os\nos.environ['FROM_CREATE']")).text, "created");
      const once = await sb.runCode("import os\nos.environ.get('ONCE')", {
        envs: { ONCE: "1", FROM_CREATE: "x" },
      });
      assert.equal(once.text, "1");
      assert.equal((await sb.runCode("os.environ.get('ONCE', 'unset')")).text, "unset");
      assert.equal((await sb.runCode("os.environ['FROM_CREATE']")).text, "created");
      // (A 512 MB sandbox holds IPython with pandas, Deno, IRkernel and Bash's kernel only just:
      // each test frees its kernel for the next.)
      await sb.removeCodeContext("default");
    });

    it("bash: a shell that keeps its variables, with the exit status as the error", async () => {
      const a = await sb.runCode("X=41; echo start", { language: "bash" });
      assert.deepEqual(a.logs.stdout, ["start\n"]);
      const b = await sb.runCode("echo $((X + 1)) $ONCE; echo oops >&2; printf tail", {
        language: "bash",
        envs: { ONCE: "per-cell" },
      });
      assert.equal(b.logs.stdout.join(""), "42 per-cell\ntail");
      assert.deepEqual(b.logs.stderr, ["oops\n"]);
      assert.equal(
        (await sb.runCode('echo "$ONCE"gone', { language: "bash" })).logs.stdout.join(""),
        "gone\n",
        "the cell's env var is gone after it",
      );
      const failed = await sb.runCode("false", { language: "bash" });
      assert.equal(failed.error?.name, "ExitCode");
      await sb.removeCodeContext("default-bash");
    });

    // Deno's kernel sends a cell's output and value from a queue of its own, at times after the
    // cell's idle status and labelled with the request sent next (the bridge's marker request
    // finds their end): many lines first make them late every time.
    it("a cell's own env vars in Deno's kernel, put back after it; late output arrives whole", {
      skip: hasDeno ? false : "no /usr/local/bin/deno",
    }, async () => {
      const env = await sb.runCode("process.env.ONCE", { language: "js", envs: { ONCE: "js-env" } });
      assert.equal(env.text, "js-env");
      assert.equal((await sb.runCode("process.env.ONCE ?? 'gone'", { language: "js" })).text, "gone");
      const many = await sb.runCode("for (let i = 0; i < 2000; i++) console.log(i); process.env.ONCE", {
        language: "js",
        envs: { ONCE: "after-lines" },
      });
      assert.equal(many.text, "after-lines");
      const lines = many.logs.stdout.join("").split("\n");
      assert.equal(lines.length, 2001);
      assert.equal(lines[1999], "1999");
      const next = await sb.runCode("'next'", { language: "js" });
      assert.deepEqual([next.text, next.logs.stdout, next.results.length], ["next", [], 1]);
    });

    it("javascript and typescript run in Deno's kernel", {
      skip: hasDeno ? false : "no /usr/local/bin/deno",
    }, async () => {
      const js = await sb.runCode("const n = 20 + 1; console.log('n', n); n * 2", { language: "js" });
      assert.equal(js.error, undefined, js.error?.traceback);
      assert.deepEqual(js.logs.stdout, ["n 21\n"]);
      assert.equal(js.text, "42");
      assert.equal((await sb.runCode("n + 1", { language: "javascript" })).text, "22", "state persists");
      assert.equal((await sb.runCode("process.env.FROM_CREATE", { language: "js" })).text, "created");
      const thrown = await sb.runCode("throw new TypeError('bad')", { language: "js" });
      assert.equal(thrown.error?.name, "TypeError");
      assert.ok((await sb.listCodeContexts()).some((c) => c.language === "javascript"));
      // One Deno kernel at a time fits this 512 MB sandbox beside Python's (~280 MB each): a
      // second is refused with 429 (interpreter/service.ts), so JavaScript's goes first.
      await sb.removeCodeContext("default-javascript");
      const ts = await sb.runCode("const m: string = 'typed'; await Promise.resolve(m)", { language: "ts" });
      assert.equal(ts.error, undefined, ts.error?.traceback);
      assert.equal(ts.text, "typed");
      await sb.removeCodeContext("default-typescript");
    });

    it("r runs in IRkernel", { skip: hasR ? false : "no IRkernel on this host" }, async () => {
      const r = await sb.runCode('x <- c(1, 2, 3)\nprint(sum(x))\nSys.getenv("ONCE")', {
        language: "r",
        envs: { ONCE: "r-env" },
      });
      assert.equal(r.error, undefined, r.error?.traceback);
      assert.deepEqual(r.logs.stdout, ["[1] 6\n"]);
      // (IRkernel shows a value as display data, not as an execute result.)
      assert.equal(r.results[0]?.text, '[1] "r-env"');
      assert.equal(
        (await sb.runCode('Sys.getenv("ONCE", unset = "none")', { language: "r" })).results[0]?.text,
        '[1] "none"',
      );
      await sb.removeCodeContext("default-r");
    });

    it("refuses what it cannot run with the SDK's errors", async () => {
      // The SDK reports a 400 by its status only (the reason is in the body, for other clients).
      await assert.rejects(sb.runCode("class A {}", { language: "java" }), /400/);
      await assert.rejects(sb.createCodeContext({ language: "cobol" }), /400/);
      const ctx = await sb.createCodeContext();
      // (Both at once: the SDK's types forbid it, so the call is typed loosely.)
      const both = { context: ctx, language: "python" } as unknown as { language: "python" };
      await assert.rejects(sb.runCode("1", both), /context or language/);
      await assert.rejects(sb.runCode("1", { context: { ...ctx, id: "no-such" } }), /not found/);
      await sb.removeCodeContext(ctx.id);
    });

    it("a timeout interrupts the cell and the context carries on", async () => {
      const ctx = await sb.createCodeContext();
      await sb.runCode("kept = 'yes'", { context: ctx });
      await assert.rejects(sb.runCode("import time\ntime.sleep(60)", { context: ctx, timeoutMs: 2000 }));
      const next = await sb.runCode("kept", { context: ctx, timeoutMs: 30_000 });
      assert.equal(next.text, "yes");
      await sb.restartCodeContext(ctx);
      assert.equal((await sb.runCode("kept", { context: ctx })).error?.name, "NameError");
      await sb.removeCodeContext(ctx);
    });

    it("runCode on a sandbox killed while it runs rejects", async () => {
      const other = await Sandbox.create(template);
      await other.runCode("1");
      const running = other.runCode("import time\ntime.sleep(120)", { timeoutMs: 120_000 });
      const outcome = running.then(
        () => "resolved",
        (e: Error) => e.message,
      );
      await new Promise((r) => setTimeout(r, 1000));
      await other.kill();
      assert.match(await outcome, /killed|not found|timeout/i);
    });
  });
}
