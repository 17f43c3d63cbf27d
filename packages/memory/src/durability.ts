// Durability checks, shared by the default tests (few cases) and the benchmark (many):
// SIGKILL a writer mid-writes, and random sessions whose compressed chunks must stay recallable.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Memory } from "./memory.js";

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

/** A small deterministic PRNG (mulberry32) so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Plays one random session (seeded) and checks every summary expands to intact originals. Throws on failure. */
export async function checkRandomSession(
  dir: string,
  seed: number,
): Promise<{ summaries: number; chunks: number }> {
  const fail = (msg: string) => {
    throw new Error(`seed ${seed}: ${msg}`);
  };
  const types = ["user_input", "tool_result", "thought", "agent_response", "tool_call"] as const;
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
      const words = Array.from({ length: 1 + Math.floor(rnd() * 120) }, () => `w${Math.floor(rnd() * 500)}`);
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
    if (r.originals.length === 0) fail(`summary ${summary.id} has no originals`);
    for (const o of r.originals) {
      if (o.type === "summary") fail(`recall of ${summary.id} returned a summary`);
      if (contents.has(o.id) && o.content !== contents.get(o.id)) fail(`original ${o.id} changed`);
    }
  }
  for (const [id, content] of contents) {
    const c = m.store.get(id);
    if (c?.content !== content) fail(`${id} lost or changed`);
    if (c?.parent && !m.recall(c.parent)?.originals.some((o) => o.id === id))
      fail(`${id} not reachable from its summary`);
  }
  const summaries = m.store.count({ types: ["summary"] });
  const chunks = m.store.count();
  m.close();
  return { summaries, chunks };
}
