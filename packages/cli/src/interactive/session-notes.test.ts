import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "@hands/llm";
import { compactedHistory, lastReply, undoNote } from "./session-notes.js";

test("the last reply on resume skips the session's own acknowledgements", () => {
  const history: Message[] = [
    { role: "user", content: "write hello.txt" },
    { role: "assistant", content: "Wrote hello.txt." },
    ...undoNote("write hello.txt", ["hello.txt"]),
  ];
  assert.equal(history.at(-1)?.content, "Noted.");
  assert.equal(lastReply(history), "Wrote hello.txt.");
  // Two undos in a row.
  history.push(...undoNote("earlier", []));
  assert.equal(lastReply(history), "Wrote hello.txt.");
  // A model that really answers "Noted." to a request is still shown.
  history.push({ role: "user", content: "remember tabs" }, { role: "assistant", content: "Noted." });
  assert.equal(lastReply(history), "Noted.");
  // Right after /compact there is no reply of the model's to show.
  assert.equal(lastReply(compactedHistory("summary of it all")), undefined);
  assert.equal(
    lastReply([
      ...compactedHistory("s"),
      { role: "user", content: "go" },
      { role: "assistant", content: "went" },
    ]),
    "went",
  );
  // Tool-call steps without text are skipped too.
  assert.equal(
    lastReply([
      { role: "user", content: "x" },
      { role: "assistant", content: "done x" },
      { role: "user", content: "y" },
      { role: "assistant", content: "", toolCalls: [{ id: "1", name: "list_dir", arguments: "{}" }] },
    ]),
    "done x",
  );
});
