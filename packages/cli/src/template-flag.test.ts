// `hands --template NAME`: the agent's sandbox is a local template. Fast here (no build): an
// unknown template is refused with the command that makes it, and a template on a backend that
// has none (local) is refused by name. The run inside a built template: template-agent.heavy.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { checkBwrap } from "@hands/sandbox";
import { cleanEnv, runHands, scriptedRunArgs } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-template-flag-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("an unknown --template is refused, naming how to build it; so is one in a config file", {
  skip: !checkBwrap().ok && "bubblewrap cannot run here",
  timeout: 60_000,
}, async () => {
  const ws = realpathSync(mkdtempSync(join(scratch, "ws-")));
  const model = await startScriptedServer({
    // A command first; the answer once a tool result came back.
    script: (req) =>
      (req.body?.messages ?? []).some((m: { role: string }) => m.role === "tool")
        ? { content: "done" }
        : { content: "", toolCalls: [{ name: "run_command", arguments: { command: "true" } }] },
  });
  try {
    const env = cleanEnv(scratch, { HANDS_TEMPLATES_DIR: join(scratch, "templates") });
    const r = await runHands(
      [...scriptedRunArgs(model.url, ws), "--sandbox", "bwrap", "--template", "nope", "go"],
      env,
      ws,
    );
    assert.match(`${r.stdout}${r.stderr}`, /no template nope: hands sandbox template build nope/);
    const viaEnv = await runHands(
      [...scriptedRunArgs(model.url, ws), "--sandbox", "bwrap", "go"],
      { ...env, HANDS_TEMPLATE: "Bad Name" },
      ws,
    );
    assert.match(`${viaEnv.stdout}${viaEnv.stderr}`, /invalid template name: Bad Name/);
  } finally {
    await model.close();
  }
});
