// The approval hook and multi-turn history, through the real loop.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { Message } from "@hands/llm";
import { ScriptedProvider } from "@hands/llm";
import { createSandbox } from "@hands/sandbox";
import { Agent } from "./agent.js";
import type { ApprovalRequest } from "./approval.js";
import type { AgentEvent } from "./events.js";
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
