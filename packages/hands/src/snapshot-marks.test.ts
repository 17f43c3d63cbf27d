// Memory marks snapshot points as a run goes (packages/memory snapshot-marks): each compaction
// point the context assembler reaches, and the end of the session — read back from the real
// memory file, with the steps they were made at and counts that agree with the file.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { memoryMapAt, SqliteStore, snapshotMarks, storedDimensions } from "@hands/memory";
import { openAgentMemory } from "./index.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-snapshot-marks-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("a run whose context outgrows the budget marks its compaction points and its end", async () => {
  const workspace = join(scratch, "ws");
  mkdirSync(workspace);
  const steps = 8;
  for (let i = 0; i < steps; i++)
    writeFileSync(
      join(workspace, `part${i}.txt`),
      `${`part ${i}: ${"lorem ipsum dolor sit amet ".repeat(8)}\n`.repeat(12)}`,
    );
  const server = await startScriptedServer([
    ...Array.from({ length: steps }, (_, i) => ({
      toolCalls: [{ name: "read_file", arguments: { path: `part${i}.txt` } }],
    })),
    { content: "read them all" },
  ]);
  const { Agent, builtinTools } = await import("@hands/agent");
  const { createProvider } = await import("@hands/llm");
  const provider = createProvider({ provider: "openai", model: "m", baseURL: server.url, apiKey: "k" });
  const dataDir = join(scratch, "data");
  const memory = await openAgentMemory({ provider, workspace, dataDir, contextBudget: 1500 });
  try {
    const agent = new Agent({
      provider,
      workspace,
      tools: [...builtinTools(), memory.tool],
      ...memory.agentOptions(),
      createSandbox: async () => {
        throw new Error("no commands in this test");
      },
    });
    const result = await agent.run("read every part file");
    assert.equal(result.status, "done");
    await memory.learn("read every part file", result);
  } finally {
    await memory.close();
    await server.close();
  }
  const path = join(dataDir, "memory.db");
  const store = new SqliteStore({ path, dimensions: storedDimensions(path) ?? 256, readonly: true });
  try {
    const marks = snapshotMarks(store).reverse();
    const compactions = marks.filter((m) => m.reason === "compaction point");
    assert.ok(compactions.length >= 1, `marks: ${marks.map((m) => `${m.reason}@${m.step}`).join(", ")}`);
    assert.equal(marks.at(-1)?.reason, "session end");
    assert.equal(marks.at(-1)?.step, steps + 1);
    for (const [i, m] of marks.entries()) {
      assert.ok(m.step !== undefined && m.step >= 1 && m.step <= steps + 1);
      if (i > 0) assert.ok(m.seq >= marks[i - 1]!.seq && m.step >= marks[i - 1]!.step!, "in log order");
      // The counts recorded are the ones the log rebuilds at that point.
      const replayed = memoryMapAt(store, m.seq, { scope: m.scope }).cells.reduce((n, c) => n + c.chunks, 0);
      assert.equal(replayed, m.chunks, `${m.reason} at step ${m.step}`);
    }
  } finally {
    store.close();
  }
});
