// What one model request sent, from its trace: the request lists message ids, the trace holds
// each message once (TraceWriter). The run page gets them capped; the full text is one more call.
import { expandRanges, type MessageIdRanges, readTrace, type TraceMessage } from "@hands/agent";
import type { SentMessage, SentMessagesPayload } from "./api-types.js";

/** Characters of a message's content the list shows; the rest is a click away. */
export const CONTENT_PREVIEW = 2000;

function byId(path: string, wanted: Set<number>): Map<number, TraceMessage> {
  const found = new Map<number, TraceMessage>();
  for (const m of readTrace(path).messages) if (wanted.has(m.id) && !found.has(m.id)) found.set(m.id, m);
  return found;
}

export function sentMessages(path: string, ranges: MessageIdRanges): SentMessagesPayload {
  const ids = expandRanges(ranges);
  const found = byId(path, new Set(ids));
  const messages: SentMessage[] = [];
  const missing: number[] = [];
  for (const id of ids) {
    const line = found.get(id);
    if (!line) {
      missing.push(id);
      continue;
    }
    const m = line.message;
    messages.push({
      id,
      role: m.role,
      content: m.content.slice(0, CONTENT_PREVIEW),
      chars: m.content.length,
      ...(m.role === "assistant" && m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}),
      ...(m.role === "assistant" && m.thinking?.text
        ? { thinking: m.thinking.text.slice(0, CONTENT_PREVIEW) }
        : {}),
      ...(m.role === "tool"
        ? { toolCallId: m.toolCallId, name: m.name, ...(m.isError ? { isError: true } : {}) }
        : {}),
    });
  }
  return { messages, missing };
}

/** One message's whole content, or undefined when the trace has no such message. */
export function fullMessage(path: string, id: number): string | undefined {
  return byId(path, new Set([id])).get(id)?.message.content;
}
