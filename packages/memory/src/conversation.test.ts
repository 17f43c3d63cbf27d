// The assembler in a conversation: the current request (not only the first) is always sent,
// and after a fresh start on the same memory (e.g. /compact), earlier parts are found again.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { Message } from "@hands/llm";
import { ContextAssembler } from "./context.js";
import { Memory } from "./memory.js";

const dir = mkdtempSync(join(tmpdir(), "hands-conversation-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function turn(history: Message[], request: string, steps: number, label: string): number {
  history.push({ role: "user", content: request });
  const at = history.length - 1;
  for (let s = 0; s < steps; s++) {
    const id = `${label}${s}`;
    history.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id, name: "read_file", arguments: `{"path":"${label}${s}.txt"}` }],
    });
    history.push({
      role: "tool",
      toolCallId: id,
      name: "read_file",
      content: `${label} output ${s}\n${"data ".repeat(300)}`,
    });
  }
  return at;
}

test("the current request is always sent, and the goal follows it", async () => {
  const memory = new Memory({ path: join(dir, "a.db") });
  const asm = new ContextAssembler(memory, { budget: 1200 });
  const history: Message[] = [{ role: "system", content: "sys" }];
  turn(history, "first request: list the files", 2, "a");
  history.push({ role: "assistant", content: "Listed." });
  const task = turn(history, "second request: the checksum of kiwi.bin", 0, "b");
  let sent: Message[] = [];
  // The request's own steps push it out of the recent window.
  for (let s = 0; s < 6; s++) {
    const id = `k${s}`;
    history.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id, name: "run_command", arguments: `{"command":"step ${s}"}` }],
    });
    history.push({
      role: "tool",
      toolCallId: id,
      name: "run_command",
      content: `step ${s}\n${"noise ".repeat(400)}`,
    });
    sent = await asm.assemble(history, s + 1, task);
  }
  assert.equal(sent[1], history[1], "the first request opened the conversation");
  assert.ok(sent.includes(history[task]!), "the current request is sent");
  // In history order: the request comes before its steps.
  assert.ok(sent.indexOf(history[task]!) < sent.indexOf(history.at(-1)!));
  assert.match(asm.last?.query ?? "", /^second request: the checksum of kiwi\.bin/);
  // Without the index, the same history drops it (it is only the first request that is pinned).
  const plain = new ContextAssembler(new Memory(), { budget: 1200 });
  const without = await plain.assemble(history, 1);
  assert.ok(!without.includes(history[task]!));
  await asm.flush();
  await plain.flush();
  memory.close();
});

test("a new assembler on the same memory finds the earlier conversation again", async () => {
  const memory = new Memory({ path: join(dir, "b.db") });
  const before = new ContextAssembler(memory, { budget: 1500 });
  const old: Message[] = [{ role: "system", content: "sys" }];
  turn(old, "set up the service", 1, "s");
  old.push({ role: "user", content: "Note: the staging password rotates every 45 days via vault_rotate.sh" });
  old.push({ role: "assistant", content: "Noted." });
  await before.assemble(old, 1);
  await before.assemble([...old, { role: "user", content: "ok" }], 2);
  await before.flush();

  const after = new ContextAssembler(memory, { budget: 1500 });
  const fresh: Message[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "Summary of the conversation so far: service set up." },
    { role: "assistant", content: "Understood." },
  ];
  turn(fresh, "how often does the staging password rotate?", 3, "n");
  const sent = await after.assemble(fresh, 1);
  const text = sent.map((m) => m.content).join("\n");
  assert.match(text, /vault_rotate\.sh/, "the earlier note is a memory note");
  assert.doesNotMatch(text, /\] step \d+ system event/, "the earlier system prompt is not");
  await after.flush();
  memory.close();
});
