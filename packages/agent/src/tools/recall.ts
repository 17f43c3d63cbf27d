// The recall tool: expands a compressed memory item back to its originals, or searches memory.
// Only registered when memory assembles the context.
import type { Tool } from "./types.js";

export interface RecallSource {
  /** Text for an id (a summary expands to its originals) or, failing that, a search. */
  recall(idOrQuery: string): Promise<string>;
}

export const RECALL_TOOL = "recall";

export function recallTool(source: RecallSource): Tool<{ id: string }> {
  return {
    name: RECALL_TOOL,
    description:
      'The full text of a compressed memory item by id (e.g. "m1a2b3c4d5e"), or a search of earlier steps for some words.',
    parameters: {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
      additionalProperties: false,
    },
    readOnly: true,
    async execute(args) {
      const text = await source.recall(String(args.id ?? ""));
      return { output: text, data: { id: args.id } };
    },
  };
}
