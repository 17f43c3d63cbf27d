// Durability: a process killed (SIGKILL) in the middle of writes loses nothing it committed
// and leaves no corruption; and, over random sessions, a compressed chunk's originals can
// always be recalled.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Memory } from "./memory.js";
import { SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "hands-memory-dur-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the writer child until it has committed `atLeast` chunks, then SIGKILLs it. */
export async function killMidWrites(path: string, atLeast: number): Promise<string[]> {
  const writer = fileURLToPath(new URL("./durability-writer.js", import.meta.url));
  const child = spawn(process.execPath, [writer, path], { stdio: ["ignore", "pipe", "inherit"] });
  const committed: string[] = [];
  let buf = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) if (l) committed.push(l);
      if (committed.length >= atLeast && !child.killed) child.kill("SIGKILL");
    });
    child.on("exit", (_code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`writer exited ${signal}`)),
    );
  });
  return committed;
}

test("SIGKILL in the middle of writes: no corruption, nothing committed lost", async () => {
  const path = join(dir, "kill.db");
  const committed = await killMidWrites(path, 300);
  const store = new SqliteStore({ path, dimensions: 256 });
  assert.equal(
    (store.db.pragma("integrity_check") as { integrity_check: string }[])[0]?.integrity_check,
    "ok",
  );
  const found = new Set(store.getMany(committed).map((c) => c.id));
  assert.deepEqual(
    committed.filter((id) => !found.has(id)),
    [],
  );
  // The store still works after recovery.
  assert.ok(store.searchText("payload", {}, 5).length > 0);
  store.close();
});

/** A small deterministic PRNG (mulberry32) so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("property: over random sessions, every compressed chunk's originals are recallable", async () => {
  const types = ["user_input", "tool_result", "thought", "agent_response", "tool_call"] as const;
  for (let seed = 1; seed <= 12; seed++) {
    const rnd = prng(seed);
    const m = new Memory({
      path: join(dir, `prop-${seed}.db`),
      policy: {
        workingBudget: 100 + Math.floor(rnd() * 400),
        shortTermCapacity: 2 + Math.floor(rnd() * 8),
        compressAbove: 20,
      },
    });
    const contents = new Map<string, string>();
    const steps = 30 + Math.floor(rnd() * 50);
    for (let s = 0; s < steps; s++) {
      m.step = s;
      const op = rnd();
      if (op < 0.7) {
        const words = Array.from(
          { length: 1 + Math.floor(rnd() * 120) },
          () => `w${Math.floor(rnd() * 500)}`,
        );
        const c = await m.add({
          type: types[Math.floor(rnd() * types.length)]!,
          content: `s${seed} step ${s}: ${words.join(" ")}`,
        });
        contents.set(c.id, c.content);
      } else if (op < 0.85) {
        const live = m.store.list({ limit: 6, order: rnd() < 0.5 ? "newest" : "oldest" });
        const pick = live.filter(() => rnd() < 0.5).map((c) => c.id);
        if (pick.length) await m.compress(pick, "random compression");
      } else if (op < 0.95) {
        await m.retrieve(`w${Math.floor(rnd() * 500)}`, { budget: 50 + Math.floor(rnd() * 300) });
      } else m.setGoal(`goal w${Math.floor(rnd() * 500)}`);
    }
    for (const summary of m.store.list({ types: ["summary"] })) {
      const r = m.recall(summary.id)!;
      assert.ok(r.originals.length > 0, `seed ${seed}: summary ${summary.id} has originals`);
      for (const o of r.originals) {
        assert.notEqual(o.type, "summary");
        if (contents.has(o.id)) assert.equal(o.content, contents.get(o.id), `seed ${seed}: original intact`);
      }
    }
    for (const [id, content] of contents) {
      const c = m.store.get(id);
      assert.equal(c?.content, content, `seed ${seed}: ${id} kept`);
      if (c?.parent) assert.ok(m.recall(c.parent)!.originals.some((o) => o.id === id));
    }
    m.close();
  }
});
