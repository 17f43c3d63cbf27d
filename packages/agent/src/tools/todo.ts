// todo: the model's checklist for the current plan. The whole list is sent each time (simple
// for models, no ids to track); the CLI's status line shows it via the tool_end data.
import type { Tool, ToolResult } from "./types.js";

export type TodoStatus = "pending" | "in_progress" | "done";
export interface TodoItem {
  text: string;
  status: TodoStatus;
}
export type TodoArgs = { items: TodoItem[] };

const MARK: Record<TodoStatus, string> = { pending: "[ ]", in_progress: "[~]", done: "[x]" };

export function formatTodos(items: TodoItem[]): string {
  return items.map((i, n) => `${n + 1}. ${MARK[i.status]} ${i.text}`).join("\n");
}

export function createTodoTool(onChange?: (items: TodoItem[]) => void): Tool<TodoArgs> {
  return {
    name: "todo",
    description: [
      "Keep the checklist of the current plan up to date: send the complete list each time, every item with its status",
      "(pending, in_progress, done). Mark an item in_progress when you start it and done when it is finished and verified.",
    ].join(" "),
    parameters: {
      type: "object",
      properties: {
        items: {
          type: "array",
          items: {
            type: "object",
            properties: {
              text: { type: "string" },
              status: { type: "string", enum: ["pending", "in_progress", "done"] },
            },
            required: ["text", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["items"],
      additionalProperties: false,
    },
    // It changes nothing outside Hands, so it needs no approval.
    readOnly: true,
    async execute(args: TodoArgs): Promise<ToolResult> {
      const items = args.items.map((i) => ({ text: i.text, status: i.status }));
      onChange?.(items);
      const done = items.filter((i) => i.status === "done").length;
      return {
        output: `Checklist updated (${done}/${items.length} done):\n${formatTodos(items)}`,
        data: { todos: items },
      };
    },
  };
}
