// The tool registry: turns a model's tool call into a validated invocation, or into an
// error the model can act on (unknown tool → the valid names; bad arguments → the schema).

import { createRequire } from "node:module";
import type { ToolCall, ToolSchema } from "@hands/llm";
import type { Ajv as AjvType, ValidateFunction } from "ajv";
import type { Tool } from "./tools/types.js";

export type PreparedCall =
  | { ok: true; tool: Tool; args: Record<string, unknown> }
  | { ok: false; error: string };

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly validators = new Map<string, ValidateFunction>();
  private ajv: AjvType | undefined;
  private schemaList: ToolSchema[] | undefined;

  /** `withheld`: tools not offered this run (name → why), named as such when called. */
  constructor(
    tools: Iterable<Tool>,
    private readonly withheld: Readonly<Record<string, string>> = {},
  ) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
      this.tools.set(tool.name, tool);
    }
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** The same array every call (the tool set is fixed), so providers can cache its encoding. */
  schemas(): ToolSchema[] {
    this.schemaList ??= [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: wireParameters(t.parameters),
    }));
    return this.schemaList;
  }

  prepare(call: ToolCall): PreparedCall {
    const tool = this.tools.get(call.name);
    if (!tool) {
      const why = Object.hasOwn(this.withheld, call.name) ? this.withheld[call.name] : undefined;
      if (why)
        return {
          ok: false,
          error: `ERROR: ${call.name} is not available in this session: ${why}. Valid tools: ${this.names.join(", ")}.`,
        };
      return {
        ok: false,
        error: `ERROR: unknown tool "${call.name}". Valid tools: ${this.names.join(", ")}.`,
      };
    }
    let args: unknown;
    const raw = call.arguments.trim();
    try {
      args = raw === "" ? {} : JSON.parse(raw);
    } catch (err) {
      return {
        ok: false,
        error: `ERROR: the arguments for ${tool.name} are not valid JSON (${(err as Error).message}). Send one JSON object matching: ${JSON.stringify(tool.parameters)}`,
      };
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return {
        ok: false,
        error: `ERROR: the arguments for ${tool.name} must be a JSON object matching: ${JSON.stringify(tool.parameters)}`,
      };
    }
    const problem = this.check(tool, args as Record<string, unknown>);
    if (problem) return { ok: false, error: `ERROR: invalid arguments for ${tool.name}: ${problem}` };
    return { ok: true, tool, args: args as Record<string, unknown> };
  }

  /** What is wrong with `args` for `tool` (with the schema expected), or undefined when they match. */
  check(tool: Tool, args: Record<string, unknown>): string | undefined {
    const validate = this.validator(tool);
    if (validate(args)) return undefined;
    const problems = (validate.errors ?? [])
      .map((e) => `${e.instancePath || "arguments"} ${e.message ?? "is invalid"}`)
      .join("; ");
    return `${problems}. Expected: ${JSON.stringify(tool.parameters)}`;
  }

  // Schemas compile on first use: start-up stays fast and unused tools cost nothing.
  private validator(tool: Tool): ValidateFunction {
    let v = this.validators.get(tool.name);
    if (!v) {
      // Loaded on first validation: ajv costs ~25 ms to import, which start-up should not pay.
      if (!this.ajv) {
        const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
        this.ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
      }
      v = this.ajv.compile(tool.parameters);
      this.validators.set(tool.name, v);
    }
    return v;
  }
}

/**
 * A tool's parameters as the model is sent them: without the top-level
 * `"additionalProperties": false` (29 bytes a tool on every request). The registry still checks
 * calls against the whole schema, so an unknown argument is refused with the schema to follow.
 */
function wireParameters(parameters: Tool["parameters"]): Tool["parameters"] {
  if (parameters["additionalProperties"] !== false) return parameters;
  const { additionalProperties: _, ...rest } = parameters;
  return rest as Tool["parameters"];
}
