import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Memory, workspaceScope } from "./memory.js";

const dir = mkdtempSync(join(tmpdir(), "hands-wsfacts-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("workspace facts: one live fact per key, superseded ones archived and no longer recalled", async () => {
  const path = join(dir, "memory.db");
  const first = new Memory({ path, scope: "run-1" });
  await first.learn("/repo", {
    task: "run the tests",
    outcome: "done",
    commands: ["npm test"],
    facts: [
      { key: "package-manager", text: "Package manager: npm (package-lock.json)." },
      "The API lives in src/api.",
    ],
  });
  first.close();

  // A later process learns the same facts again, and one that changed.
  const second = new Memory({ path, scope: "run-2" });
  const added = await second.learn("/repo", {
    task: "run the tests again",
    outcome: "done",
    commands: ["npm test"],
    facts: [
      { key: "package-manager", text: "Package manager: pnpm (pnpm-lock.yaml)." },
      "The API lives in src/api.",
    ],
  });
  assert.deepEqual(
    added.map((c) => c.meta.kind),
    ["outcome", "repo_fact"],
    "only the outcome and the changed fact are new",
  );
  const scope = workspaceScope("/repo");
  const all = second.store.list({ scope, limit: 100 });
  const pm = all.filter((c) => c.meta.key === "package-manager");
  assert.deepEqual(pm.map((c) => [c.layer, c.content]).sort(), [
    ["archived", "Package manager: npm (package-lock.json)."],
    ["long_term", "Package manager: pnpm (pnpm-lock.yaml)."],
  ]);
  const old = pm.find((c) => c.layer === "archived")!;
  assert.match(second.store.events({ chunkId: old.id }).at(-1)!.reason, /^superseded: Package manager: pnpm/);
  assert.equal(all.filter((c) => c.content === "Command that worked: npm test").length, 1);

  const recalled = await second.recallWorkspace("/repo", "which package manager runs the tests?", 800);
  const texts = recalled.items.map((i) => i.text);
  assert.ok(texts.includes("Package manager: pnpm (pnpm-lock.yaml)."));
  assert.ok(!texts.some((t) => t.includes("package-lock.json")), "the superseded fact is not recalled");
  // Archiving twice, or an unknown id, changes nothing.
  const seq = second.store.lastSeq();
  second.archive(old.id, "again");
  second.archive("m0000000000", "unknown");
  assert.equal(second.store.lastSeq(), seq);
  second.close();
});
