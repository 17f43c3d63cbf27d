// The ACP front end's pure parts: what an attached file becomes (the workspace is hostile:
// symlinks out of it, FIFOs, paths with ..), how an editor's answer maps to the gate's, and
// how events become updates.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { ApprovalPrompt } from "@hands/agent";
import { answerOf, permissionRequest } from "./permission.js";
import { promptText } from "./prompt-text.js";
import { UpdateMapper } from "./updates.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-acp-parts-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("attached files: read inside the workspace only, never through a link out, never a FIFO", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const secret = join(scratch, "secret.txt");
  writeFileSync(secret, "TOP SECRET");
  writeFileSync(join(ws, "ok.txt"), "fine text");
  symlinkSync(secret, join(ws, "link.txt"));
  execFileSync("mkfifo", [join(ws, "pipe")]);
  const link = (p: string) => ({ type: "resource_link" as const, name: p, uri: pathToFileURL(p).href });
  const started = Date.now();
  const text = await promptText(
    [
      { type: "text", text: "look" },
      link(join(ws, "ok.txt")),
      link(join(ws, "link.txt")),
      link(join(ws, "pipe")),
      link(`${ws}/../secret.txt`),
      { type: "resource_link", name: "web", uri: "https://example.com/x" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ],
    { workspace: ws },
  );
  assert.ok(Date.now() - started < 2000, "a FIFO was waited on");
  assert.match(text, /<attached path="ok\.txt">\nfine text\n<\/attached>/);
  assert.doesNotMatch(text, /TOP SECRET/);
  assert.match(text, /link\.txt: outside the workspace, not read/);
  assert.match(text, /pipe: not a readable text file, not read/);
  assert.match(text, /\[linked web: https:\/\/example\.com\/x\]/);
  assert.match(text, /\[attached image: not supported by this agent, not included\]/);

  // Through the editor (its buffers), what it gives is what the model gets, cut when huge.
  const big = await promptText([link(join(ws, "ok.txt"))], {
    workspace: ws,
    readThroughEditor: async () => "x".repeat(200_000),
  });
  assert.match(big, /cut at 100000 characters/);
  const failed = await promptText([link(join(ws, "ok.txt"))], {
    workspace: ws,
    readThroughEditor: async () => {
      throw new Error("buffer gone");
    },
  });
  assert.match(failed, /could not be read \(buffer gone\)/);
});

test("permission answers: allow once / always / reject, cancelled or unknown options are a no", () => {
  const prompt = (extra: Partial<ApprovalPrompt> = {}): ApprovalPrompt => ({
    name: "run_command",
    args: { command: "git push" },
    kind: "command",
    command: "git push",
    signal: new AbortController().signal,
    ...extra,
  });
  const req = permissionRequest("s1", "call-1", prompt());
  assert.equal(req.toolCall.toolCallId, "call-1");
  assert.equal(req.toolCall.kind, "execute");
  const pick = (optionId: string) => answerOf({ outcome: { outcome: "selected", optionId } }, req.options);
  assert.deepEqual(pick("allow_once"), { answer: "yes" });
  assert.deepEqual(pick("allow_always"), { answer: "always" });
  assert.equal(pick("reject_once").answer, "no");
  assert.equal(pick("made_up").answer, "no");
  assert.equal(answerOf({ outcome: { outcome: "cancelled" } }, req.options).answer, "no");
  // A write into .hands/ is asked every time: no "always" is offered, and none is accepted.
  const settings = permissionRequest("s1", "call-2", prompt({ settingsPath: ".hands/config.json" }));
  assert.deepEqual(
    settings.options.map((o) => o.kind),
    ["allow_once", "reject_once"],
  );
  assert.equal(
    answerOf({ outcome: { outcome: "selected", optionId: "allow_always" } }, settings.options).answer,
    "no",
  );
});

test("updates: a failed edit has no diff; a tool's output is capped for the editor", () => {
  const m = new UpdateMapper("/ws");
  m.map({ type: "tool_start", time: 0, step: 1, callId: "a", name: "edit_file", args: { path: "src/x.ts" } });
  const [failed] = m.map({
    type: "tool_end",
    time: 0,
    step: 1,
    callId: "a",
    name: "edit_file",
    isError: true,
    output: "ERROR: text not found",
    resultChars: 21,
    truncated: false,
    durationMs: 1,
    data: { path: "src/x.ts", after: "new" },
  });
  assert.ok(failed && failed.sessionUpdate === "tool_call_update");
  assert.equal(failed.status, "failed");
  assert.ok(!failed.content?.some((c) => c.type === "diff"));
  assert.deepEqual(failed.locations, [{ path: "/ws/src/x.ts" }]);
  const [long] = m.map({
    type: "tool_end",
    time: 0,
    step: 1,
    callId: "b",
    name: "run_command",
    isError: false,
    output: "y".repeat(20_000),
    resultChars: 20_000,
    truncated: false,
    durationMs: 1,
  });
  const text = long && long.sessionUpdate === "tool_call_update" ? long.content?.[0] : undefined;
  assert.ok(
    text && text.type === "content" && text.content.type === "text" && text.content.text.length < 8100,
  );
  assert.deepEqual(m.map({ type: "model_notice", time: 0, step: 1, message: "x" }), []);
});
