// Memory in an interactive session, driven for real: `hands` in tmux, the model scripted over
// HTTP, assertions on what the model server received.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type RecordedHttpRequest, type ServerTurn, startScriptedServer } from "@hands/llm";
import { hasTmux, TmuxSession } from "./tmux.js";

const BIN = fileURLToPath(new URL("../../bin/hands.js", import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-tty-mem-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const BUDGET = 1500;
const KEY = "ZEBRA-9931";

type WireMessage = {
  role: string;
  content: string | null;
  tool_calls?: { function: { arguments: string } }[];
};

/** The scripted model: answers by the latest message, as a model reading its context would. */
function model(request: RecordedHttpRequest): ServerTurn {
  const messages = request.body.messages as WireMessage[];
  if (String(messages[0]?.content).startsWith("Summarize the notes"))
    return { content: `SUMMARY-OK: the deploy key is ${KEY}; big.log was read twice.` };
  // Memory's automatic note of related earlier steps may follow the latest message (when the
  // budget has room for it); a model reads past it to what it answers.
  const own = messages.filter((m) => !String(m.content ?? "").startsWith("Memory (automatic note"));
  const last = own.at(-1)!;
  const text = String(last.content ?? "");
  if (last.role === "tool")
    return { content: text.includes(KEY) ? `The deploy key is ${KEY}.` : "Done reading." };
  if (text === "hello") return { content: "Hi." };
  if (text.startsWith("Remember")) return { content: "Noted." };
  if (text.startsWith("read big.log"))
    return { toolCalls: [{ name: "read_file", arguments: { path: "big.log" } }] };
  if (text.startsWith("What is the deploy key"))
    return { toolCalls: [{ name: "recall", arguments: { id: "deploy key" } }] };
  return { content: "Continuing." };
}

const chats = (requests: RecordedHttpRequest[]) =>
  requests.filter((r) => r.method === "POST" && r.path === "/v1/chat/completions");
const tokensOf = (messages: WireMessage[]) =>
  messages.reduce(
    (n, m) =>
      n +
      Math.ceil(
        (String(m.content ?? "").length +
          (m.tool_calls ?? []).reduce((k, c) => k + c.function.arguments.length, 0)) /
          4,
      ) +
      4,
    0,
  );

test("an interactive session with memory: requests within the budget, early facts recallable, /compact through memory", {
  timeout: 90_000,
}, async () => {
  assert.ok(hasTmux(), "tmux is needed for these tests: run scripts/test-env.sh");
  const server = await startScriptedServer(model);
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(
    join(ws, "big.log"),
    Array.from({ length: 400 }, (_, i) => `${i}: request served in ${i % 97} ms, status ok\n`).join(""),
  );
  const tmux = new TmuxSession();
  try {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: scratch,
      TERM: "xterm-256color",
      NO_COLOR: "1",
      HANDS_DATA_DIR: join(scratch, "data"),
      XDG_CONFIG_HOME: join(scratch, "config"),
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "sk-test",
    };
    tmux.start(
      [
        process.execPath,
        BIN,
        "--model",
        "scripted-model",
        "--approval",
        "auto",
        "--context-budget",
        String(BUDGET),
        "--memory-summaries",
        "model",
      ],
      ws,
      env,
    );
    await tmux.waitFor(/^› *$/m);
    // Each wait reads the screen from the latest prompt on. The editor is always there: a turn
    // is over when its answer is on the screen and the spinner has gone.
    let mark = 0;
    const idle = async () => {
      for (let i = 0; i < 400 && tmux.rows().some((r) => /Esc to stop/.test(r)); i++)
        await new Promise((r) => setTimeout(r, 50));
      return tmux.screen();
    };
    const ask = async (text: string, expect: RegExp) => {
      tmux.type(text);
      await tmux.waitFor(new RegExp(`${expect.source}[\\s\\S]*^› *$`, "m"), 20_000, mark);
      const screen = await idle();
      mark = screen.lastIndexOf("›");
      return screen;
    };
    let screen = await ask("hello", /Hi\./);
    const ctx = Number(screen.match(/^› *\n── .*ctx ([\d.]+k?)\/1\.5k/m)?.[1]?.replace("k", "e3"));
    assert.ok(ctx > 0 && ctx <= BUDGET, `the status line shows context used / budget: ${ctx}`);
    await ask(`Remember: the deploy key is ${KEY}.`, /Noted\./);
    await ask("read big.log", /Done reading\./);
    await ask("read big.log again", /Done reading\./);
    await ask("What is the deploy key?", new RegExp(`The deploy key is ${KEY}`));

    const sent = chats(server.requests);
    const last = sent.at(-1)!.body.messages as WireMessage[];
    // The recall tool found the early fact in memory.
    assert.equal(last.at(-1)!.role, "tool");
    assert.match(String(last.at(-1)!.content), new RegExp(KEY));
    // Without memory the last requests would resend big.log twice (~17k tokens).
    for (const r of sent) {
      const t = tokensOf(r.body.messages as WireMessage[]);
      assert.ok(t <= BUDGET * 1.1, `a request of ${t} tokens (budget ${BUDGET})`);
    }
    // The current request is always in its context, after the first one of the session.
    const askKey = sent.at(-2)!.body.messages as WireMessage[];
    assert.equal(askKey[1]!.content, "hello");
    assert.equal(askKey.at(-1)!.content, "What is the deploy key?");

    // /compact summarises through memory, with the configured summarizer (the model).
    tmux.type("/compact");
    await tmux.waitFor(/Compacted \d+ messages into a summary[\s\S]*^› *$/m, 20_000, mark);
    screen = await idle();
    mark = screen.lastIndexOf("›");
    const summaryCall = chats(server.requests).at(-1)!.body.messages as WireMessage[];
    assert.match(String(summaryCall[0]!.content), /^Summarize the notes/);
    assert.match(String(summaryCall[1]!.content), /Remember: the deploy key is ZEBRA-9931/);
    await ask("continue", /Continuing\./);
    const next = chats(server.requests).at(-1)!.body.messages as WireMessage[];
    assert.match(
      String(next[1]!.content),
      /^Summary of the conversation so far \(recall "m[0-9a-f]{10}" for all of it\):\nSUMMARY-OK/,
    );
    // After compacting, the early fact is still one recall away.
    await ask("What is the deploy key, once more?", new RegExp(`The deploy key is ${KEY}`));
    tmux.keys("C-d");
    await tmux.waitFor(/\[exited 0\]/, 15_000, mark);
  } finally {
    tmux.kill();
    await server.close();
  }
});
