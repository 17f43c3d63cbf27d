// `hands acp` with the editor's own capabilities, through the official ACP SDK's client side as
// a scripted editor: the file tools read and write through fs/read_text_file and
// fs/write_text_file (an unsaved buffer that differs from disk is what the agent reads and
// edits), never for a path outside the workspace or one a symbolic link carries out of it;
// with `--terminal editor`, run_command runs in the editor's terminal (create, wait for exit,
// output, release; kill on cancel) after the approval and the command policy.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { pathToFileURL } from "node:url";
import { methods } from "@agentclientprotocol/sdk";
import { startScriptedServer } from "@hands/llm";
import { newEditorSession, startEditor, stopTerminals } from "../testing/acp-editor.js";
import { cleanEnv } from "../testing/cli-process.js";
import { scratchFolder, waitFor } from "../testing/front-ends.js";

const scratch = scratchFolder("hands-acp-caps-");

/** Every request body the model got after the first, as one string (tool results included). */
const laterBodies = (model: { requests: { path: string; body: unknown }[] }) =>
  model.requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .slice(1)
    .map((r) => JSON.stringify(r.body))
    .join("\n");

test("hands acp: read_file, edit_file and write_file go through the editor's buffers, inside the workspace only", async (t: TestContext) => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const outside = mkdtempSync(join(scratch, "outside-"));
  writeFileSync(join(ws, "notes.md"), "DISK TEXT\n");
  writeFileSync(join(ws, "other.txt"), "other, on disk only\n");
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE ON DISK\n");
  symlinkSync(join(outside, "secret.txt"), join(ws, "link.txt"));
  const env = cleanEnv(join(scratch, "env-fs"));
  const model = await startScriptedServer([
    {
      toolCalls: [
        { id: "r1", name: "read_file", arguments: { path: "notes.md" } },
        { id: "r2", name: "read_file", arguments: { path: join(outside, "secret.txt") } },
        { id: "r3", name: "read_file", arguments: { path: "link.txt" } },
        { id: "r4", name: "read_file", arguments: { path: "other.txt" } },
      ],
    },
    {
      toolCalls: [
        {
          id: "e1",
          name: "edit_file",
          arguments: { path: "notes.md", old_string: "UNSAVED LINE 2", new_string: "EDITED LINE 2" },
        },
        {
          id: "w1",
          name: "write_file",
          arguments: { path: "sub/new.txt", content: "new through the editor\n" },
        },
        { id: "w2", name: "write_file", arguments: { path: "link.txt", content: "pwned\n" } },
      ],
    },
    { content: "Done." },
  ]);
  t.after(() => model.close());
  // The editor holds unsaved buffers: notes.md differs from disk; it would hand out the secret too.
  const editor = startEditor(model, env, {
    buffers: {
      [join(ws, "notes.md")]: "UNSAVED LINE 1\nUNSAVED LINE 2\n",
      [join(outside, "secret.txt")]: "OUTSIDE BUFFER\n",
    },
  });
  try {
    const sessionId = await newEditorSession(editor, ws, { fs: { readTextFile: true, writeTextFile: true } });
    const r = await editor.conn.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Fix the notes." },
        { type: "resource_link", name: "secret", uri: pathToFileURL(join(outside, "secret.txt")).href },
        { type: "resource_link", name: "via link", uri: pathToFileURL(join(ws, "link.txt")).href },
      ],
    });
    assert.equal(r.stopReason, "end_turn", editor.stderr());
    const first = JSON.stringify(model.requests.find((q) => q.path.endsWith("/chat/completions"))!.body);
    // Attachments outside the workspace (directly or through a link) are not read, nor asked for.
    assert.match(first, /outside the workspace, not read/);
    assert.doesNotMatch(first, /OUTSIDE (BUFFER|ON DISK)/);

    const later = laterBodies(model);
    // read_file got the unsaved buffer, not the disk's text; a file with no buffer came from disk.
    assert.match(later, /UNSAVED LINE 1/);
    assert.doesNotMatch(later, /DISK TEXT/);
    assert.match(later, /other, on disk only/);
    // The path outside and the symlink out of the workspace were refused before the editor was asked.
    assert.match(later, /outside the workspace/);
    assert.doesNotMatch(later, /OUTSIDE (BUFFER|ON DISK)/);
    assert.ok(!editor.reads.some((p) => p.startsWith(outside)), `asked for ${editor.reads.join(", ")}`);
    assert.ok(!editor.reads.includes(join(ws, "link.txt")), "the link itself was never asked for");
    assert.deepEqual([...new Set(editor.reads)].sort(), [join(ws, "notes.md"), join(ws, "other.txt")].sort());

    // edit_file edited the buffer's text and wrote it through the editor; write_file too.
    assert.deepEqual(
      editor.writes.map((w) => w.path),
      [join(ws, "notes.md"), join(ws, "sub", "new.txt")],
    );
    assert.equal(editor.buffers[join(ws, "notes.md")], "UNSAVED LINE 1\nEDITED LINE 2\n");
    assert.equal(readFileSync(join(ws, "notes.md"), "utf8"), "UNSAVED LINE 1\nEDITED LINE 2\n");
    assert.equal(readFileSync(join(ws, "sub", "new.txt"), "utf8"), "new through the editor\n");
    // The write through the link was refused: the file outside is untouched, the editor not asked.
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "OUTSIDE ON DISK\n");
    // Writes asked first (mode ask), each before its fs/write_text_file; the gate asks about
    // the write through the link too (approvals come before the tool), which the tool then refuses.
    assert.deepEqual(
      editor.asked.filter((m) => m !== methods.client.fs.readTextFile),
      [
        methods.client.session.requestPermission,
        methods.client.fs.writeTextFile,
        methods.client.session.requestPermission,
        methods.client.fs.writeTextFile,
        methods.client.session.requestPermission,
      ],
    );
    assert.equal(editor.permissions[2]!.toolCall.toolCallId, "w2");
    // The edit's permission shows its diff against the buffer, not the disk.
    const askedDiff = editor.permissions[0]!.toolCall.content?.find((c) => c.type === "diff");
    assert.equal(editor.permissions[0]!.toolCall.toolCallId, "e1");
    assert.deepEqual(
      askedDiff && askedDiff.type === "diff" ? [askedDiff.oldText, askedDiff.newText] : undefined,
      ["UNSAVED LINE 1\nUNSAVED LINE 2\n", "UNSAVED LINE 1\nEDITED LINE 2\n"],
    );
    const w2 = editor.updates
      .map((u) => u.update)
      .findLast((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "w2" && u.status);
    assert.equal(w2?.sessionUpdate === "tool_call_update" ? w2.status : undefined, "failed");
    // The edit's diff in the editor is against the buffer the person saw.
    const editEnd = editor.updates
      .map((u) => u.update)
      .find(
        (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "e1" && u.status === "completed",
      );
    const diff =
      editEnd?.sessionUpdate === "tool_call_update"
        ? editEnd.content?.find((c) => c.type === "diff")
        : undefined;
    assert.deepEqual(diff && diff.type === "diff" ? [diff.oldText, diff.newText] : undefined, [
      "UNSAVED LINE 1\nUNSAVED LINE 2\n",
      "UNSAVED LINE 1\nEDITED LINE 2\n",
    ]);
  } finally {
    editor.child.stdin!.end();
  }
  assert.equal(await editor.exited, 0, editor.stderr());
});

test("hands acp --terminal editor: run_command in the editor's terminal after the approval; policy first; cancel kills it", async (t: TestContext) => {
  const ws = mkdtempSync(join(scratch, "ws-term-"));
  mkdirSync(join(ws, "src"));
  const env = cleanEnv(join(scratch, "env-term"));
  const model = await startScriptedServer([
    {
      toolCalls: [
        { id: "c1", name: "run_command", arguments: { command: "echo from-the-terminal; pwd; exit 3" } },
        { id: "c2", name: "run_command", arguments: { command: "rm -rf /" } },
      ],
    },
    { content: "Ran them." },
    // Prompt 2: a command that runs until the editor cancels the turn.
    { toolCalls: [{ id: "s1", name: "run_command", arguments: { command: "sleep 30; echo woke" } }] },
    { content: "never sent" },
  ]);
  t.after(() => model.close());
  const editor = startEditor(model, env, { extra: ["--terminal", "editor"] });
  try {
    const sessionId = await newEditorSession(editor, ws, { terminal: true, session: { notices: {} } });
    const r = await editor.conn.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "run it" }],
    });
    assert.equal(r.stopReason, "end_turn", editor.stderr());
    // One terminal: the denied command never reached the editor, and was never even asked about.
    assert.equal(editor.terminals.size, 1, [...editor.terminals.values()].map((t) => t.request.args).join());
    const term = [...editor.terminals.values()][0]!;
    assert.equal(term.request.command, "bash");
    assert.deepEqual(term.request.args, ["-c", "echo from-the-terminal; pwd; exit 3"]);
    assert.equal(term.request.cwd, ws);
    assert.ok(term.released, "the terminal was released");
    assert.equal(editor.permissions.length, 1);
    assert.deepEqual(editor.asked.slice(0, 2), [
      methods.client.session.requestPermission,
      methods.client.terminal.create,
    ]);
    assert.ok(editor.asked.includes(methods.client.terminal.waitForExit));
    assert.equal(editor.asked.at(-1), methods.client.terminal.release);
    const later = laterBodies(model);
    assert.match(later, /exit code: 3/);
    assert.match(later, /from-the-terminal/);
    assert.match(later, new RegExp(ws.replace(/[/.]/g, "\\$&")));
    assert.match(later, /rm -rf of \/ or ~|deletes the whole file system/);
    // The editor shows the terminal in the call, while it runs and after.
    const c1 = editor.updates
      .map((u) => u.update)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c1");
    assert.ok(
      c1.some(
        (u) => u.sessionUpdate === "tool_call_update" && !u.status && u.content?.[0]?.type === "terminal",
      ),
    );
    const done = c1.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.deepEqual(done?.sessionUpdate === "tool_call_update" ? done.content?.[0] : undefined, {
      type: "terminal",
      terminalId: [...editor.terminals.keys()][0],
    });
    // The person is told commands run unisolated.
    assert.ok(
      editor.updates.some(
        (u) => u.update.sessionUpdate === "notice" && /editor's terminal/.test(u.update.title),
      ),
    );

    // Cancel mid-command: the terminal is killed and released, the turn ends cancelled.
    const r2 = editor.conn.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "sleep" }],
    });
    await waitFor(() => editor.terminals.size === 2, "the second terminal");
    const sleeper = [...editor.terminals.values()][1]!;
    const cancelled = Date.now();
    await editor.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await r2).stopReason, "cancelled");
    assert.ok(Date.now() - cancelled < 5000, "the cancel took more than 5 s");
    assert.ok(sleeper.killed, "terminal/kill on cancel");
    await waitFor(() => sleeper.released, "the killed terminal's release", 6000);
    assert.notEqual((await sleeper.exit).signal, null);
  } finally {
    stopTerminals(editor);
    editor.child.stdin!.end();
  }
  assert.equal(await editor.exited, 0, editor.stderr());
});
