// `hands sessions`: the saved sessions of this workspace, through the real bin; a model with no
// known price shows "–" for its cost, as the dashboard does, not "$0.0000".
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { createSession } from "@hands/sdk";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-sessions-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("hands sessions: cost – for a model without a price, dollars for one with a price", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const env = cleanEnv(scratch);
  const server = await startScriptedServer([{ content: "hello" }, { content: "priced hello" }]);
  try {
    for (const [model, task] of [
      ["local-model", "say hello"],
      ["gpt-4o", "say a priced hello"],
    ] as const) {
      const s = await createSession({
        workspace: ws,
        baseURL: server.url,
        apiKey: "k",
        model,
        sandbox: "local",
        memory: false,
        dataDir: env.HANDS_DATA_DIR!,
        env,
      });
      const r = await s.run(task);
      assert.equal(r.status, "done");
      await s.close();
    }
  } finally {
    await server.close();
  }
  const r = await runHands(["sessions"], env, ws);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 3, r.stdout);
  const unpriced = lines.find((l) => l.endsWith("say hello"))!;
  const priced = lines.find((l) => l.endsWith("say a priced hello"))!;
  assert.match(unpriced, / – {2}say hello$/);
  assert.doesNotMatch(r.stdout, /\$0\.0000/);
  assert.match(priced, / \$\d+\.\d{2,4} {2}say a priced hello$/);

  const other = await runHands(["sessions"], env, mkdtempSync(join(scratch, "ws-")));
  assert.match(other.stdout, /^No sessions in this workspace/);
  const all = await runHands(["sessions", "--all"], env, scratch);
  assert.equal(all.stdout.trim().split("\n").length, 3);
  const bad = await runHands(["sessions", "--al"], env, ws);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown argument --al/);
});
