// Through the real bin: a misspelt key in ~/.config/hands/config.json or a misspelt HANDS_*
// variable is said on stderr (even with --quiet), with the real name; the run goes on without it.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { cleanEnv, runHands, scriptedRunArgs } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-cfgwarn-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("a misspelt config key and HANDS_* variable: a warning naming the real one; the run goes on", async () => {
  const server = await startScriptedServer([{ content: "done" }]);
  try {
    const config = join(scratch, "config", "hands", "config.json");
    mkdirSync(join(scratch, "config", "hands"), { recursive: true });
    writeFileSync(config, JSON.stringify({ maxStep: 1 }));
    const ws = mkdtempSync(join(scratch, "ws-"));
    const r = await runHands(
      [...scriptedRunArgs(server.url, ws), "--sandbox", "local", "do it"],
      cleanEnv(scratch, { HANDS_MAX_TOKEN: "10" }),
      ws,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `hands: warning: ${config}: unknown setting "maxStep" \\(did you mean "maxSteps"\\?\\); it is ignored`,
      ),
    );
    assert.match(
      r.stderr,
      /hands: warning: HANDS_MAX_TOKEN is not a Hands setting \(did you mean HANDS_MAX_TOKENS\?\)/,
    );
    const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { status: string };
    assert.equal(last.status, "done");

    writeFileSync(config, JSON.stringify({ maxSteps: "ten" }));
    const bad = await runHands([...scriptedRunArgs(server.url, ws), "do it"], cleanEnv(scratch), ws);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, `hands: ${config}: "maxSteps" must be a positive whole number, got "ten"\n`);
    assert.equal(server.requests.filter((q) => q.path.endsWith("/chat/completions")).length, 1);
  } finally {
    await server.close();
  }
});
