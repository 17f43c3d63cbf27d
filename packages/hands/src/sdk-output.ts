// Structured final output: the caller's JSON Schema is compiled (ajv) before the run, the model
// is told to answer with one JSON value matching it, and the answer is parsed and validated.
// What does not match comes back as readable errors, for the model to correct.
import { createRequire } from "node:module";
import type { ValidateFunction } from "ajv";
import { SettingsError } from "./errors.js";

export type JsonSchema = Record<string, unknown> | boolean;

export interface CompiledOutput {
  schema: JsonSchema;
  validate: ValidateFunction;
}

/** Compiles the schema (ajv, loaded only when a schema is given); a bad schema is a SettingsError. */
export function compileOutputSchema(schema: JsonSchema): CompiledOutput {
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema)))
    throw new SettingsError("outputSchema must be a JSON Schema (an object)");
  const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  try {
    return { schema, validate: new Ajv({ allErrors: true, strict: false }).compile(schema) };
  } catch (err) {
    throw new SettingsError(`outputSchema is not a valid JSON Schema: ${(err as Error).message}`);
  }
}

/** What the model is told, after the task. */
export function outputInstructions(schema: JsonSchema): string {
  return `Answer with one JSON value that matches this JSON Schema, and nothing else (no prose; a \`\`\`json fence is fine):\n${JSON.stringify(schema)}`;
}

/** The answer as JSON, validated; or why not, in words the model can act on. */
export function parseOutput(
  answer: string,
  validate: ValidateFunction,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = answer.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(text);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : text);
  } catch (err) {
    return { ok: false, error: `the answer is not JSON (${(err as Error).message})` };
  }
  if (validate(value)) return { ok: true, value };
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || "(the value)"} ${e.message ?? "is invalid"}`);
  return { ok: false, error: errors.join("; ") };
}
