// The terminal view typed at for real: `hands` in tmux (send-keys, a bracketed paste, resize),
// the screen read with capture-pane (with -e for colours), the model scripted over HTTP, and
// what the model server received checked request by request.
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { hasTmux, TmuxSession } from "./tmux.js";

const BIN = fileURLToPath(new URL("../../bin/hands.js", import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-tui-test-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const open: { tmux: TmuxSession; server: ScriptedServer }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.tmux.kill();
    await o.server.close();
  }
});

const READY = /^› *$/m;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `text` drawn in SGR colour `code` (tmux may add other attributes between them). */
const painted = (code: string, text: string) =>
  new RegExp(`\x1b\\[${code}m(?:\x1b\\[[0-9;]*m)*${text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`);

interface Started {
  server: ScriptedServer;
  tmux: TmuxSession;
  workspace: string;
  data: string;
}

async function start(
  script: Parameters<typeof startScriptedServer>[0],
  opts: {
    args?: string[];
    workspace?: string;
    columns?: number;
    color?: boolean;
    env?: Record<string, string>;
    server?: ScriptedServer;
    model?: string | null;
  } = {},
): Promise<Started> {
  assert.ok(hasTmux(), "tmux is needed for these tests: run scripts/test-env.sh");
  const server = opts.server ?? (await startScriptedServer(script));
  const workspace = opts.workspace ?? mkdtempSync(join(scratch, "ws-"));
  const data = join(scratch, `${workspace.split("/").pop()}-data`);
  const tmux = new TmuxSession(opts.columns ?? 120, 40);
  open.push({ tmux, server });
  const model =
    opts.model === undefined ? ["--model", "scripted-model"] : opts.model ? ["--model", opts.model] : [];
  tmux.start([process.execPath, BIN, ...model, ...(opts.args ?? [])], workspace, {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: scratch,
    TERM: "xterm-256color",
    HANDS_DATA_DIR: data,
    XDG_CONFIG_HOME: join(scratch, "config"),
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "sk-test",
    ...(opts.color ? {} : { NO_COLOR: "1" }),
    ...opts.env,
  });
  await tmux.waitFor(READY);
  return { server, tmux, workspace, data };
}

const posts = (server: ScriptedServer) => server.requests.filter((r) => r.method === "POST");
/** The text of the last user message of request `i`. */
function lastUser(server: ScriptedServer, i: number): string {
  const msgs = (posts(server)[i]?.body?.messages ?? []) as { role: string; content: unknown }[];
  return String(msgs.filter((m) => m.role === "user").at(-1)?.content ?? "");
}

async function until(ok: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("the terminal view", { timeout: 300_000 }, () => {
  test("a pasted 50-line block is one request, shown as a paste marker until it is sent", async () => {
    const { server, tmux } = await start([{ content: "Read all fifty." }, { content: "unused" }]);
    const block = Array.from({ length: 50 }, (_, i) => `pasted line ${i + 1}`).join("\n");
    tmux.paste(block);
    await tmux.waitFor(/^› \[pasted 50 lines #1\]/m);
    await sleep(300);
    assert.equal(posts(server).length, 0, "nothing is sent before Enter");
    tmux.keys("Enter");
    await tmux.waitFor(/Read all fifty\.[\s\S]*^› *$/m);
    await sleep(500);
    assert.equal(posts(server).length, 1, "exactly one request for the whole paste");
    assert.equal(lastUser(server, 0), block);
    const screen = tmux.screen();
    assert.match(screen, /› pasted line 1\n {2}pasted line 2[\s\S]*… 44 more lines/);
  });

  test("a paste expands into the editor with Ctrl-X before it is sent", async () => {
    const { server, tmux } = await start([{ content: "ok" }]);
    tmux.paste(Array.from({ length: 12 }, (_, i) => `row ${i}`).join("\n"));
    await tmux.waitFor(/\[pasted 12 lines #1\]/);
    tmux.keys("C-x");
    await tmux.waitFor(/^› row 0\n {2}row 1\n/m);
    tmux.type(" and more", false);
    tmux.keys("Enter");
    await tmux.waitFor(/^ok$/m);
    assert.equal(
      lastUser(server, 0),
      `${Array.from({ length: 12 }, (_, i) => `row ${i}`).join("\n")} and more`,
    );
  });

  test("typed-ahead requests are queued and shown; Up takes the last one back; Esc stops the run and drops the queue", async () => {
    const { server, tmux } = await start([
      { content: "Working on the first one, slowly", chunkSize: 8, stallAfterEvents: 4 },
      { content: "Did the edited one." },
    ]);
    tmux.type("first request");
    await tmux.waitFor(/Working/);
    tmux.type("second request");
    tmux.type("third request");
    await tmux.waitFor(/queued › second request\n.*queued › third request/);
    // Typed text goes to the editor, never into the spinner's line.
    const spinner = tmux.rows().find((r) => /Esc to stop/.test(r)) ?? "";
    assert.doesNotMatch(spinner, /request/);
    tmux.keys("Up");
    await tmux.waitFor(/^› third request *$/m);
    assert.doesNotMatch(tmux.rows().join("\n"), /queued › third/);
    tmux.type(" (edited)", false);
    tmux.keys("Escape");
    await tmux.waitFor(/Stopping… \(dropped 1 queued request\)[\s\S]*aborted/);
    await sleep(500);
    assert.equal(posts(server).length, 1, "the stopped run sent nothing more and the queue was dropped");
    assert.doesNotMatch(tmux.rows().join("\n"), /queued ›/);
    // The one taken back is still in the editor: sending it is the next request.
    tmux.keys("Enter");
    await tmux.waitFor(/Did the edited one\./);
    assert.equal(lastUser(server, 1), "third request (edited)");
  });

  test("Ctrl-C also stops the run and drops the queue", async () => {
    const { server, tmux } = await start(
      [
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "sleep 20" } }] },
        { content: "never" },
      ],
      { args: ["--approval", "auto", "--sandbox", "local"] },
    );
    tmux.type("wait");
    await tmux.waitFor(/⋯ run_command sleep 20/);
    tmux.type("queued one");
    await tmux.waitFor(/queued › queued one/);
    tmux.keys("C-c");
    await tmux.waitFor(/dropped 1 queued request[\s\S]*^› *$/m);
    await sleep(800);
    // The aborted tool call's result is written; no new model request is started for the queue.
    assert.equal(posts(server).length, 1);
  });

  for (const columns of [60, 200]) {
    test(`markdown streams rendered and highlighted at ${columns} columns, with nothing garbled`, async () => {
      const answer = [
        "# Results",
        "",
        "Some **bold words** and `inline code`.",
        "",
        "- first item",
        "- second item",
        "",
        "| name | value |",
        "|------|-------|",
        "| alpha | 1 |",
        "| beta | 2 |",
        "",
        "```ts",
        "const answer: number = 42; // the answer",
        'function greet() { return "hi"; }',
        "```",
        "",
        "That is all.",
      ].join("\n");
      const half =
        "Before the code:\n\n```python\ndef f(x):\n    return x + 1  # add\n\nclass Thing:\n    pass\n";
      const { tmux } = await start(
        [
          { content: answer, chunkSize: 5 },
          { content: `${half}more`, chunkSize: 4, stallAfterEvents: 30 },
        ],
        { columns, color: true },
      );
      tmux.type("show me");
      await tmux.waitFor(/That is all\./);
      const rows = tmux.rowsAnsi();
      const plain = tmux.rows();
      const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
      for (const r of plain) assert.ok(r.length <= columns, `a row wider than the terminal: ${r}`);
      assert.ok(!plain.some((r) => r.includes("**")), "bold is rendered, not printed");
      assert.ok(!plain.some((r) => r.startsWith("# ")), "the heading is rendered");
      // Code: each line exactly as written at column 0 (copies clean), coloured by language.
      const code = rows.find((r) => strip(r).startsWith("const answer"));
      assert.ok(code, `no code row:\n${plain.join("\n")}`);
      assert.equal(strip(code), "const answer: number = 42; // the answer");
      assert.match(code, painted("35", "const"), "the keyword is coloured");
      assert.match(code, painted("33", "42"), "the number is coloured");
      assert.match(code, painted("90", "// the answer"), "the comment is coloured");
      const fn = rows.find((r) => strip(r).startsWith("function greet"));
      assert.match(fn ?? "", painted("32", '"hi"'));
      assert.ok(
        !plain.some((r) => /[│┃]/.test(r) && /const answer|function greet/.test(r)),
        "no box characters in code",
      );
      const bold = rows.find((r) => strip(r).includes("bold words"));
      assert.match(bold ?? "", painted("1", "bold words"));
      assert.ok(
        plain.some((r) => /│ alpha +│ 1 +│/.test(r)),
        `the table is laid out:\n${plain.join("\n")}`,
      );
      assert.ok(plain.some((r) => /^- first item/.test(r)));
      // No raw escape text or doubled answer.
      assert.ok(!plain.some((r) => /\[[0-9;]+m/.test(r)), "no escape sequence printed as text");
      assert.equal(plain.filter((r) => r.includes("That is all.")).length, 1);

      // A fence still arriving: its lines so far, highlighted, and nothing else.
      tmux.type("again");
      await tmux.waitFor(/class Thing/);
      await sleep(400);
      const partial = tmux.rowsAnsi();
      const partialPlain = tmux.rows();
      const def = partial.find((r) => strip(r).startsWith("def f(x):"));
      assert.match(def ?? "", painted("35", "def"));
      assert.ok(
        partialPlain.some((r) => r === "    return x + 1  # add"),
        partialPlain.join("\n"),
      );
      for (const r of partialPlain) assert.ok(r.length <= columns);
      assert.equal(partialPlain.filter((r) => r.includes("Before the code:")).length, 1);
      assert.equal(partialPlain.filter((r) => r.startsWith("def f(x):")).length, 1);
    });
  }

  test("with NO_COLOR an answer is plain text: the markdown as written, no colours", async () => {
    const { tmux } = await start([
      { content: "Some **bold** and a fence:\n\n```ts\nconst x = 1;\n```\n\n- one" },
    ]);
    tmux.type("hi");
    await tmux.waitFor(/^- one$/m);
    const plain = tmux.rows();
    assert.ok(plain.includes("Some **bold** and a fence:"), plain.join("\n"));
    assert.ok(plain.includes("```ts") && plain.includes("const x = 1;"));
    for (const r of tmux.rowsAnsi().filter((r) => /bold|const x|one/.test(r)))
      assert.doesNotMatch(r, /\x1b\[(?:[0-9;]*;)?(3[0-9]|9[0-7]|1)m/, `a coloured row: ${JSON.stringify(r)}`);
  });

  test("the / menu lists commands with descriptions, filters fuzzily, and inserts the choice", async () => {
    const { tmux } = await start([]);
    tmux.type("/", false);
    const screen = await tmux.waitFor(/help +list the commands/);
    assert.match(screen, /compact +summarise the conversation/);
    tmux.type("dff", false);
    await tmux.waitFor(/^› \/dff/m);
    const menu = tmux.rows().filter((r) => /what this session changed/.test(r));
    assert.equal(menu.length, 1, tmux.rows().join("\n"));
    tmux.keys("Tab");
    await tmux.waitFor(/^› \/diff *$/m);
    tmux.keys("Enter");
    await tmux.waitFor(/No changes in this session\./);
  });

  test("/model names the model and lists the models the endpoint has", async () => {
    const server = await startScriptedServer({ script: [], model: "listed-model-x" });
    const { tmux } = await start([], { server, model: "chosen-model" });
    tmux.type("/model");
    const screen = await tmux.waitFor(/The endpoint has: listed-model-x/);
    assert.match(screen, /Model: chosen-model \(openai\)/);
  });

  test("@ completes workspace files (not ignored ones), attaches the chosen file, refuses a link out", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "greeting.txt"), "hello from the attached file\n");
    writeFileSync(join(ws, "secret-notes.txt"), "ignored\n");
    writeFileSync(join(ws, ".gitignore"), "secret-notes.txt\n");
    symlinkSync("/etc/passwd", join(ws, "passwd-link"));
    const { server, tmux } = await start([{ content: "Seen it." }, { content: "Not that one." }], {
      workspace: ws,
    });
    tmux.type("summarise @grt", false);
    await tmux.waitFor(/greeting\.txt.*src\/greeting\.txt/);
    tmux.type("", false);
    tmux.keys("Tab");
    await tmux.waitFor(/^› summarise @src\/greeting\.txt *$/m);
    tmux.type("", true);
    await tmux.waitFor(/attached src\/greeting\.txt \(29 B\)[\s\S]*Seen it\./);
    const sent = lastUser(server, 0);
    assert.match(
      sent,
      /^summarise @src\/greeting\.txt\n\nAttached files:\n<file path="src\/greeting\.txt">\nhello from the attached file\n<\/file>$/,
    );

    tmux.type("@secret", false);
    await sleep(600);
    assert.doesNotMatch(tmux.rows().join("\n"), /secret-notes\.txt/, "an ignored file is not offered");
    tmux.keys("C-u");
    tmux.type("look at @passwd-lin", false);
    await tmux.waitFor(/passwd-link.*passwd-link/);
    tmux.keys("Enter"); // takes the completion
    await tmux.waitFor(/^› look at @passwd-link *$/m);
    tmux.keys("Enter");
    await tmux.waitFor(/not attached: passwd-link \(outside the workspace\)[\s\S]*Not that one\./);
    assert.doesNotMatch(lastUser(server, 1), /root:/);
  });

  test("Ctrl-R finds an earlier request; Up/Down history is kept per workspace", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    const first = await start([{ content: "one" }, { content: "two" }, { content: "three" }], {
      workspace: ws,
    });
    first.tmux.type("first alpha request");
    await first.tmux.waitFor(/^one$/m);
    first.tmux.type("second beta request");
    await first.tmux.waitFor(/^two$/m);
    first.tmux.keys("C-r");
    first.tmux.type("alp", false);
    await first.tmux.waitFor(/reverse-i-search\) 'alp': first alpha request/);
    first.tmux.keys("Enter");
    await first.tmux.waitFor(/^› first alpha request *$/m);
    first.tmux.keys("Enter");
    await first.tmux.waitFor(/^three$/m);
    assert.equal(lastUser(first.server, 2), "first alpha request");
    first.tmux.keys("C-d");
    await first.tmux.waitFor(/\[exited 0\]/);

    const again = await start([], { workspace: ws });
    again.tmux.keys("Up");
    await again.tmux.waitFor(/^› first alpha request *$/m);
    again.tmux.keys("Up");
    await again.tmux.waitFor(/^› second beta request *$/m);
    const other = await start([]);
    other.tmux.keys("Up");
    await sleep(400);
    assert.doesNotMatch(
      other.tmux.rows().join("\n"),
      /alpha request/,
      "another workspace has its own history",
    );
  });

  test("a running command shows its live output before it ends, then one summary line; Ctrl-O expands it", async () => {
    const { tmux } = await start(
      [
        {
          content: "",
          toolCalls: [
            { name: "run_command", arguments: { command: "echo live-one; sleep 2; echo live-two; sleep 2" } },
          ],
        },
        { content: "Finished." },
      ],
      { args: ["--approval", "auto", "--sandbox", "local"] },
    );
    tmux.type("run it");
    const during = await tmux.waitFor(/⋯ run_command echo live-one.*· \d+(\.\d)? m?s\n {4}live-one/);
    assert.doesNotMatch(during, /^ {4}live-two$/m, "the output so far, while the command runs");
    await tmux.waitFor(/⋯ run_command[^\n]*\n {4}live-one\n {4}live-two/);
    await tmux.waitFor(/Finished\./);
    const rows = tmux.rows();
    assert.ok(!rows.some((r) => r.includes("⋯")), `a pending line was left behind:\n${rows.join("\n")}`);
    const summary = rows.filter((r) => /^ {2}✓ run_command /.test(r));
    assert.equal(summary.length, 1);
    assert.match(summary[0]!, /· [45]\.\d s · exit code: 0/);
    assert.ok(!rows.some((r) => /^ {4}live-two/.test(r)), "collapsed to one line when done");
    tmux.keys("C-o");
    await tmux.waitFor(/✓ run_command[^\n]*\n {4}exit code: 0[\s\S]* {4}live-two/);
  });

  test("a reply with reasoning prints its answer once, after the thought line", async () => {
    const { tmux } = await start([
      { reasoning: "Let me think about 6 times 7.", content: "The answer is 42." },
    ]);
    tmux.type("what is 6*7");
    await tmux.waitFor(/The answer is 42\.[\s\S]*^› *$/m);
    await sleep(300);
    const rows = tmux.rows();
    assert.equal(rows.filter((r) => r.includes("The answer is 42.")).length, 1, rows.join("\n"));
    const thought = rows.findIndex((r) => /✻ thought/.test(r));
    assert.ok(thought >= 0 && thought < rows.findIndex((r) => r.includes("The answer is 42.")));
  });

  test("at 60 columns tool lines keep their result and the status line fits; a resize redraws at the new width", async () => {
    const long = `echo ${"abcdefghij".repeat(7)}`;
    const { tmux } = await start(
      [
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: `${long}; exit 2` } }] },
        { content: "Ran." },
      ],
      { args: ["--approval", "auto", "--sandbox", "local"], columns: 60 },
    );
    tmux.type("run it");
    await tmux.waitFor(/Ran\./);
    let rows = tmux.rows();
    for (const r of rows) assert.ok(r.length <= 60, `a row of ${r.length} columns: ${r}`);
    const tool = rows.find((r) => /^ {2}✗ run_command /.test(r)) ?? "";
    assert.match(tool, /· exit code: 2/, `the result is on the line: ${tool}`);
    const status = rows.filter((r) => r.startsWith("── scripted-model"));
    assert.equal(status.length, 1);
    tmux.resize(100);
    await sleep(600);
    rows = tmux.rows();
    const status100 = rows.filter((r) => r.startsWith("── scripted-model"));
    assert.equal(status100.length, 1, rows.join("\n"));
    assert.match(status100[0]!, /approval auto ──$/, "the whole status line shows at 100 columns");
    assert.equal(rows.filter((r) => r.includes("Ran.")).length, 1, "redrawn once, not stacked");
    assert.equal(rows.filter((r) => /^› *$/.test(r)).length, 1);
  });

  test("--continue restores the model, the approval mode and the context shown in the status line", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    const server = await startScriptedServer({
      script: [
        { content: "first answer", usage: { inputTokens: 1234, outputTokens: 10 } },
        { content: "resumed answer" },
      ],
      model: "listed-first",
    });
    const first = await start([], { workspace: ws, server, model: "model-b" });
    first.tmux.type("/approval auto");
    await first.tmux.waitFor(/Approval mode: auto/);
    first.tmux.type("hello");
    await first.tmux.waitFor(/first answer/);
    first.tmux.keys("C-d");
    await first.tmux.waitFor(/\[exited 0\]/);
    open.splice(
      open.findIndex((o) => o.tmux === first.tmux),
      1,
    );
    first.tmux.kill();

    const second = await start([], { workspace: ws, server, model: null, args: ["--continue"] });
    const screen = await second.tmux.waitFor(/── model-b · .*ctx 1\.2k.*approval auto ──/);
    assert.match(screen, /Resumed session/);
    second.tmux.type("again");
    await second.tmux.waitFor(/resumed answer/);
    assert.equal(posts(server).at(-1)?.body?.model, "model-b");
  });

  test("approvals take one key: y runs, n asks for a reason, a covers the rule; the bell rings when it waits", async () => {
    const record = join(scratch, `out-${Date.now()}.raw`);
    const { server, tmux, workspace } = await start(
      [
        { content: "", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "A\n" } }] },
        { content: "", toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "B\n" } }] },
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "echo one" } }] },
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "echo one again" } }] },
        { content: "All asked." },
      ],
      { args: ["--sandbox", "local"], env: { HANDS_NOTIFY_AFTER_MS: "0" } },
    );
    tmux.recordOutput(record);
    tmux.type("go");
    await tmux.waitFor(/wants to create a\.txt[\s\S]*Allow\? yes \/ no/);
    tmux.type("y", false);
    await tmux.waitFor(/wants to create b\.txt[\s\S]*Allow\?/);
    assert.equal(readFileSync(join(workspace, "a.txt"), "utf8"), "A\n");
    tmux.type("n", false);
    await tmux.waitFor(/Reason for the model/);
    tmux.type("not b");
    await tmux.waitFor(/echo one[\s\S]*Allow\?.*always: "echo one" commands/);
    tmux.type("a", false);
    await tmux.waitFor(/All asked\./);
    const results = ((posts(server)[4]?.body?.messages ?? []) as any[])
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    assert.match(results[1] ?? "", /DENIED: write_file .*Reason: not b/);
    assert.match(results[3] ?? "", /one again/, "the second echo was covered by 'always'");
    assert.equal(tmux.screen().match(/wants to run a command/g)?.length, 1);
    await until(
      () => readFileSync(record, "latin1").includes("\x1b]9;hands: waiting for your approval\x07"),
      "the notification",
    );
  });

  test("a one-shot run in a terminal streams its answer as it arrives, and prints it once", async () => {
    const server = await startScriptedServer([
      {
        content: "The first part of the answer arrives now and the rest later",
        chunkSize: 6,
        stallAfterEvents: 5,
      },
      { content: "A complete answer, streamed.", chunkSize: 4 },
    ]);
    const run = (ws: string) => {
      const tmux = new TmuxSession(100, 20);
      open.push({ tmux, server });
      tmux.start([process.execPath, BIN, "--model", "scripted-model", "answer me"], ws, {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: scratch,
        TERM: "xterm-256color",
        NO_COLOR: "1",
        HANDS_DATA_DIR: join(scratch, "oneshot-data"),
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "sk-test",
      });
      return tmux;
    };
    // The model stalls mid-answer: what came so far is on the screen already.
    const stalled = run(mkdtempSync(join(scratch, "ws-")));
    await stalled.waitFor(/The first part/);
    assert.doesNotMatch(stalled.screen(), /\[exited/);
    stalled.kill();
    const whole = run(mkdtempSync(join(scratch, "ws-")));
    const screen = await whole.waitFor(/\[exited 0\]/);
    assert.equal(screen.match(/A complete answer, streamed\./g)?.length, 1, screen);
  });
});
