import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { registerShare, sharedElsewhere, unregisterShare } from "./share-registry.js";

const asRoot = process.getuid?.() === 0;

// Another live Hands process sharing W2 (with a pass-through on P2) must keep W2 and P2 shared,
// and must not stop this process from taking back its own pass-through on P1: a check that only
// asked "does anyone share anything" left P1's entry behind whenever two runs overlapped.
test("another process's share keeps only its own workspace and folders above it", {
  skip: !asRoot && "needs root (the registry is root's)",
}, async () => {
  const registry = fileURLToPath(new URL("./share-registry.js", import.meta.url));
  const tag = `${process.pid}-${Date.now()}`;
  const [w1, p1, w2, p2] = ["w1", "p1", "w2", "p2"].map((n) => `/nonexistent-${tag}/${n}`) as [
    string,
    string,
    string,
    string,
  ];
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const r = await import(${JSON.stringify(registry)}); r.registerShare(${JSON.stringify(w2)}, [${JSON.stringify(p2)}]); console.log("ready"); setInterval(() => {}, 1000);`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    await once(child.stdout, "data");
    registerShare(w1, [p1]);
    const mine = sharedElsewhere(w1, [p1, p2]);
    assert.equal(mine.workspace, false);
    assert.deepEqual([...mine.above], [p2]);
    assert.equal(sharedElsewhere(w2, []).workspace, true);
  } finally {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  // A process that is gone no longer counts (its files are swept).
  const after = sharedElsewhere(w2, [p2]);
  assert.equal(after.workspace, false);
  assert.equal(after.above.size, 0);
  unregisterShare(w1, [p1]);
});
