import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { JsonLines } from "./json-lines.js";

const turn = () => new Promise((r) => setImmediate(r));

test("lines queued in one turn go out in one write, in order, once the turn ends", async () => {
  const writes: string[] = [];
  const lines = new JsonLines((t) => writes.push(t));
  lines.write({ n: 1 });
  lines.write({ n: 2, text: "a\nb" });
  await Promise.resolve(); // later microtasks of the same turn join the batch
  lines.write({ n: 3 });
  assert.deepEqual(writes, [], "nothing written before the turn ends");
  await turn();
  assert.deepEqual(writes, ['{"n":1}\n{"n":2,"text":"a\\nb"}\n{"n":3}\n']);
  lines.write({ n: 4 });
  await turn();
  assert.deepEqual(writes.slice(1), ['{"n":4}\n']);
  await turn();
  assert.equal(writes.length, 2, "no empty writes");
});

test("flush writes pending lines at once; a later turn writes nothing twice", async () => {
  const writes: string[] = [];
  const lines = new JsonLines((t) => writes.push(t));
  lines.write({ a: 1 });
  lines.flush();
  assert.deepEqual(writes, ['{"a":1}\n']);
  await turn();
  assert.deepEqual(writes, ['{"a":1}\n']);
});

test("a process that exits right after queueing loses no line when it flushes on exit", () => {
  const mod = fileURLToPath(new URL("./json-lines.js", import.meta.url));
  const script = `import { JsonLines } from ${JSON.stringify(mod)};
    const lines = new JsonLines((t) => process.stdout.write(t));
    process.on("exit", lines.flush);
    for (let i = 0; i < 1000; i++) lines.write({ i });
    process.exit(3);`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 3);
  const got = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).i);
  assert.deepEqual(
    got,
    Array.from({ length: 1000 }, (_, i) => i),
  );
});
