// `hands --sandbox e2b` end to end: the real `hands` CLI (a child process, the scripted model
// server validating every request) runs its commands in a real `hands serve` (bwrap backend)
// through the official e2b SDK; the test looks into the served sandbox with the same SDK.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type RecordedHttpRequest,
  type ServerScript,
  type ServerTurn,
  startScriptedServer,
} from "@hands/llm";
import { checkBwrap } from "@hands/sandbox";
import type { RunningServe } from "@hands/serve";
import { Sandbox } from "e2b";
import { BIN, cleanEnv, runHands } from "./testing/cli-process.js";
import { type LoopbackServe, startLoopbackServe } from "./testing/serve.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** The text of the last tool result the model was sent. */
function lastToolResult(req: RecordedHttpRequest): string {
  const tools = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
  const last = tools[tools.length - 1];
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
}

const run = (command: string, timeout?: number): ServerTurn => ({
  content: "",
  toolCalls: [{ name: "run_command", arguments: { command, ...(timeout ? { timeout } : {}) } }],
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe("hands --sandbox e2b against hands serve", { skip, timeout: 180_000 }, () => {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-e2b-")));
  let served: LoopbackServe;
  let serve: RunningServe;
  let key: string;
  let sdk: LoopbackServe["sdk"];

  before(async () => {
    served = await startLoopbackServe("agent-tests");
    ({ serve, key, sdk } = served);
  });
  after(async () => {
    await served?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const running = async () =>
    (await Sandbox.list({ ...sdk, query: { state: ["running"] } }).nextItems()).filter(
      (s) => s.metadata["hands.session"] !== undefined,
    );

  function workspace(): string {
    const ws = mkdtempSync(join(scratch, "ws-"));
    writeFileSync(join(ws, "README.md"), "hello from the host\n");
    mkdirSync(join(ws, "node_modules", "dep"), { recursive: true });
    writeFileSync(join(ws, "node_modules", "dep", "index.js"), "module.exports = 1;\n");
    return ws;
  }

  /** `hands` arguments for one task with --sandbox e2b against `model`. */
  const handsArgs = (model: { url: string }, flags: string[] = []) => [
    ...["--base-url", model.url, "--api-key", "k", "--model", "m", "--no-memory", "--sandbox", "e2b"],
    ...flags,
    "do it",
  ];
  const handsEnv = (env: Record<string, string> = {}) =>
    cleanEnv(scratch, {
      E2B_API_KEY: key,
      E2B_API_URL: serve.apiUrl,
      E2B_SANDBOX_URL: serve.sandboxUrl,
      ...env,
    });

  /** The id of the agent's sandbox once `marker` exists in its workspace there. */
  async function sandboxWith(marker: string): Promise<string> {
    for (let n = 0; n < 300; n++) {
      const id = (await running())[0]?.sandboxId;
      const there = id
        ? await Sandbox.connect(id, sdk)
            .then((b) => b.files.exists(`/home/user/workspace/${marker}`))
            .catch(() => false)
        : false;
      if (id && there) return id;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`no sandbox ever had ${marker}`);
  }

  async function hands(
    ws: string,
    script: ServerScript,
    env: Record<string, string> = {},
    flags: string[] = [],
  ) {
    const model = await startScriptedServer({ script });
    const r = await runHands(handsArgs(model, flags), handsEnv(env), ws);
    await model.close();
    return { ...r, requests: model.requests.filter((q) => q.path.endsWith("/chat/completions")) };
  }

  test("commands run in the served sandbox, edits land in the local workspace, the sandbox is gone after", async () => {
    const ws = workspace();
    const seen: string[] = [];
    let inside = "";
    const r = await hands(ws, async (req, i) => {
      if (i > 0) seen.push(lastToolResult(req));
      if (i === 0)
        return run(
          "pwd; cat README.md; echo made-in-sandbox > made.txt; sed -i 's/host/sandbox/' README.md; ls node_modules 2>&1; true",
        );
      if (i === 1) {
        // Look into the sandbox the agent uses, through the SDK: the file is there.
        const list = await running();
        assert.equal(list.length, 1);
        const box = await Sandbox.connect((list[0] as { sandboxId: string }).sandboxId, sdk);
        inside = (await box.commands.run("cat /home/user/workspace/made.txt")).stdout;
        return {
          content: "",
          toolCalls: [
            { name: "write_file", arguments: { path: "host.txt", content: "written on the host\n" } },
          ],
        };
      }
      if (i === 2) return run("cat host.txt; ls");
      return { content: "done" };
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(inside, "made-in-sandbox\n");
    // A clean run (exit 0, nothing on stderr: `2>&1` folded it in) is its output alone.
    assert.doesNotMatch(seen[0] ?? "", /exit code/);
    assert.match(seen[0] ?? "", /\/home\/user\/workspace\nhello from the host\n/);
    assert.match(seen[0] ?? "", /No such file or directory/, "node_modules is not copied into the sandbox");
    assert.match(
      seen[2] ?? "",
      /written on the host/,
      "a host edit reaches the sandbox before the next command",
    );
    assert.equal(readFileSync(join(ws, "made.txt"), "utf8"), "made-in-sandbox\n");
    assert.equal(readFileSync(join(ws, "README.md"), "utf8"), "hello from the sandbox\n");
    assert.equal(readFileSync(join(ws, "node_modules", "dep", "index.js"), "utf8"), "module.exports = 1;\n");
    assert.deepEqual(await running(), [], "the sandbox was killed when the run ended");
  });

  test("Ctrl-C during a command stops the run and kills the sandbox at once", async () => {
    const ws = workspace();
    const model = await startScriptedServer({
      script: [run("echo up > up.txt; sleep 60", 120), { content: "never" }],
    });
    const child = spawn(process.execPath, [BIN, ...handsArgs(model)], {
      cwd: ws,
      env: handsEnv(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await sandboxWith("up.txt");
    const t0 = Date.now();
    child.kill("SIGINT");
    const code = await exited;
    await model.close();
    assert.notEqual(code, 0, stderr);
    assert.ok(Date.now() - t0 < 15_000, "the run stopped promptly");
    assert.deepEqual(await running(), [], "killed on the way out, not left to its timeout");
  });

  test("a wrong key is a tool result the model reads (401), and the run ends", async () => {
    const ws = workspace();
    const r = await hands(ws, [run("echo hi"), { content: "gave up" }], {
      E2B_API_KEY: "e2b_0000000000000000",
    });
    assert.equal(r.code, 0, r.stderr);
    const result = lastToolResult(r.requests[1] as RecordedHttpRequest);
    assert.match(
      result,
      /^ERROR: could not run the command: the E2B service at http:\/\/127\.0\.0\.1:\d+ refused the API key \(401/,
    );
    assert.match(result, /E2B_API_KEY/);
  });

  test("a service that is down is a clear tool result, not a hang", async () => {
    const ws = workspace();
    const port = await freePort();
    const t0 = Date.now();
    const r = await hands(ws, [run("echo hi"), { content: "gave up" }], {
      E2B_API_URL: `http://127.0.0.1:${port}`,
      E2B_SANDBOX_URL: `http://127.0.0.1:${port}`,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      lastToolResult(r.requests[1] as RecordedHttpRequest),
      /cannot reach the E2B service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    assert.ok(Date.now() - t0 < 30_000);
  });

  test("no key at all is a usage error before anything runs", async () => {
    const ws = workspace();
    const r = await hands(ws, [{ content: "never asked" }], { E2B_API_KEY: "" });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /needs an API key: set E2B_API_KEY/);
    assert.equal(r.requests.length, 0);
  });

  test("--e2b-template chooses the template (config and HANDS_E2B_TEMPLATE are below it)", async () => {
    const ws = workspace();
    const r = await hands(ws, [run("echo hi"), { content: "ok" }], { HANDS_E2B_TEMPLATE: "bwrap" }, [
      "--e2b-template",
      "no-such-template",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(lastToolResult(r.requests[1] as RecordedHttpRequest), /no such template .*no-such-template/);
    const viaEnv = await hands(ws, [run("echo hi"), { content: "ok" }], {
      HANDS_E2B_TEMPLATE: "no-such-either",
    });
    assert.match(lastToolResult(viaEnv.requests[1] as RecordedHttpRequest), /no-such-either/);
  });

  test("a full quota (429) is a clear tool result", async () => {
    const ws = workspace();
    const limited = (await serve.keys.create("one-sandbox", "k", { maxSandboxes: 1 })).key;
    const hog = await Sandbox.create({ apiKey: limited, apiUrl: serve.apiUrl, sandboxUrl: serve.sandboxUrl });
    try {
      const r = await hands(ws, [run("echo hi"), { content: "gave up" }], { E2B_API_KEY: limited });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        lastToolResult(r.requests[1] as RecordedHttpRequest),
        /is at its limit for this key .*maximum number of concurrent sandboxes \(1\)/,
      );
    } finally {
      await hog.kill();
    }
  });

  test("a sandbox killed mid-command: the result says so, the next command gets a new sandbox", async () => {
    const ws = workspace();
    const results: string[] = [];
    const killed: string[] = [];
    const t0 = Date.now();
    const r = await hands(ws, async (req, i) => {
      if (i > 0) results.push(lastToolResult(req));
      if (i === 0) {
        // Once the command is sleeping (its marker exists in the sandbox), kill the sandbox.
        void sandboxWith("started.txt").then(async (id) => {
          killed.push(id);
          await Sandbox.kill(id, sdk);
        });
        return run("echo started > started.txt; sleep 40", 60);
      }
      if (i === 1) return run("cat README.md; ls");
      return { content: "done" };
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(killed.length, 1);
    assert.ok(Date.now() - t0 < 40_000, "the killed command did not wait for its sleep");
    assert.match(
      results[0] ?? "",
      /^ERROR: could not run the command: the command did not finish: the E2B sandbox \w+ ended \(killed, or its timeout passed\)/,
    );
    assert.match(results[1] ?? "", /exit code: 0\nstdout:\nhello from the host\nREADME.md\n/);
    assert.match(results[1] ?? "", /the previous E2B sandbox was gone/);
    assert.deepEqual(await running(), []);
  });
});
