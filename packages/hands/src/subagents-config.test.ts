// Sub-agents from the config files: a trusted folder's (or the user's) "subagents" turns the
// task tool on and bounds it (children at once, their tools, steps and tokens) as the flag and
// the SDK option do; an untrusted folder may narrow it, never turn it on or widen it. Checked
// through resolveSettings on real files and through a session against the scripted server.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type RecordedHttpRequest, type ScriptedServer, startScriptedServer } from "@hands/llm";
import { SettingsError } from "./errors.js";
import { openSession } from "./session.js";
import { resolveSettings } from "./settings.js";
import { trustFolder } from "./trust-store.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-subcfg-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

function place(user: object, project: object, trusted: boolean) {
  const home = mkdtempSync(join(scratch, "home-"));
  const ws = join(home, "ws");
  mkdirSync(join(ws, ".hands"), { recursive: true });
  mkdirSync(join(home, "config", "hands"), { recursive: true });
  writeFileSync(join(home, "config", "hands", "config.json"), JSON.stringify(user));
  writeFileSync(join(ws, ".hands", "config.json"), JSON.stringify(project));
  writeFileSync(join(ws, "a.txt"), "AAA\n");
  const env = { XDG_CONFIG_HOME: join(home, "config"), HOME: home };
  if (trusted) trustFolder(ws, env);
  return { home, ws, env, projectFile: join(ws, ".hands", "config.json") };
}

const bounds = { enabled: true, maxConcurrent: 1, maxSteps: 7, tools: "read-only", maxTokens: 9000 };

test("a trusted project's subagents apply key by key over the user's", () => {
  const p = place({ subagents: { enabled: true, maxSteps: 3 } }, { subagents: { maxConcurrent: 2 } }, true);
  assert.deepEqual(resolveSettings({}, p.ws, p.env).subagents, {
    enabled: true,
    maxSteps: 3,
    maxConcurrent: 2,
  });
});

test("an untrusted project may narrow sub-agents, never turn them on or give children every tool", () => {
  const p = place({}, { subagents: { ...bounds, tools: "all" } }, false);
  const s = resolveSettings({}, p.ws, p.env);
  assert.deepEqual(s.subagents, { maxConcurrent: 1, maxSteps: 7, maxTokens: 9000 });
  assert.ok(
    s.ignored.some((i) => i.startsWith("subagents.enabled true (")),
    s.ignored.join("\n"),
  );
  assert.ok(
    s.ignored.some((i) => i.startsWith('subagents.tools "all" (')),
    s.ignored.join("\n"),
  );
  // Turning them off, or keeping children read-only, applies untrusted.
  const q = place(
    { subagents: { enabled: true } },
    { subagents: { enabled: false, tools: "read-only" } },
    false,
  );
  assert.deepEqual(resolveSettings({}, q.ws, q.env).subagents, { enabled: false, tools: "read-only" });
});

test("wrong values name the file, the key and what it must be", () => {
  for (const [value, expected] of [
    [{ enabled: "yes" }, /subagents\.enabled must be true or false, got "yes"/],
    [{ maxConcurrent: 0 }, /subagents\.maxConcurrent must be a whole number from 1 to 64, got 0/],
    [{ tools: "write" }, /subagents\.tools must be "read-only" or "all", got "write"/],
    [{ maxStep: 3 }, /unknown key subagents\.maxStep \(did you mean "maxSteps"\?\)/],
    [true, /"subagents" must be a JSON object/],
  ] as const) {
    const p = place({}, { subagents: value }, true);
    assert.throws(
      () => resolveSettings({}, p.ws, p.env),
      (e: Error) =>
        e instanceof SettingsError && e.message.startsWith(p.projectFile) && expected.test(e.message),
    );
  }
});

/** A session of the workspace with its config files, against a server that scripts parent and children. */
async function sessionRun(p: ReturnType<typeof place>) {
  const arrivals: { child: boolean; tools: string[]; at: number; done?: number }[] = [];
  let parentTurn = 0;
  const server = await startScriptedServer((req: RecordedHttpRequest) => {
    const child = /You are a sub-agent/.test(req.body.messages[0].content);
    arrivals.push({
      child,
      tools: (req.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name),
      at: performance.now(),
    });
    if (child) return { content: "report", delayMs: 300 };
    parentTurn++;
    if (parentTurn > 1) return { content: "done" };
    return {
      toolCalls: [
        { name: "task", arguments: { prompt: "one", tools: "all" } },
        { name: "task", arguments: { prompt: "two", tools: "all" } },
      ],
    };
  });
  servers.push(server);
  const session = await openSession({
    workspace: p.ws,
    flags: { baseUrl: server.url, apiKey: "k", model: "m", sandbox: "local", memory: false },
    env: p.env,
    approvalDefault: "auto",
    save: false,
    dataDir: join(p.home, "data"),
    report: () => {},
  });
  try {
    const result = await session.run("survey");
    return { result, arrivals };
  } finally {
    await session.close();
  }
}

test("a trusted config turns the task tool on with its bounds: one child at a time, read-only children", async () => {
  const p = place({}, { subagents: bounds }, true);
  const { result, arrivals } = await sessionRun(p);
  assert.equal(result.status, "done");
  assert.ok(arrivals[0]!.tools.includes("task"), "no task tool");
  const children = arrivals.filter((a) => a.child);
  assert.equal(children.length, 2);
  // maxConcurrent 1: the second child asks only after the first one's 300 ms answer.
  assert.ok(children[1]!.at - children[0]!.at >= 250, `${children[1]!.at - children[0]!.at} ms apart`);
  // tools "read-only": the model asked for "all", the children got no write or command tool.
  for (const c of children) {
    assert.ok(c.tools.includes("read_file"), c.tools.join(","));
    for (const w of ["write_file", "edit_file", "run_command"])
      assert.ok(!c.tools.includes(w), c.tools.join(","));
  }
});

test("the same config in an untrusted folder does not offer the task tool", async () => {
  const p = place({}, { subagents: bounds }, false);
  const { arrivals } = await sessionRun(p);
  assert.ok(!arrivals[0]!.tools.includes("task"), arrivals[0]!.tools.join(","));
});

test("maxTokens from the config is each child's own budget: a child stops at it, the parent goes on", async () => {
  const p = place({ subagents: { enabled: true, maxTokens: 1000 } }, {}, true);
  let parentTurn = 0;
  const server = await startScriptedServer((req: RecordedHttpRequest) => {
    if (/You are a sub-agent/.test(req.body.messages[0].content))
      return {
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { inputTokens: 400, outputTokens: 0 },
      };
    parentTurn++;
    return parentTurn === 1
      ? { toolCalls: [{ name: "task", arguments: { prompt: "loop" } }] }
      : { content: "the child ran out of tokens" };
  });
  servers.push(server);
  const session = await openSession({
    workspace: p.ws,
    flags: { baseUrl: server.url, apiKey: "k", model: "m", sandbox: "local", memory: false },
    env: p.env,
    approvalDefault: "auto",
    save: false,
    dataDir: join(p.home, "data"),
    report: () => {},
  });
  const ends: { type: string; status?: string; steps?: number; reason?: string }[] = [];
  try {
    const result = await session.run("go", { onEvent: (e) => e.type === "subagent_end" && ends.push(e) });
    assert.equal(result.status, "done", "the parent has no budget of its own and goes on");
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.status, "token_budget");
    assert.equal(ends[0]!.steps, 3, "3 × 400 ≥ 1000 after the child's third step");
    assert.match(ends[0]!.reason ?? "", /token budget of 1000/);
  } finally {
    await session.close();
  }
});
