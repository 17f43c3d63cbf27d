// The interactive mode driven for real: `hands` in a tmux pseudo-terminal, keys typed with
// send-keys, the screen read with capture-pane, the model scripted over HTTP, files checked on disk.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { trustFolder } from "@hands/sdk/root";
import { hasTmux, TmuxSession } from "./tmux.js";

const BIN = fileURLToPath(new URL("../../bin/hands.js", import.meta.url));
const MCP_SERVER = fileURLToPath(new URL("../../testdata/mcp-calc-server.mjs", import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-tty-test-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const open: { tmux: TmuxSession; server?: ScriptedServer }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.tmux.kill();
    await o.server?.close();
  }
});

function env(server: ScriptedServer, data: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: scratch,
    TERM: "xterm-256color",
    NO_COLOR: "1",
    HANDS_DATA_DIR: data,
    XDG_CONFIG_HOME: join(scratch, "config"),
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "sk-test",
  };
}

async function start(
  script: Parameters<typeof startScriptedServer>[0],
  args: string[] = [],
  ws?: string,
  ready: RegExp = /^› *$/m,
  columns?: number,
) {
  assert.ok(hasTmux(), "tmux is needed for these tests: run scripts/test-env.sh");
  const server = await startScriptedServer(script);
  const workspace = ws ?? mkdtempSync(join(scratch, "ws-"));
  const data = join(workspace, "..", `${workspace.split("/").pop()}-data`);
  const tmux = columns ? new TmuxSession(columns, 30) : new TmuxSession();
  open.push({ tmux, server });
  tmux.start([process.execPath, BIN, "--model", "scripted-model", ...args], workspace, env(server, data));
  await tmux.waitFor(ready);
  return { server, workspace, data, tmux };
}

/** Waits until the visible rows satisfy `ok`. */
async function waitForRows(tmux: TmuxSession, ok: (rows: string[]) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let rows = tmux.rows();
  while (!ok(rows)) {
    if (Date.now() > deadline) throw new Error(`timed out; the screen:\n${rows.join("\n")}`);
    await new Promise((r) => setTimeout(r, 80));
    rows = tmux.rows();
  }
  return rows;
}

/** The tool results the model was sent in request `i`. */
function toolResults(server: ScriptedServer, i: number): string[] {
  const msgs = server.requests.filter((r) => r.method === "POST")[i]?.body?.messages ?? [];
  return msgs.filter((m: any) => m.role === "tool").map((m: any) => String(m.content));
}

describe("interactive hands in a terminal", { timeout: 180_000 }, () => {
  test("asks before a write with a diff; a 'no' reaches the model with its reason; the policy denies rm -rf /; /undo", async () => {
    const { server, workspace, tmux } = await start([
      { content: "", toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hi\n" } }] },
      { content: "", toolCalls: [{ name: "run_command", arguments: { command: "rm -rf /" } }] },
      {
        content: "",
        toolCalls: [
          { name: "edit_file", arguments: { path: "hello.txt", old_string: "hi", new_string: "bye" } },
        ],
      },
      { content: "All done." },
    ]);
    tmux.type("create hello.txt");
    await tmux.waitFor(/wants to create hello\.txt[\s\S]*\+hi[\s\S]*Allow\?/);
    tmux.type("y");
    let screen = await tmux.waitFor(/wants to change hello\.txt[\s\S]*-hi\n\+bye[\s\S]*Allow\?.*$/m);
    assert.match(screen, /denied by policy \(rm -rf of \/ or ~\): deletes the whole file system/);
    assert.equal(readFileSync(join(workspace, "hello.txt"), "utf8"), "hi\n");
    tmux.type("n", false); // one key: no Enter
    await tmux.waitFor(/Reason for the model/);
    tmux.type("keep hi, it is friendlier");
    screen = await tmux.waitFor(/All done\.[\s\S]*^› *$/m);
    assert.equal(
      readFileSync(join(workspace, "hello.txt"), "utf8"),
      "hi\n",
      "the refused edit did not happen",
    );
    const last = toolResults(server, 3);
    assert.match(last[1] ?? "", /DENIED: run_command was not run; refused by the command policy/);
    assert.match(last[2] ?? "", /DENIED: edit_file .*the user.*Reason: keep hi, it is friendlier/);

    tmux.type("/undo");
    await tmux.waitFor(/Undone: hello\.txt/);
    assert.equal(existsSync(join(workspace, "hello.txt")), false, "/undo removed the file the turn created");

    tmux.keys("C-d");
    screen = await tmux.waitFor(/\[exited 0\]/);
    assert.match(screen, /Session saved: \S+/);

    // The undo's note to the model ends with a fixed "Noted."; resuming shows the model's reply.
    const again = await start([], ["--continue"], workspace);
    screen = await again.tmux.waitFor(/Resumed session/);
    assert.match(screen, /Last reply: All done\./);
    assert.doesNotMatch(screen, /Noted/);
  });

  test("a session killed with SIGKILL resumes with its completed steps", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    const first = await start(
      [
        { content: "", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "A\n" } }] },
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "sleep 30" } }] },
      ],
      ["--approval", "auto"],
      ws,
    );
    first.tmux.type("write a.txt then wait");
    await first.tmux.waitFor(/⋯ run_command sleep 30/);
    process.kill(first.tmux.programPid(), "SIGKILL");
    await first.tmux.waitFor(/\[exited 137\]/);
    assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "A\n");

    const second = await start([{ content: "Resumed fine." }], ["--continue", "--approval", "auto"], ws);
    await second.tmux.waitFor(/Resumed session \S+: 2 steps, 1 requests/);
    second.tmux.type("carry on");
    await second.tmux.waitFor(/Resumed fine\./);
    const msgs = second.server.requests.filter((r) => r.method === "POST")[0]?.body?.messages as any[];
    assert.deepEqual(
      msgs.map((m) => m.role),
      ["system", "user", "assistant", "tool", "assistant", "tool", "user"],
    );
    assert.match(String(msgs[3].content), /Created a\.txt/);
    assert.match(String(msgs[5].content), /session stopped before this call finished/);
    assert.equal(msgs[6].content, "carry on");
  });

  test("/diff and /undo cover what commands changed, one request at a time, newest first", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    writeFileSync(join(ws, "a.txt"), "A\n");
    writeFileSync(join(ws, "b.txt"), "B\n");
    const { tmux } = await start(
      [
        {
          content: "",
          toolCalls: [
            {
              name: "run_command",
              arguments: { command: "echo A2 > a.txt && rm b.txt && mkdir d && echo c > d/c.txt" },
            },
          ],
        },
        { content: "first done" },
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "echo A3 > a.txt" } }] },
        { content: "second done" },
      ],
      ["--approval", "auto"],
      ws,
    );
    tmux.type("one");
    await tmux.waitFor(/first done/);
    tmux.type("two");
    await tmux.waitFor(/second done/);
    tmux.type("/diff");
    const diff = await tmux.waitFor(/\+\+\+ b\/d\/c\.txt[\s\S]*^› *$/m);
    assert.match(diff, /--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ -1 \+1 @@\n-A\n\+A3/);
    assert.match(diff, /--- a\/b\.txt\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-B/);
    tmux.type("/undo");
    await tmux.waitFor(/Undone: a\.txt \(from "two"\)/);
    assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "A2\n");
    tmux.type("/undo");
    await tmux.waitFor(/Undone: a\.txt, b\.txt, d\/c\.txt \(from "one"\)/);
    assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "A\n");
    assert.equal(readFileSync(join(ws, "b.txt"), "utf8"), "B\n");
    assert.equal(existsSync(join(ws, "d")), false);
    tmux.type("/undo");
    await tmux.waitFor(/Nothing to undo\./);
  });

  test("/undo after SIGKILL and --continue: the killed request, then the one before", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    const first = await start(
      [
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "echo v1 > f.txt" } }] },
        { content: "ok" },
        {
          content: "",
          toolCalls: [
            {
              name: "run_command",
              arguments: { command: "echo v2 > f.txt && echo h > half.txt && sleep 30" },
            },
          ],
        },
      ],
      ["--approval", "auto"],
      ws,
    );
    first.tmux.type("first");
    await first.tmux.waitFor(/ok/);
    first.tmux.type("second");
    await first.tmux.waitFor(/⋯ run_command/);
    while (!existsSync(join(ws, "half.txt"))) await new Promise((r) => setTimeout(r, 50));
    process.kill(first.tmux.programPid(), "SIGKILL");
    await first.tmux.waitFor(/\[exited 137\]/);

    const second = await start([], ["--continue"], ws);
    second.tmux.type("/undo");
    await second.tmux.waitFor(/Undone: f\.txt, half\.txt \(from "second"\)/);
    assert.equal(readFileSync(join(ws, "f.txt"), "utf8"), "v1\n");
    assert.equal(existsSync(join(ws, "half.txt")), false);
    second.tmux.type("/undo");
    await second.tmux.waitFor(/Undone: f\.txt \(from "first"\)/);
    assert.equal(existsSync(join(ws, "f.txt")), false);
  });

  test("/undo reverts files a docker sandbox wrote as the workspace owner (another uid)", {
    skip:
      (process.env.HANDS_SANDBOX_SKIP ?? "").split(",").includes("docker") &&
      "HANDS_SANDBOX_SKIP lists docker",
  }, async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    writeFileSync(join(ws, "kept.txt"), "before\n");
    // The container runs as the workspace's owner; make that someone other than us.
    const asRoot = process.getuid?.() === 0;
    const owner = asRoot ? 4321 : process.getuid?.();
    if (asRoot) for (const p of [ws, join(ws, "kept.txt")]) chownSync(p, 4321, 4321);
    const { tmux } = await start(
      [
        {
          content: "",
          toolCalls: [
            {
              name: "run_command",
              arguments: { command: "echo after > kept.txt && mkdir -p out && echo x > out/new.txt" },
            },
          ],
        },
        { content: "container done" },
      ],
      ["--approval", "auto", "--sandbox", "docker"],
      ws,
    );
    tmux.type("write in the container");
    await tmux.waitFor(/container done/, 60_000);
    assert.equal(statSync(join(ws, "out", "new.txt")).uid, owner);
    tmux.type("/undo");
    await tmux.waitFor(/Undone: kept\.txt, out\/new\.txt/);
    assert.equal(readFileSync(join(ws, "kept.txt"), "utf8"), "before\n");
    assert.equal(existsSync(join(ws, "out")), false);
  });

  test("tools from an MCP server (stdio) are offered, approved and called", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    mkdirSync(join(ws, ".hands"));
    writeFileSync(
      join(ws, ".hands", "config.json"),
      JSON.stringify({ mcpServers: { calc: { command: process.execPath, args: [MCP_SERVER] } } }),
    );
    // MCP servers of a project start only once the folder is trusted.
    trustFolder(ws, { XDG_CONFIG_HOME: join(scratch, "config") });
    const { server, tmux, data } = await start(
      [
        { content: "", toolCalls: [{ name: "mcp__calc__add", arguments: { a: 2, b: 3 } }] },
        { content: "2 + 3 = 5" },
      ],
      [],
      ws,
    );
    await tmux.waitFor(/MCP server calc: 1 tools/);
    tmux.type("add 2 and 3");
    await tmux.waitFor(/mcp__calc__add wants to run with \{"a":2,"b":3\}[\s\S]*Allow\?/);
    tmux.type("y");
    await tmux.waitFor(/2 \+ 3 = 5/);
    const tools = server.requests.find((r) => r.method === "POST")?.body?.tools as any[];
    assert.ok(tools.some((t) => t.function?.name === "mcp__calc__add"));
    assert.deepEqual(toolResults(server, 1), ["sum=5"]);
    const audit = readFileSync(join(data, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      audit.map((a) => [a.tool, a.decision, a.source]),
      [["mcp__calc__add", "allow", "user"]],
    );
    assert.equal(readdirSync(join(data, "sessions")).length, 1);
  });

  test("--plan: a read-only plan, accepted, then executed with the todo checklist in the status line", async () => {
    const { server, workspace, tmux } = await start(
      [
        { content: "", toolCalls: [{ name: "list_dir", arguments: {} }] },
        { content: "Plan:\n- [ ] Create greet.py\n- [ ] Run it" },
        {
          content: "",
          toolCalls: [
            {
              name: "todo",
              arguments: {
                items: [
                  { text: "Create greet.py", status: "in_progress" },
                  { text: "Run it", status: "pending" },
                ],
              },
            },
            { name: "write_file", arguments: { path: "greet.py", content: "print('hi')\n" } },
          ],
        },
        {
          content: "",
          toolCalls: [
            {
              name: "todo",
              arguments: {
                items: [
                  { text: "Create greet.py", status: "done" },
                  { text: "Run it", status: "done" },
                ],
              },
            },
          ],
        },
        { content: "Greeted." },
      ],
      ["--plan", "--approval", "auto", "say hi in python"],
      undefined,
      /\[a\]ccept/,
    );
    await tmux.waitFor(/Plan:\n {2}1\. \[ \] Create greet\.py\n {2}2\. \[ \] Run it[\s\S]*\[a\]ccept/);
    const planTools = ((server.requests.find((r) => r.method === "POST")?.body?.tools ?? []) as any[]).map(
      (t) => t.function.name,
    );
    assert.ok(
      planTools.includes("read_file") &&
        !planTools.includes("write_file") &&
        !planTools.includes("run_command"),
    );
    assert.equal(existsSync(join(workspace, "greet.py")), false);
    tmux.type("a");
    const screen = await tmux.waitFor(/Greeted\.[\s\S]*todo 2\/2/);
    assert.match(screen, /✓ todo/);
    assert.equal(readFileSync(join(workspace, "greet.py"), "utf8"), "print('hi')\n");
    const execRequest = server.requests.filter((r) => r.method === "POST")[2]?.body?.messages as any[];
    assert.match(String(execRequest.at(-1).content), /1\. Create greet\.py\n2\. Run it/);
  });

  test("the plan is edited in $EDITOR, attached to the terminal; a failing editor leaves it unchanged", async () => {
    const bin = mkdtempSync(join(scratch, "editor-"));
    const editor = join(bin, "fake-editor.sh");
    // A stand-in for a person at their editor: fails the first time, then proves it has the
    // terminal (reads a line typed there) and edits the file.
    writeFileSync(
      editor,
      [
        "#!/bin/sh",
        'marker="$(dirname "$0")/tried"',
        'if [ ! -e "$marker" ]; then : > "$marker"; exit 3; fi',
        '[ -t 0 ] && [ -t 1 ] || { echo "not a terminal"; exit 4; }',
        "printf 'fake editor, add a step: '",
        "read step",
        "sed -i 's/Run it/Run it twice/' \"$1\"",
        'printf -- \'- [ ] %s\\n\' "$step" >> "$1"',
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    const ws = mkdtempSync(join(scratch, "ws-"));
    const server = await startScriptedServer([
      { content: "Plan:\n- [ ] Create greet.py\n- [ ] Run it" },
      { content: "Executed." },
    ]);
    const tmux = new TmuxSession();
    open.push({ tmux, server });
    tmux.start(
      [process.execPath, BIN, "--model", "scripted-model", "--plan", "--approval", "auto", "say hi"],
      ws,
      { ...env(server, join(scratch, "editor-data")), EDITOR: editor },
    );
    await tmux.waitFor(/\[a\]ccept/);
    tmux.type("e");
    let screen = await tmux.waitFor(/exited with code 3; the plan is unchanged\.[\s\S]*\[a\]ccept/);
    assert.match(screen, /Plan:\n {2}1\. \[ \] Create greet\.py\n {2}2\. \[ \] Run it\n[\s\S]*unchanged/);
    tmux.type("e");
    await tmux.waitFor(/fake editor, add a step: $/m);
    tmux.type("Clean up");
    // (The screen is redrawn whole after the editor: "Run it twice" is new, no offset needed.)
    screen = await tmux.waitFor(
      /Plan:\n {2}1\. \[ \] Create greet\.py\n {2}2\. \[ \] Run it twice\n {2}3\. \[ \] Clean up\n.*\[a\]ccept/,
    );
    tmux.type("a");
    await tmux.waitFor(/Executed\./);
    const exec = server.requests.filter((r) => r.method === "POST")[1]?.body?.messages as any[];
    assert.match(String(exec.at(-1).content), /1\. Create greet\.py\n2\. Run it twice\n3\. Clean up/);
  });

  test("while the model streams, the editor and the status line stay at the bottom; the text scrolls above them", async () => {
    const lines = Array.from({ length: 80 }, (_, i) => `filler line ${i + 1}`).join("\n");
    const { tmux } = await start(
      [
        { content: lines },
        // Streams part of its answer, then stalls with the connection open: a turn in progress.
        { content: "Streaming the answer slowly, word by word", chunkSize: 10, stallAfterEvents: 3 },
      ],
      ["--approval", "auto"],
    );
    tmux.type("fill the screen");
    await tmux.waitFor(/filler line 80[\s\S]*^› *$/m);
    tmux.type("now stream");
    await tmux.waitFor(/Streaming the answer/);
    const bottom = (r: string[]) => r.filter((x) => x.trim() !== "");
    const rows = await waitForRows(tmux, (r) => /^── scripted-model · .* ──$/.test(bottom(r).at(-1) ?? ""));
    assert.equal(rows.length, 50);
    const shown = bottom(rows);
    assert.match(shown.at(-2) ?? "", /^› *$/, "the editor is right above the status line");
    const text = rows.findIndex((r) => r.startsWith("Streaming the answer"));
    const prompt = rows.findIndex((r) => /^› *$/.test(r));
    assert.ok(text > 0 && text < prompt, `the streamed text is above the editor:\n${rows.join("\n")}`);
    assert.ok(
      rows.some((r) => r === "› now stream"),
      "the request scrolled up with the rest",
    );
    tmux.keys("C-c");
    const after = await waitForRows(tmux, (r) => r.some((x) => /aborted/.test(x)));
    assert.equal(
      after.filter((r) => /^── scripted-model/.test(r)).length,
      1,
      `one status line on the screen:\n${after.join("\n")}`,
    );
    assert.match(bottom(after).at(-1) ?? "", /^── scripted-model · .* ──$/);
  });

  test("Ctrl-C stops the running step and keeps the session; twice at the prompt quits", async () => {
    const { tmux, server } = await start(
      [
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "sleep 30" } }] },
        { content: "second answer" },
      ],
      ["--approval", "auto"],
    );
    tmux.type("wait a while");
    await tmux.waitFor(/⋯ run_command sleep 30/);
    tmux.keys("C-c");
    await tmux.waitFor(/Stopping…[\s\S]*aborted[\s\S]*^› *$/m);
    tmux.type("and now?");
    // The turn's end, not just the answer's text: a Ctrl-C before the turn has ended stops it instead.
    await tmux.waitFor(/second answer[\s\S]*^› *$/m);
    await waitForRows(tmux, (r) => !r.some((x) => /Esc to stop|⋯/.test(x)));
    const msgs = server.requests.filter((r) => r.method === "POST")[1]?.body?.messages as any[];
    assert.deepEqual(
      msgs.map((m) => m.role),
      ["system", "user", "assistant", "tool", "user"],
    );
    tmux.keys("C-c");
    await tmux.waitFor(/Ctrl-C again to quit/);
    tmux.keys("C-c");
    await tmux.waitFor(/\[exited 0\]/);
  });
});

describe("interactive hands in a pipe", () => {
  test("-i reads requests and answers from stdin and writes plain text (no colours, no spinner)", async () => {
    const server = await startScriptedServer([
      { content: "", toolCalls: [{ name: "write_file", arguments: { path: "p.txt", content: "piped\n" } }] },
      { content: "Wrote p.txt." },
    ]);
    const ws = mkdtempSync(join(scratch, "ws-"));
    const data = join(scratch, "pipe-data");
    try {
      const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, "-i", "--model", "scripted-model"], {
          cwd: ws,
          env: env(server, data),
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.on("close", (code) => resolve({ code, stdout }));
        child.stdin.end("write p.txt\ny\n/cost\n");
      });
      assert.equal(out.code, 0);
      assert.doesNotMatch(out.stdout, /\x1b/);
      assert.match(out.stdout, /\+piped/);
      assert.match(out.stdout, /Wrote p\.txt\./);
      assert.match(out.stdout, /Tokens: .* in .* out/);
      assert.equal(readFileSync(join(ws, "p.txt"), "utf8"), "piped\n");
    } finally {
      await server.close();
    }
  });

  test("hands init writes a starter AGENTS.md that the next session loads; hands sessions lists sessions", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    writeFileSync(
      join(ws, "package.json"),
      JSON.stringify({ name: "demo", scripts: { test: "node --test" } }),
    );
    const run = (args: string[], extra: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], {
          cwd: ws,
          env: {
            PATH: process.env.PATH ?? "",
            HOME: scratch,
            HANDS_DATA_DIR: join(scratch, "init-data"),
            ...extra,
          },
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
        child.stdin.end();
      });
    assert.equal((await run(["init"])).code, 0);
    const agentsMd = readFileSync(join(ws, "AGENTS.md"), "utf8");
    assert.match(agentsMd, /package demo/);
    assert.match(agentsMd, /`npm run test` \(node --test\)/);
    assert.equal((await run(["init"])).code, 2, "init does not overwrite without --force");
    assert.match((await run(["sessions"])).stdout, /No sessions in this workspace/);

    const server = await startScriptedServer([{ content: "ok" }]);
    try {
      const r = await run(["--model", "scripted-model", "hello there"], {
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "k",
      });
      assert.equal(r.code, 0);
      const system = server.requests.find((q) => q.method === "POST")?.body?.messages[0].content as string;
      assert.match(system, /Project instructions from .*AGENTS\.md/);
      assert.match(system, /package demo/);
    } finally {
      await server.close();
    }
  });
});
