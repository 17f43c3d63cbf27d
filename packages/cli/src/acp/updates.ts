// Hands' run events as ACP session updates: text and reasoning as message / thought chunks,
// tool calls with their kind, status, locations and (for edits) a diff. Pure: the agent sends
// what this returns, the tests read it without a connection.
import { isAbsolute, resolve } from "node:path";
import type {
  PlanEntry,
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { AgentEvent, TodoItem } from "@hands/agent";

const KINDS: Record<string, ToolKind> = {
  read_file: "read",
  list_dir: "read",
  code_outline: "read",
  repo_map: "read",
  recall: "read",
  query_database: "read",
  glob: "search",
  grep: "search",
  write_file: "edit",
  edit_file: "edit",
  write_database: "edit",
  run_command: "execute",
  execute_python: "execute",
  web_fetch: "fetch",
  todo: "think",
  task: "think",
};

/** The ACP kind of a Hands tool (MCP and own tools: "other"). */
export function toolKind(name: string): ToolKind {
  return KINDS[name] ?? "other";
}

/** Tool output shown in the editor is capped: the model got the whole (already capped) text. */
const MAX_SHOWN = 8000;

/** A short title for a tool call, as an editor lists it. */
export function toolTitle(name: string, args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const s = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : undefined);
  const detail =
    name === "run_command"
      ? s("command")
      : name === "grep" || name === "glob"
        ? s("pattern")
        : name === "web_fetch"
          ? s("url")
          : (s("path") ?? s("file"));
  const one = detail?.replace(/\s+/g, " ").slice(0, 120);
  return one ? `${name} ${one}` : name;
}

function locations(workspace: string, args: unknown, line?: number): ToolCallLocation[] {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const path = typeof a["path"] === "string" ? (a["path"] as string) : undefined;
  if (!path || path.includes("\0")) return [];
  const abs = isAbsolute(path) ? path : resolve(workspace, path);
  return [{ path: abs, ...(line !== undefined ? { line } : {}) }];
}

/** Turns a run's events into session updates; remembers each call's arguments for its end. */
export class UpdateMapper {
  private readonly calls = new Map<string, { name: string; args: unknown }>();

  constructor(private readonly workspace: string) {}

  /** The updates one event makes (none for events an editor has no place for). */
  map(e: AgentEvent): SessionUpdate[] {
    switch (e.type) {
      case "text_delta":
        return e.text
          ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.text } }]
          : [];
      case "thinking_delta":
        return e.text
          ? [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.text } }]
          : [];
      case "tool_start": {
        this.calls.set(e.callId, { name: e.name, args: e.args });
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId: e.callId,
            title: toolTitle(e.name, e.args),
            kind: toolKind(e.name),
            status: "pending",
            locations: locations(this.workspace, e.args),
            rawInput: e.args,
          },
        ];
      }
      case "approval":
        // A call the gate let through is running now; a refused one ends with its tool_end.
        return e.allow
          ? [{ sessionUpdate: "tool_call_update", toolCallId: e.callId, status: "in_progress" }]
          : [];
      case "tool_end": {
        const todos = e.name === "todo" && !e.isError ? e.data?.["todos"] : undefined;
        return Array.isArray(todos) ? [this.toolEnd(e), planUpdate(todos as TodoItem[])] : [this.toolEnd(e)];
      }
      case "plan":
        return [planUpdate(e.items.map((text) => ({ text, status: "pending" as const })))];
      default:
        return [];
    }
  }

  private toolEnd(e: Extract<AgentEvent, { type: "tool_end" }>): SessionUpdate {
    const call = this.calls.get(e.callId);
    this.calls.delete(e.callId);
    const content: ToolCallContent[] = [];
    const data = e.data ?? {};
    const path = typeof data["path"] === "string" ? (data["path"] as string) : undefined;
    if (!e.isError && path && typeof data["after"] === "string" && toolKind(e.name) === "edit")
      content.push({
        type: "diff",
        path: isAbsolute(path) ? path : resolve(this.workspace, path),
        oldText: typeof data["before"] === "string" ? (data["before"] as string) : null,
        newText: data["after"] as string,
      });
    const text = e.output.length > MAX_SHOWN ? `${e.output.slice(0, MAX_SHOWN)}\n… (shortened)` : e.output;
    if (text) content.push({ type: "content", content: { type: "text", text } });
    const lines = Array.isArray(data["lines"]) ? (data["lines"] as unknown[]) : [];
    const first = typeof lines[0] === "number" ? lines[0] : undefined;
    return {
      sessionUpdate: "tool_call_update",
      toolCallId: e.callId,
      status: e.isError ? "failed" : "completed",
      content,
      ...(call ? { locations: locations(this.workspace, call.args, first) } : {}),
      rawOutput: { output: text, isError: e.isError, durationMs: e.durationMs },
    };
  }
}

const PLAN_STATUS = { pending: "pending", in_progress: "in_progress", done: "completed" } as const;

/** The todo tool's checklist (or --plan's items) as an ACP plan: the whole list each time. */
export function planUpdate(items: TodoItem[]): SessionUpdate {
  const entries: PlanEntry[] = items.map((i) => ({
    content: i.text,
    priority: "medium",
    status: PLAN_STATUS[i.status],
  }));
  return { sessionUpdate: "plan", entries };
}
