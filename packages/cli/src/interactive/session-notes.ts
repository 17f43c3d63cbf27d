// Messages the session itself adds to the conversation (not the model's replies): a note to the
// model with a fixed acknowledgement, so the user/assistant turns stay paired. Resuming must not
// show such an acknowledgement as the model's last reply.
import type { Message } from "@hands/llm";

const UNDO_NOTE_START = "(The user undid the file changes of the request ";
const UNDO_ACK = "Noted.";
const COMPACT_ACK = "Understood; I will continue from this summary.";

/** The note and acknowledgement that tell the model about an /undo. */
export function undoNote(label: string, paths: string[]): [Message, Message] {
  return [
    {
      role: "user",
      content: `${UNDO_NOTE_START}"${label.slice(0, 200)}": ${paths.join(", ") || "no files"} are back as they were before it.)`,
    },
    { role: "assistant", content: UNDO_ACK },
  ];
}

/** A compacted conversation: the summary and its acknowledgement. */
export function compactedHistory(summary: string): [Message, Message] {
  return [
    { role: "user", content: summary },
    { role: "assistant", content: COMPACT_ACK },
  ];
}

/** Whether history[i] is one of the session's own acknowledgements. */
function isSessionAck(history: Message[], i: number): boolean {
  const m = history[i];
  const before = history[i - 1];
  if (m?.role !== "assistant" || before?.role !== "user") return false;
  if (m.content === UNDO_ACK) return before.content.startsWith(UNDO_NOTE_START);
  return m.content === COMPACT_ACK && i === 1;
}

/** The model's last reply with text, skipping the session's own acknowledgements. */
export function lastReply(history: Message[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === "assistant" && m.content.trim() && !isSessionAck(history, i)) return m.content.trim();
  }
  return undefined;
}
