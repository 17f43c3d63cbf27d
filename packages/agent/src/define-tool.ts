// A tool of the caller's own (the SDK's `tools` option): checked when it is defined, so a bad
// name or schema fails at once instead of at the model's first call, and wrapped so it behaves
// like a built-in tool — arguments validated against its schema, a throw or a bad return value
// an "ERROR: …" result the model reads, approvals asked unless it says it only reads.
import { createRequire } from "node:module";
import type { JsonSchema } from "@hands/llm";
import type { Tool, ToolContext, ToolResult } from "./tools/types.js";

/** A zod schema (v3 or v4), known by its shape: the caller's zod, whichever copy it is. */
export interface ZodLike {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: unknown };
}

export interface ToolDefinition<Args = Record<string, unknown>> {
  /** Letters, digits, `_` and `-`, at most 64 (what model APIs accept as a function name). */
  name: string;
  /** What the tool does and when to use it: the model reads it. */
  description: string;
  /** The arguments: a JSON Schema of an object, or a zod object schema. */
  parameters: JsonSchema | ZodLike;
  /**
   * true: it changes nothing, so it runs without approval (and in parallel with other reads).
   * Default false: every call goes through the approvals like a command.
   */
  readOnly?: boolean;
  /** The text for the model, or a ToolResult ({ output, isError?, data? }). A throw is an error result. */
  execute: (args: Args, ctx: ToolContext) => unknown;
}

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Marks the tools defineTool made (checked already). */
const DEFINED: unique symbol = Symbol.for("hands.definedTool");

export function isDefinedTool(value: unknown): value is Tool {
  return typeof value === "object" && value !== null && (value as { [DEFINED]?: true })[DEFINED] === true;
}

const require = createRequire(import.meta.url);

export function isZodSchema(value: unknown): value is ZodLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ZodLike).safeParse === "function" &&
    ("_zod" in value || "_def" in value)
  );
}

/** The JSON Schema the model is sent for a zod schema (draft 7, what the registry's ajv reads). */
function zodToSchema(schema: ZodLike): JsonSchema {
  let json: Record<string, unknown>;
  if ("_zod" in (schema as object)) {
    const { toJSONSchema } = require("zod/v4/core") as typeof import("zod/v4/core");
    json = toJSONSchema(schema as never, { target: "draft-7", io: "input" }) as Record<string, unknown>;
  } else {
    const { zodToJsonSchema } = require("zod-to-json-schema") as typeof import("zod-to-json-schema");
    json = zodToJsonSchema(schema as never, { target: "jsonSchema7", $refStrategy: "none" }) as Record<
      string,
      unknown
    >;
  }
  const { $schema: _ignored, ...rest } = json;
  return rest as JsonSchema;
}

function zodProblems(error: unknown): string {
  const issues = (error as { issues?: { path?: unknown[]; message?: string }[] })?.issues;
  if (!Array.isArray(issues)) return String(error);
  return issues
    .map((i) => `${i.path?.length ? `/${i.path.join("/")}` : "arguments"} ${i.message}`)
    .join("; ");
}

/** Checks a definition and returns it as a Tool; throws a TypeError that says what is wrong. */
export function defineTool<Args = Record<string, unknown>>(def: ToolDefinition<Args>): Tool {
  if (typeof def !== "object" || def === null)
    throw new TypeError("defineTool: give { name, description, parameters, execute }");
  const { name, description, parameters, execute } = def;
  if (typeof name !== "string" || !TOOL_NAME.test(name))
    throw new TypeError(
      `defineTool: the name must be 1-64 letters, digits, _ or -, got ${JSON.stringify(name)}`,
    );
  if (typeof description !== "string" || !description.trim())
    throw new TypeError(`defineTool(${name}): the description must be a non-empty string`);
  if (typeof execute !== "function") throw new TypeError(`defineTool(${name}): execute must be a function`);
  if (def.readOnly !== undefined && typeof def.readOnly !== "boolean")
    throw new TypeError(`defineTool(${name}): readOnly must be true or false`);
  const zod = isZodSchema(parameters) ? parameters : undefined;
  let schema: JsonSchema;
  try {
    schema = zod ? zodToSchema(zod) : (parameters as JsonSchema);
  } catch (err) {
    throw new TypeError(
      `defineTool(${name}): the zod schema cannot be turned into JSON Schema: ${(err as Error).message}`,
    );
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema) || schema.type !== "object")
    throw new TypeError(
      `defineTool(${name}): parameters must be an object schema ({ type: "object", properties: … })`,
    );
  // Compiled now: a schema ajv rejects would otherwise fail the model's first call.
  try {
    const { Ajv } = require("ajv") as typeof import("ajv");
    new Ajv({ allErrors: true, strict: false }).compile(schema);
  } catch (err) {
    throw new TypeError(
      `defineTool(${name}): parameters is not a valid JSON Schema: ${(err as Error).message}`,
    );
  }
  const tool: Tool & { [DEFINED]: true } = {
    [DEFINED]: true,
    name,
    description,
    parameters: schema,
    readOnly: def.readOnly ?? false,
    async execute(args, ctx): Promise<ToolResult> {
      let value: unknown = args;
      if (zod) {
        // The zod schema's own rules (refinements, transforms) beyond what JSON Schema says.
        const parsed = zod.safeParse(args);
        if (!parsed.success)
          return {
            output: `ERROR: invalid arguments for ${name}: ${zodProblems(parsed.error)}`,
            isError: true,
          };
        value = parsed.data;
      }
      return toResult(name, await execute(value as Args, ctx));
    },
  };
  return tool;
}

function toResult(name: string, value: unknown): ToolResult {
  if (typeof value === "string") return { output: value };
  if (typeof value === "object" && value !== null && typeof (value as ToolResult).output === "string") {
    const r = value as ToolResult;
    const data = r.data;
    if (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data)))
      return { output: `ERROR: ${name} returned "data" that is not an object`, isError: true };
    return { output: r.output, ...(r.isError ? { isError: true } : {}), ...(data ? { data } : {}) };
  }
  return {
    output: `ERROR: ${name} returned ${value === undefined ? "nothing" : typeof value}, not text or { output }`,
    isError: true,
  };
}
