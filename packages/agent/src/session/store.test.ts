import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { findInstructionFiles, projectInstructions } from "./instructions.js";
import { SessionStore } from "./store.js";

const root = mkdtempSync(join(tmpdir(), "hands-sessions-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("session store", () => {
  const store = new SessionStore(join(root, "sessions"));

  test("saves as it goes, lists, and loads", () => {
    const w = store.create({ workspace: "/ws/a", model: "m" });
    w.message({ role: "user", content: "make fib.py" });
    w.message({
      role: "assistant",
      content: "",
      toolCalls: [{ id: "t1", name: "write_file", arguments: "{}" }],
    });
    w.message({ role: "tool", toolCallId: "t1", name: "write_file", content: "Created fib.py" });
    w.usage({ inputTokens: 100, outputTokens: 10, costUsd: 0.5 });
    w.turn("done", 1);
    w.close();
    const other = store.create({ workspace: "/ws/b" });
    other.message({ role: "user", content: "other" });
    other.close();
    const loaded = store.load(w.meta.id);
    assert.equal(loaded.messages.length, 3);
    assert.equal(loaded.steps, 1);
    assert.equal(loaded.usage.costUsd, 0.5);
    const list = store.list();
    assert.equal(list.length, 2);
    assert.equal(store.latest("/ws/a")?.id, w.meta.id);
    assert.equal(store.latest("/ws/a")?.firstRequest, "make fib.py");
    assert.equal(store.latest("/ws/c"), undefined);
  });

  test("the latest settings line and the last call's usage come back on load (what a resume restores)", () => {
    const w = store.create({ workspace: "/ws/s", provider: "openai", model: "first" });
    w.append({ type: "settings", time: 1, provider: "openai", model: "first", approval: "ask" });
    w.usage({ inputTokens: 500, outputTokens: 5 });
    w.append({ type: "settings", time: 2, provider: "openai", model: "second", approval: "auto" });
    w.usage({ inputTokens: 1234, outputTokens: 7 });
    w.close();
    const loaded = store.load(w.meta.id);
    assert.deepEqual(loaded.settings, { provider: "openai", model: "second", approval: "auto" });
    assert.equal(loaded.lastUsage?.inputTokens, 1234);
    assert.equal(loaded.usage.inputTokens, 1734);
    // A session from before settings lines: the meta's model and provider.
    const old = store.create({ workspace: "/ws/s", provider: "anthropic", model: "meta-model" });
    old.close();
    assert.deepEqual(store.load(old.meta.id).settings, { provider: "anthropic", model: "meta-model" });
  });

  test("a torn last line and unanswered tool calls are repaired", () => {
    const w = store.create({ workspace: "/ws/t" });
    w.message({ role: "user", content: "go" });
    w.message({
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "a", name: "run_command", arguments: "{}" },
        { id: "b", name: "run_command", arguments: "{}" },
      ],
    });
    w.message({ role: "tool", toolCallId: "a", name: "run_command", content: "ok" });
    w.close();
    appendFileSync(w.path, '{"type":"message","time":1,"mess');
    const s = store.load(w.meta.id);
    assert.equal(s.messages.length, 4);
    const last = s.messages[3]!;
    assert.equal(last.role, "tool");
    assert.equal(last.role === "tool" && last.toolCallId, "b");
    assert.match(last.content, /stopped before this call finished/);
  });

  test("bad ids and missing sessions are errors", () => {
    assert.throws(() => store.pathOf("../x"), /invalid session id/);
    assert.throws(() => store.load("nope"), /no session nope/);
  });
});

describe("project instructions", () => {
  test("AGENTS.md from parents outermost first; CLAUDE.md only as a fallback", () => {
    const top = join(root, "proj");
    const sub = join(top, "pkg");
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(top, "AGENTS.md"), "Use tabs.");
    writeFileSync(join(top, "CLAUDE.md"), "ignored");
    writeFileSync(join(sub, "CLAUDE.md"), "Run npm test.");
    const files = findInstructionFiles(sub).filter((f) => f.path.startsWith(root));
    assert.deepEqual(
      files.map((f) => f.text),
      ["Use tabs.", "Run npm test."],
    );
    const text = projectInstructions(sub) ?? "";
    assert.ok(text.indexOf("Use tabs.") < text.indexOf("Run npm test."));
    assert.doesNotMatch(text, /ignored/);
  });

  test("an AGENTS.md that is a FIFO (or a device) is skipped without blocking; CLAUDE.md then counts", () => {
    const ws = join(root, "fifo-ws");
    mkdirSync(ws, { recursive: true });
    execFileSync("mkfifo", [join(ws, "AGENTS.md")]);
    writeFileSync(join(ws, "CLAUDE.md"), "Use pnpm.");
    symlinkSync("/dev/zero", join(root, "AGENTS.md"));
    // A blocking read would never return here: nothing ever writes to the FIFO.
    const files = findInstructionFiles(ws).filter((f) => f.path.startsWith(root));
    assert.deepEqual(
      files.map((f) => f.text),
      ["Use pnpm."],
    );
  });
});
