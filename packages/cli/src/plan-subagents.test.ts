// --plan with items the planner marks "(independent)": they run at once as sub-agents (their
// requests overlap in time), a failing one is reported to the execution run, which gets every
// report; their tokens count in --max-tokens. Against the scripted model server.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { openSession } from "@hands/sdk/root";
import { isIndependent, itemText } from "./plan.js";
import { runWithPlan } from "./plan-run.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-plan-sub-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

test("the (independent) mark", () => {
  assert.ok(isIndependent("check api.txt (independent)"));
  assert.ok(isIndependent("check api.txt (Independent)  "));
  assert.ok(!isIndependent("independent of nothing: check api.txt"));
  assert.equal(itemText("check api.txt (independent)"), "check api.txt");
});

test("independent plan items run in parallel as sub-agents; the execution run gets their reports", async () => {
  const DELAY = 500;
  const childAt: number[] = [];
  const server = await startScriptedServer((req) => {
    const messages = req.body.messages;
    if (/You are a sub-agent/.test(messages[0].content)) {
      childAt.push(performance.now());
      const prompt: string = messages[1].content;
      if (prompt.includes("broken")) return { status: 400, errorMessage: "cannot do broken" };
      return { content: `report: ${prompt}`, delayMs: DELAY };
    }
    if (messages.some((m: { content: string }) => m.content.startsWith("The plan is accepted")))
      return { content: "all done" };
    return {
      content: [
        "- [ ] check api.txt (independent)",
        "- [ ] check cli.txt (independent)",
        "- [ ] do the broken part (independent)",
        "- [ ] write the summary",
      ].join("\n"),
    };
  });
  servers.push(server);
  const ws = mkdtempSync(join(scratch, "ws-"));
  mkdirSync(join(ws, "data"));
  writeFileSync(join(ws, "api.txt"), "api\n");
  const session = await openSession({
    workspace: ws,
    flags: { baseUrl: server.url, apiKey: "k", model: "m", sandbox: "bwrap", memory: false },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir: join(ws, "data"),
  });
  const types: string[] = [];
  try {
    const result = await runWithPlan(
      session,
      "check things",
      { onEvent: (e) => types.push(e.type) },
      () => {},
    );
    assert.equal(result.status, "done");
    assert.equal(result.answer, "all done");
  } finally {
    await session.close();
  }
  assert.equal(childAt.length, 3);
  assert.ok(Math.max(...childAt) - Math.min(...childAt) < DELAY, "the sub-agents did not overlap");
  assert.equal(types.filter((t) => t === "subagent_start").length, 3);
  const chats = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
  const execution = chats.at(-1)!.body.messages.at(-1).content as string;
  assert.match(execution, /1\. check api\.txt \(done by a sub-agent: see below\)/);
  assert.match(execution, /4\. write the summary\n/);
  assert.match(execution, /- item 1: report: check api\.txt/);
  assert.match(execution, /- item 2: report: check cli\.txt/);
  assert.match(
    execution,
    /- item 3 \(FAILED: do it yourself\): ERROR: the sub-agent did not finish \(error\)/,
  );
});
