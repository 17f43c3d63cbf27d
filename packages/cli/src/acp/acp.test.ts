// `hands acp` as an editor drives it: the real bin as a subprocess, the official ACP SDK's
// client side as a scripted editor, the repo's scripted model server (which validates every
// request body) as the model. Covers initialize, session/new, a prompt whose write asks for
// permission (approved), streamed updates (thought, tool call with diff, plan, message), an
// attached unsaved buffer read through fs/read_text_file, a second prompt while one runs, a
// cancel mid-run, modes, session/load with its replay, and bad input on the wire.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { startScriptedServer } from "@hands/llm";
import { checkBwrap } from "@hands/sandbox";
import { type Editor, newEditorSession, startEditor } from "../testing/acp-editor.js";
import { cleanEnv } from "../testing/cli-process.js";
import { scratchFolder, spawnBin, waitFor } from "../testing/front-ends.js";

const CLI_PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const scratch = scratchFolder("hands-acp-");

const kinds = (e: Editor, sessionId: string) =>
  e.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update.sessionUpdate);

test("hands acp: an editor's session — permission, streamed updates, busy prompt, cancel, modes, load", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, "spec.txt"), "on disk (stale)\n");
  const env = cleanEnv(join(scratch, "env"));
  const model = await startScriptedServer([
    // Prompt 1: reasoning, a checklist and a write (which asks), then the answer.
    {
      reasoning: "The user wants notes.txt.",
      toolCalls: [
        {
          id: "c1",
          name: "todo",
          arguments: { items: [{ text: "write notes.txt", status: "in_progress" }] },
        },
        { id: "c2", name: "write_file", arguments: { path: "notes.txt", content: "hello from hands\n" } },
      ],
    },
    { content: "Wrote notes.txt." },
    // Prompt 2: a reply that starts streaming, then stalls until the editor cancels.
    { content: "Working on it, this takes a while…", chunkSize: 8, stallAfterEvents: 2 },
    // Prompt 3 (after load, in a new process): the conversation goes on.
    { content: "Still here." },
  ]);
  const editor = startEditor(model, env, { buffers: { [join(ws, "spec.txt")]: "UNSAVED BUFFER TEXT\n" } });
  let sessionId: string;
  try {
    const agent = editor.conn.agent;
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, session: { notices: {} } },
    });
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    assert.equal(init.agentCapabilities?.loadSession, true);
    // The bin runs the bundle: its version must be the package's, not a fallback.
    assert.equal(init.agentInfo?.version, CLI_PACKAGE.version);
    assert.equal(init.agentCapabilities?.promptCapabilities?.embeddedContext, true);

    const created = await agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    sessionId = created.sessionId;
    assert.equal(created.modes?.currentModeId, "ask");
    assert.deepEqual(created.modes?.availableModes.map((m) => m.id).sort(), ["ask", "auto", "read-only"]);

    const r1 = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Write notes.txt, following the spec." },
        { type: "resource_link", name: "spec.txt", uri: pathToFileURL(join(ws, "spec.txt")).href },
        { type: "resource", resource: { uri: "file:///elsewhere/extra.md", text: "EMBEDDED CONTEXT" } },
      ],
    });
    assert.equal(r1.stopReason, "end_turn");
    assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "hello from hands\n");
    // The editor's unsaved buffer, not the file on disk, reached the model; so did the embedded text.
    assert.deepEqual(editor.reads, [join(ws, "spec.txt")]);
    const firstBody = JSON.stringify(model.requests.find((r) => r.path.endsWith("/chat/completions"))!.body);
    assert.match(firstBody, /UNSAVED BUFFER TEXT/);
    assert.doesNotMatch(firstBody, /on disk \(stale\)/);
    assert.match(firstBody, /EMBEDDED CONTEXT/);

    // One permission request, for the write, naming the call the editor was shown.
    assert.equal(editor.permissions.length, 1);
    const perm = editor.permissions[0]!;
    assert.equal(perm.toolCall.toolCallId, "c2");
    assert.equal(perm.toolCall.kind, "edit");
    assert.deepEqual(
      perm.options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once"],
    );
    const permDiff = perm.toolCall.content?.find((c) => c.type === "diff");
    assert.ok(permDiff && permDiff.type === "diff" && permDiff.newText === "hello from hands\n");

    // The session's warnings (here: commands run unisolated) came as a notice, before the reply.
    const notice = editor.updates.find((u) => u.update.sessionUpdate === "notice")?.update;
    assert.ok(
      notice && notice.sessionUpdate === "notice" && notice.severity === "warning",
      JSON.stringify(notice),
    );
    assert.match(notice.title, /sandbox "local" does not isolate/);
    assert.equal(editor.updates.filter((u) => u.update.sessionUpdate === "notice").length, 1);
    const seen = kinds(editor, sessionId);
    for (const k of ["agent_thought_chunk", "plan", "tool_call", "tool_call_update", "agent_message_chunk"])
      assert.ok(seen.includes(k as never), `no ${k} update in ${seen.join(", ")}`);
    const ups = editor.updates.map((u) => u.update);
    const thought = ups.filter((u) => u.sessionUpdate === "agent_thought_chunk");
    assert.equal(
      thought.map((u) => (u.content.type === "text" ? u.content.text : "")).join(""),
      "The user wants notes.txt.",
    );
    const plan = ups.find((u) => u.sessionUpdate === "plan");
    assert.deepEqual(plan && plan.sessionUpdate === "plan" ? plan.entries : undefined, [
      { content: "write notes.txt", priority: "medium", status: "in_progress" },
    ]);
    const writeCall = ups.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "c2");
    assert.ok(writeCall && writeCall.sessionUpdate === "tool_call");
    assert.equal(writeCall.kind, "edit");
    assert.deepEqual(writeCall.locations, [{ path: join(ws, "notes.txt") }]);
    const writeEnd = ups.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c2" && u.status,
    );
    const ends = ups.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c2");
    assert.deepEqual(
      ends.map((u) => (u.sessionUpdate === "tool_call_update" ? u.status : "")),
      ["in_progress", "completed"],
      JSON.stringify(writeEnd),
    );
    const last = ends.at(-1)!;
    const diff =
      last.sessionUpdate === "tool_call_update" ? last.content?.find((c) => c.type === "diff") : undefined;
    assert.deepEqual(diff, {
      type: "diff",
      path: join(ws, "notes.txt"),
      oldText: null,
      newText: "hello from hands\n",
    });
    const message = ups
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) =>
        u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "",
      )
      .join("");
    assert.equal(message, "Wrote notes.txt.");

    // Modes: Hands' approval modes; an unknown one is refused.
    await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
    await assert.rejects(
      agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
      /unknown mode/,
    );

    // Prompt 2 streams, then stalls; a second prompt meanwhile is refused; cancel ends it.
    const before = editor.updates.length;
    const r2 = agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Now the slow part." }],
    });
    await waitFor(
      () => editor.updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk"),
      "the slow reply's first chunk",
    );
    await assert.rejects(
      agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "and this?" }],
      }),
      (e: { code?: number; message?: string }) =>
        e.code === -32600 && /already running/.test(e.message ?? ""),
    );
    const cancelledAt = Date.now();
    await agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await r2).stopReason, "cancelled");
    assert.ok(Date.now() - cancelledAt < 5000, "the cancel took more than 5 s");

    await assert.rejects(
      agent.request(methods.agent.session.prompt, {
        sessionId: "no-such",
        prompt: [{ type: "text", text: "x" }],
      }),
      (e: { code?: number }) => e.code === -32002,
    );
  } finally {
    editor.child.stdin!.end();
  }
  // The editor goes away (stdin closes): the agent exits cleanly and saved the session.
  assert.equal(await editor.exited, 0, editor.stderr());

  // A new editor process loads the session: the conversation is replayed, then goes on.
  const again = startEditor(model, env);
  try {
    const agent = again.conn.agent;
    await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    await assert.rejects(
      agent.request(methods.agent.session.load, {
        sessionId: "20990101-000000-nothere",
        cwd: ws,
        mcpServers: [],
      }),
      (e: { code?: number }) => e.code === -32002,
    );
    const other = mkdtempSync(join(scratch, "other-"));
    await assert.rejects(
      agent.request(methods.agent.session.load, { sessionId, cwd: other, mcpServers: [] }),
      /belongs to/,
    );
    const loaded = await agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    // The mode chosen before is the session's again.
    assert.equal(loaded.modes?.currentModeId, "auto");
    const replay = again.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
    const users = replay.flatMap((u) =>
      u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    assert.match(users[0] ?? "", /Write notes\.txt, following the spec/);
    assert.ok(
      replay.some(
        (u) =>
          u.sessionUpdate === "agent_message_chunk" &&
          u.content.type === "text" &&
          u.content.text === "Wrote notes.txt.",
      ),
    );
    assert.ok(
      replay.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "c2" && u.kind === "edit"),
    );
    assert.ok(
      replay.some(
        (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c2" && u.status === "completed",
      ),
    );

    const r3 = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Are you there?" }],
    });
    assert.equal(r3.stopReason, "end_turn");
    const lastBody = JSON.stringify(model.requests.at(-1)!.body);
    assert.match(lastBody, /Wrote notes\.txt\./, "the loaded conversation went to the model");
    const listed = await agent.request(methods.agent.session.list, { cwd: ws });
    assert.ok(listed.sessions.some((s) => s.sessionId === sessionId && s.cwd === ws));
  } finally {
    again.child.stdin!.end();
  }
  assert.equal(await again.exited, 0, again.stderr());
  await model.close();
});

test("hands acp: malformed JSON-RPC, unknown methods and requests before initialize get errors; EOF exits 0", async () => {
  const env = cleanEnv(join(scratch, "env-raw"));
  const { child, exited } = spawnBin(["acp", "--sandbox", "local"], env);
  let out = "";
  child.stdout!.on("data", (d) => {
    out += d;
  });
  const lines = [
    `{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`,
    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
    "{this is not json",
    `[{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}]`,
    `{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}`,
    `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":42}}`,
    `{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"${join(scratch, "missing")}","mcpServers":[]}}`,
  ];
  lines.push(
    `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`,
  );
  child.stdin!.write(`${lines.join("\n")}\n`);
  child.stdin!.end();
  assert.equal(await exited, 0);
  const replies = out
    .trim()
    .split("\n")
    .map(
      (l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number; message: string } },
    );
  const byId = (id: unknown) => replies.find((r) => r.id === id);
  assert.equal(byId(0)?.error?.code, -32600, "a request before initialize is refused");
  assert.ok(byId(1)?.result);
  assert.ok(
    replies.some((r) => r.id === null && r.error?.code === -32700),
    "parse error",
  );
  assert.ok(
    replies.some((r) => r.id === null && r.error?.code === -32600),
    "a batch is refused",
  );
  assert.equal(byId(2)?.error?.code, -32601);
  assert.equal(byId(3)?.error?.code, -32602);
  assert.equal(byId(4)?.error?.code, -32602);
  assert.match(byId(4)?.error?.message ?? "", /missing|not found|no such|does not exist/i);
  assert.equal(byId(6)?.error?.code, -32602);
  assert.match(byId(6)?.error?.message ?? "", /absolute/);
});

test("hands acp --plan: the plan, then the todo tool's progress, as plan updates", async () => {
  const ws = mkdtempSync(join(scratch, "ws-plan-"));
  const env = cleanEnv(join(scratch, "env-plan"));
  const model = await startScriptedServer([
    { content: "Plan:\n- [ ] write a.txt\n- [ ] check it" },
    {
      toolCalls: [
        {
          id: "t1",
          name: "todo",
          arguments: {
            items: [
              { text: "write a.txt", status: "done" },
              { text: "check it", status: "in_progress" },
            ],
          },
        },
      ],
    },
    { content: "Done." },
  ]);
  // --terminal editor with an editor that offers no terminal: commands stay in the sandbox, it says so.
  const editor = startEditor(model, env, { extra: ["--plan", "--approval", "auto", "--terminal", "editor"] });
  try {
    const agent = editor.conn.agent;
    const sessionId = await newEditorSession(editor, ws);
    const r = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "do it" }],
    });
    assert.equal(r.stopReason, "end_turn");
    const plans = editor.updates.flatMap((u) =>
      u.update.sessionUpdate === "plan" ? [u.update.entries] : [],
    );
    assert.deepEqual(
      plans.map((p) => p.map((e) => `${e.status}:${e.content}`)),
      [
        ["pending:write a.txt", "pending:check it"],
        ["completed:write a.txt", "in_progress:check it"],
      ],
    );
    assert.match(editor.stderr(), /offers no terminal; commands run in Hands' sandbox/);
    // The planning request had only read-only tools.
    const planning = model.requests.find((q) => q.path.endsWith("/chat/completions"))!.body as {
      tools?: { function: { name: string } }[];
    };
    assert.ok(!planning.tools?.some((t) => t.function.name === "write_file"));
  } finally {
    editor.child.stdin!.end();
  }
  assert.equal(await editor.exited, 0, editor.stderr());
  await model.close();
});

test("hands acp: the editor goes away mid-run — the run stops, the process exits 0, the session is kept", async () => {
  const ws = mkdtempSync(join(scratch, "ws-gone-"));
  const env = cleanEnv(join(scratch, "env-gone"));
  const model = await startScriptedServer([
    { content: "Starting a long answer that never ends", chunkSize: 6, stallAfterEvents: 2 },
  ]);
  const editor = startEditor(model, env);
  const agent = editor.conn.agent;
  const sessionId = await newEditorSession(editor, ws);
  const pending = agent
    .request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "remember this request" }],
    })
    .catch((e: Error) => e);
  await waitFor(
    () => editor.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"),
    "the first chunk",
  );
  const gone = Date.now();
  editor.child.stdin!.end();
  assert.equal(await editor.exited, 0, editor.stderr());
  assert.ok(Date.now() - gone < 5000, "exit took more than 5 s");
  assert.ok((await pending) instanceof Error, "the prompt cannot be answered once the editor is gone");
  const saved = readFileSync(join(env.HANDS_DATA_DIR!, "sessions", `${sessionId}.jsonl`), "utf8");
  assert.match(saved, /remember this request/);
  await model.close();
});

test("hands acp: commands run in the CLI's default sandbox (bubblewrap), after the editor's yes", {
  skip: !checkBwrap().ok && "bubblewrap cannot run here",
}, async () => {
  const ws = mkdtempSync(join(scratch, "ws-box-"));
  const env = cleanEnv(join(scratch, "env-box"));
  const probe = join(tmpdir(), `hands-acp-probe-${process.pid}-${Date.now()}`);
  const model = await startScriptedServer([
    {
      toolCalls: [
        {
          id: "r1",
          name: "run_command",
          arguments: { command: `echo made > ${probe}; echo inside > in-workspace.txt; echo ran` },
        },
      ],
    },
    { content: "Ran it." },
  ]);
  // No --sandbox: the default, as an editor starts it; the editor offers its terminal, but
  // without --terminal editor commands stay in Hands' sandbox.
  const editor = startEditor(model, env, { sandbox: null });
  try {
    const agent = editor.conn.agent;
    const sessionId = await newEditorSession(editor, ws, { terminal: true });
    const r = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "run it" }],
    });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(editor.permissions.length, 1);
    assert.equal(editor.permissions[0]!.toolCall.kind, "execute");
    assert.match(
      JSON.stringify(editor.permissions[0]!.toolCall.content),
      new RegExp(probe.replace(/[/.]/g, "\\$&")),
    );
    const end = editor.updates.find(
      (u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed",
    );
    assert.match(JSON.stringify(end?.update), /ran/);
    assert.equal(editor.terminals.size, 0, "no editor terminal without --terminal editor");
    // The workspace is the sandbox's; the host's /tmp is not.
    assert.equal(readFileSync(join(ws, "in-workspace.txt"), "utf8"), "inside\n");
    assert.ok(
      !existsSync(probe),
      `the command wrote the host's /tmp: not sandboxed\n${editor.stderr()}\n${JSON.stringify(end?.update)}`,
    );
  } finally {
    editor.child.stdin!.end();
    rmSync(probe, { force: true });
  }
  assert.equal(await editor.exited, 0, editor.stderr());
  await model.close();
});
