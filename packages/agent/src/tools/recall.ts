// The recall tool: expands a compressed memory item back to its originals, or searches memory.
// Only registered when memory assembles the context.
import type { Tool } from "./types.js";

export interface RecallSource {
  /** Text for an id (a summary expands to its originals) or, failing that, a search. */
  recall(idOrQuery: string): Promise<string>;
}

export function recallTool(source: RecallSource): Tool<{ id: string }> {
  return {
    name: "recall",
    description:
      'Recall from memory: pass the id of a compressed item (e.g. "m1a2b3c4d5e") to get the full original text, or a few words to search earlier steps.',
    parameters: {
      type: "object",
      properties: { id: { type: "string", description: "A memory id, or words to search for" } },
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
