// Reasoning models through the real `hands` bin: what the live view, --json, the trace and the
// answer carry of the model's thinking, and --reasoning from flag, environment and config.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type ServerScript, startScriptedServer } from "@hands/llm";
import { BIN, cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-reasoning-test-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const THOUGHT = "The user wants a listing. I will call list_dir, then count.";
const SCRIPT: ServerScript = [
  {
    reasoning: THOUGHT,
    toolCalls: [{ name: "list_dir", arguments: {} }],
    usage: { inputTokens: 300, outputTokens: 60, reasoningTokens: 45 },
  },
  { reasoning: "One file: a.txt.", content: "There is 1 file." },
];

async function withServer(
  script: ServerScript,
  fn: (s: { url: string; origin: string; requests: { body: any }[] }) => Promise<void>,
  options = {},
) {
  const server = await startScriptedServer({ script, ...options });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function workspace(): string {
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, "a.txt"), "x");
  return ws;
}

describe("hands with a reasoning model", () => {
  test("thinking is shown collapsed, kept in --json and the trace, and never in the answer", async () => {
    await withServer(
      SCRIPT,
      async (server) => {
        const ws = workspace();
        const trace = join(scratch, "t1.jsonl");
        const flags = ["--base-url", server.url, "--api-key", "k", "--model", "deepseek-chat", "--cwd", ws];
        const plain = await runHands(
          [...flags, "--trace", trace, "--sandbox", "local", "how many files?"],
          cleanEnv(scratch),
        );
        assert.equal(plain.code, 0, plain.stderr);
        assert.equal(plain.stdout.trim(), "There is 1 file.");
        assert.match(plain.stderr, /✻ thought \(45 tokens\): The user wants a listing/);
        const events = readFileSync(trace, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
        const thoughts = events.filter((e) => e.type === "thinking");
        assert.deepEqual(
          thoughts.map((e) => [e.step, e.text, e.tokens]),
          [
            [1, THOUGHT, 45],
            [2, "One file: a.txt.", undefined],
          ],
        );
        assert.ok(
          !events.some((e) => e.type === "thinking_delta"),
          "the trace keeps whole thoughts, not deltas",
        );
        const result = events.at(-1);
        assert.equal(result.type, "result");
        assert.equal(result.answer, "There is 1 file.");
        assert.equal(result.usage.reasoningTokens, 45);
        // The tool-call turn's reasoning went back to the server (DeepSeek's rule), the answer's did not.
        const back = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "assistant");
        assert.equal(back.reasoning_content, THOUGHT);
      },
      { reasoningEcho: "required" },
    );
  });

  test("--json carries thinking deltas and the whole thought, in order", async () => {
    await withServer(SCRIPT, async (server) => {
      const ws = workspace();
      const run = await runHands(
        [
          "--base-url",
          server.url,
          "--api-key",
          "k",
          "--model",
          "m",
          "--cwd",
          ws,
          "--json",
          "--sandbox",
          "local",
          "count",
        ],
        cleanEnv(scratch),
      );
      assert.equal(run.code, 0, run.stderr);
      const events = run.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const types = events.map((e) => e.type);
      const firstDelta = types.indexOf("thinking_delta");
      const whole = types.indexOf("thinking");
      assert.ok(
        firstDelta >= 0 && whole > firstDelta && types.indexOf("model_response") > whole,
        types.join(","),
      );
      const streamed = events.filter((e) => e.type === "thinking_delta" && e.step === 1).map((e) => e.text);
      assert.equal(streamed.join(""), THOUGHT);
      assert.ok(!events.some((e) => e.type === "text_delta" && /list_dir|listing/.test(e.text)));
    });
  });

  test("Anthropic: --reasoning high turns thinking on and the tool loop passes the API's checks", async () => {
    await withServer(
      [
        {
          reasoning: "List first.",
          redactedThinking: true,
          toolCalls: [{ name: "list_dir", arguments: {} }],
        },
        { reasoning: "Done.", content: "1 file" },
      ],
      async (server) => {
        const ws = workspace();
        const run = await runHands(
          [
            "--provider",
            "anthropic",
            "--base-url",
            server.origin,
            "--api-key",
            "k",
            "--model",
            "claude-sonnet-4-5",
          ].concat(["--reasoning", "high", "--cwd", ws, "--sandbox", "local", "count"]),
          cleanEnv(scratch),
        );
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stdout.trim(), "1 file");
        assert.equal(server.requests.length, 2);
        assert.equal(server.requests[0]!.body.thinking.type, "enabled");
        const turn = server.requests[1]!.body.messages[1];
        assert.deepEqual(
          turn.content.map((b: { type: string }) => b.type),
          ["thinking", "redacted_thinking", "tool_use"],
        );
      },
    );
  });

  test("a session shows each thought on one line and /thinking prints it whole", async () => {
    const long = "First I list the files.\nThen I count them.\nSECOND-LINE-MARKER";
    await withServer(
      [
        { reasoning: long, toolCalls: [{ name: "list_dir", arguments: {} }] },
        { content: "There is 1 file." },
      ],
      async (server) => {
        const ws = workspace();
        const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            [BIN, "-i", "--base-url", server.url, "--api-key", "k", "--model", "m", "--sandbox", "local"],
            { cwd: ws, env: cleanEnv(scratch), stdio: ["pipe", "pipe", "pipe"] },
          );
          let stdout = "";
          child.stdout.on("data", (d) => {
            stdout += d;
          });
          child.on("close", (code) => resolve({ code, stdout }));
          child.stdin.end("count files\n/thinking\n");
        });
        assert.equal(out.code, 0);
        const collapsed = out.stdout.split("\n").find((l) => l.startsWith("✻ thought"));
        assert.match(collapsed ?? "", /First I list the files\. Then I count them\. .*\/thinking to expand/);
        const answer = out.stdout.indexOf("There is 1 file.");
        const expanded = out.stdout.indexOf("Then I count them.\nSECOND-LINE-MARKER");
        assert.ok(answer > 0 && expanded > answer, out.stdout);
      },
    );
  });

  test("--reasoning from flag, environment and config; a bad level is a usage error", async () => {
    await withServer([{ content: "a" }, { content: "b" }, { content: "c" }], async (server) => {
      const ws = workspace();
      const base = [
        "--base-url",
        server.url,
        "--api-key",
        "k",
        "--model",
        "llama3",
        "--cwd",
        ws,
        "--sandbox",
        "local",
      ];
      assert.equal((await runHands([...base, "--reasoning", "low", "hi"], cleanEnv(scratch))).code, 0);
      assert.equal((await runHands([...base, "hi"], cleanEnv(scratch, { HANDS_REASONING: "high" }))).code, 0);
      const config = join(scratch, "config-home");
      mkdirSync(join(config, "hands"), { recursive: true });
      writeFileSync(join(config, "hands", "config.json"), JSON.stringify({ reasoning: "off" }));
      assert.equal((await runHands([...base, "hi"], cleanEnv(scratch, { XDG_CONFIG_HOME: config }))).code, 0);
      assert.deepEqual(
        server.requests.map((r) => [r.body.reasoning_effort, r.body.chat_template_kwargs?.enable_thinking]),
        [
          ["low", undefined],
          ["high", undefined],
          [undefined, false],
        ],
      );
      const bad = await runHands([...base, "--reasoning", "max", "hi"], cleanEnv(scratch));
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /unknown reasoning level "max"; use one of: off, low, medium, high/);
    });
  });
});
