// A saved conversation as the session updates an editor rebuilds its view from (session/load):
// the user's requests, the replies and reasoning, and each tool call with its result.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Message } from "@hands/llm";
import { toolKind, toolTitle } from "./updates.js";

const MAX_SHOWN = 8000;

export function replayUpdates(history: readonly Message[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  const text = (t: string) => ({ type: "text" as const, text: t });
  for (const m of history) {
    if (m.role === "user") out.push({ sessionUpdate: "user_message_chunk", content: text(m.content) });
    else if (m.role === "assistant") {
      if (m.thinking?.text)
        out.push({ sessionUpdate: "agent_thought_chunk", content: text(m.thinking.text) });
      if (m.content) out.push({ sessionUpdate: "agent_message_chunk", content: text(m.content) });
      for (const c of m.toolCalls ?? []) {
        let args: unknown = c.arguments;
        try {
          args = JSON.parse(c.arguments);
        } catch {}
        out.push({
          sessionUpdate: "tool_call",
          toolCallId: c.id,
          title: toolTitle(c.name, args),
          kind: toolKind(c.name),
          status: "pending",
          rawInput: args,
        });
      }
    } else if (m.role === "tool") {
      const shown =
        m.content.length > MAX_SHOWN ? `${m.content.slice(0, MAX_SHOWN)}\n… (shortened)` : m.content;
      out.push({
        sessionUpdate: "tool_call_update",
        toolCallId: m.toolCallId,
        status: m.isError ? "failed" : "completed",
        content: [{ type: "content", content: text(shown) }],
      });
    }
  }
  return out;
}
