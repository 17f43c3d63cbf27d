// The approval hook and multi-turn history, through the real loop.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { Message } from "@hands/llm";
import { ScriptedProvider } from "@hands/llm";
import { createSandbox } from "@hands/sandbox";
import { Agent } from "./agent.js";
import { type ApprovalRequest, settingsWriteTarget } from "./approval.js";
import type { AgentEvent } from "./events.js";
import { CommandPolicy } from "./policy/command-policy.js";
import { type ApprovalPrompt, createApprovalGate, type UserAnswer } from "./policy/gate.js";
import { builtinTools } from "./tools/index.js";

const ws = realpathSync(mkdtempSync(join(tmpdir(), "hands-approval-")));
after(() => rmSync(ws, { recursive: true, force: true }));

test("the hook is asked before writes only; a refusal is the observation; history carries over", async () => {
  const asked: ApprovalRequest[] = [];
  const provider = new ScriptedProvider([
    {
      toolCalls: [
        { name: "list_dir", arguments: {} },
        { name: "write_file", arguments: { path: "x.txt", content: "x" } },
      ],
    },
    { content: "could not write" },
    { content: "second turn answer" },
  ]);
  const agent = new Agent({
    provider,
    workspace: ws,
    tools: builtinTools(),
    createSandbox: () => createSandbox({ kind: "local", workspace: ws }),
    approve: async (req) => {
      asked.push(req);
      return { allow: false, source: "user", reason: "not now" };
    },
  });
  const events: AgentEvent[] = [];
  const saved: Message[] = [];
  const first = await agent.run("write x", {
    onEvent: (e) => events.push(e),
    onMessage: (m) => saved.push(m),
  });
  assert.equal(first.status, "done");
  assert.deepEqual(
    asked.map((a) => a.name),
    ["write_file"],
  );
  assert.equal(existsSync(join(ws, "x.txt")), false);
  const denied = first.messages.find((m) => m.role === "tool" && m.name === "write_file");
  assert.match(
    denied?.content ?? "",
    /^DENIED: write_file was not run; refused by the user\. Reason: not now/,
  );
  const approval = events.find((e) => e.type === "approval");
  assert.deepEqual(approval && { allow: approval.allow, source: approval.source }, {
    allow: false,
    source: "user",
  });
  assert.deepEqual(
    saved.map((m) => m.role),
    ["user", "assistant", "tool", "tool", "assistant"],
  );

  const second = await agent.run("and now?", { history: first.messages });
  assert.equal(second.answer, "second turn answer");
  const sent = provider.requests[2]!.messages;
  assert.deepEqual(
    sent.map((m) => m.role),
    ["system", "user", "assistant", "tool", "tool", "assistant", "user"],
  );
  assert.equal(sent.filter((m) => m.role === "system").length, 1);
});

describe("writes into .hands/ (Hands' own settings) are never approved without a person", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hands-settings-")));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, ".hands"));
  writeFileSync(join(root, ".hands", "config.json"), "{}");
  mkdirSync(join(root, "docs"));
  symlinkSync(".hands/config.json", join(root, "link.json"));
  symlinkSync(".hands", join(root, "settings"));
  const req = (name: string, args: Record<string, unknown>): ApprovalRequest => ({
    call: { id: "c", name, arguments: JSON.stringify(args) },
    name,
    args,
    step: 1,
    signal: new AbortController().signal,
  });

  test("which calls count: any tool's path arguments, through symlinks; not code, not lookalikes", async () => {
    const hit = (name: string, args: Record<string, unknown>) => settingsWriteTarget(root, name, args);
    assert.equal(await hit("write_file", { path: ".hands/config.json" }), ".hands/config.json");
    assert.equal(await hit("write_file", { path: `${root}/.hands/policy.json` }), ".hands/policy.json");
    assert.equal(await hit("edit_file", { path: "docs/../.hands/x" }), ".hands/x");
    assert.equal(await hit("write_file", { path: ".hands" }), ".hands", "replacing the folder itself");
    assert.equal(await hit("edit_file", { path: "link.json" }), "link.json", "a symlink to a settings file");
    assert.equal(await hit("write_file", { path: "settings/config.json" }), "settings/config.json");
    assert.equal(
      await hit("mcp__fs__write", { target: ".hands/config.json", data: "{}" }),
      ".hands/config.json",
    );
    assert.equal(await hit("mcp__fs__copy", { paths: ["a", ".hands/policy.json"] }), ".hands/policy.json");
    for (const [name, args] of [
      ["write_file", { path: ".handsome/config.json" }],
      ["write_file", { path: "docs/.hands.md" }],
      ["write_file", { path: "a.txt", content: ".hands/config.json" }],
      ["run_command", { command: "cat .hands/config.json" }],
      ["execute_python", { code: "open('.hands/config.json')" }],
    ] as const)
      assert.equal(await hit(name, args), undefined, JSON.stringify(args));
  });

  test("the gate: refused without a person in every mode, asked every time in a session, no 'always'", async () => {
    const policy = new CommandPolicy([]);
    const asked: ApprovalPrompt[] = [];
    let answer: UserAnswer = { answer: "always" };
    const auto = createApprovalGate({ workspace: root, policy, mode: () => "auto" });
    const write = req("write_file", { path: ".hands/config.json", content: '{"sandbox":"local"}' });
    const refused = await auto(write);
    assert.equal(refused.allow, false);
    assert.equal(refused.rule, "protect .hands/");
    assert.match(
      refused.reason ?? "",
      /\.hands\/config\.json is in \.hands\/.*explicit approval.*nobody can be asked/,
    );
    // Nor for another tool's path argument.
    const mcp = await auto(req("mcp__fs__write", { target: ".hands/policy.json" }));
    assert.equal(mcp.allow, false);
    assert.equal((await auto(req("write_file", { path: "ok.txt", content: "" }))).allow, true);

    const session = createApprovalGate({
      workspace: root,
      policy,
      mode: () => "auto",
      askUser: async (p) => {
        asked.push(p);
        return answer;
      },
    });
    assert.equal((await session(write)).allow, true);
    assert.equal(asked.length, 1, "asked even in approval mode auto");
    assert.equal(asked[0]!.settingsPath, ".hands/config.json");
    assert.equal(asked[0]!.preview?.path, ".hands/config.json");
    // "always" was answered, but the next write to .hands/ is asked again.
    answer = { answer: "no", reason: "not my settings" };
    const second = await session(write);
    assert.deepEqual([second.allow, second.reason], [false, "not my settings"]);
    assert.equal(asked.length, 2);
    const ro = createApprovalGate({
      workspace: root,
      policy,
      mode: () => "read-only",
      askUser: async () => answer,
    });
    assert.equal((await ro(write)).allow, false);
  });
});

test("a tool's duration is its own run time; the wait for approval is its own figure", async () => {
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: "write_file", arguments: { path: "slow-approval.txt", content: "x" } }] },
    { content: "written" },
  ]);
  const wait = 1000;
  const agent = new Agent({
    provider,
    workspace: ws,
    tools: builtinTools(),
    createSandbox: () => createSandbox({ kind: "local", workspace: ws }),
    approve: async () => {
      await new Promise((r) => setTimeout(r, wait)); // a person thinking it over
      return { allow: true, source: "user" };
    },
  });
  const events: AgentEvent[] = [];
  const r = await agent.run("write it", { onEvent: (e) => events.push(e) });
  assert.equal(r.status, "done");
  assert.ok(existsSync(join(ws, "slow-approval.txt")));
  const end = events.find((e) => e.type === "tool_end");
  assert.ok(end?.type === "tool_end");
  assert.ok(end.approvalMs !== undefined && end.approvalMs >= wait - 5, `approvalMs ${end.approvalMs}`);
  assert.ok(end.durationMs < wait * 0.8, `durationMs ${end.durationMs} counts the approval wait`);
  // A call that needs no approval has no approval figure.
  const readOnly = new Agent({
    provider: new ScriptedProvider([{ toolCalls: [{ name: "list_dir", arguments: {} }] }, { content: "ok" }]),
    workspace: ws,
    tools: builtinTools(),
    createSandbox: () => createSandbox({ kind: "local", workspace: ws }),
    approve: async () => ({ allow: true, source: "mode" }),
  });
  const listed: AgentEvent[] = [];
  await readOnly.run("look", { onEvent: (e) => listed.push(e) });
  const listEnd = listed.find((e) => e.type === "tool_end");
  assert.ok(listEnd?.type === "tool_end" && listEnd.approvalMs === undefined);
});
