// What a real model server checks in a request body before answering, so fakes of it (the
// scripted server, the bench's fake) reject what the real one would: JSON, the model, messages
// with valid roles and content, tool calls answered by results with matching ids, and tool
// parameters that are object schemas (OpenAI answers 400 "Invalid schema for function" otherwise).

export type WireProtocol = "openai" | "anthropic";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The problem with a chat request body, or undefined when a real server would accept it. */
export function checkChatRequest(protocol: WireProtocol, raw: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    return `invalid JSON (${(err as Error).message}) in ${raw.length} bytes: ${excerptNear(raw, err)}`;
  }
  return checkChatBody(protocol, body);
}

/** As checkChatRequest, for a body already parsed (a server that reads it once). */
export function checkChatBody(protocol: WireProtocol, body: unknown): string | undefined {
  if (!isObject(body)) return "the body is not a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "`model` is missing or not a string";
  if (body.stream !== undefined && typeof body.stream !== "boolean") return "`stream` is not a boolean";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "`messages` is missing or empty";
  return protocol === "openai" ? checkOpenAI(body) : checkAnthropic(body);
}

/** A short window of the text around the position a JSON.parse error names. */
function excerptNear(raw: string, err: unknown): string {
  const at = Number(/position (\d+)/.exec(String((err as Error)?.message))?.[1] ?? raw.length - 1);
  return JSON.stringify(raw.slice(Math.max(0, at - 40), at + 40));
}

/** Tool names both APIs accept. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const OPENAI_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

function openAIContentOk(content: unknown): boolean {
  if (typeof content === "string") return true;
  return Array.isArray(content) && content.every((p) => isObject(p) && typeof p.type === "string");
}

function checkOpenAI(body: Json): string | undefined {
  const messages = body.messages as unknown[];
  /** Ids of the latest assistant message's tool calls not yet answered. */
  let pending = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const where = `messages[${i}]`;
    if (!isObject(m)) return `${where} is not an object`;
    if (typeof m.role !== "string" || !OPENAI_ROLES.has(m.role))
      return `${where}.role ${JSON.stringify(m.role)} is not valid`;
    if (m.role !== "tool" && pending.size > 0) {
      return `${where}: an assistant message with tool_calls must be followed by tool messages answering each id (missing ${[...pending].join(", ")})`;
    }
    if (m.role === "assistant") {
      const calls = m.tool_calls;
      if (calls !== undefined) {
        if (!Array.isArray(calls) || calls.length === 0)
          return `${where}.tool_calls is not a non-empty array`;
        for (const [j, c] of calls.entries()) {
          if (!isObject(c) || typeof c.id !== "string" || c.id === "")
            return `${where}.tool_calls[${j}].id is missing`;
          if (c.type !== "function") return `${where}.tool_calls[${j}].type is not "function"`;
          const f = c.function;
          if (!isObject(f) || typeof f.name !== "string" || typeof f.arguments !== "string")
            return `${where}.tool_calls[${j}].function needs a name and string arguments`;
          if (pending.has(c.id)) return `${where}: duplicate tool call id ${c.id}`;
          pending.add(c.id);
        }
        if (m.content !== null && m.content !== undefined && !openAIContentOk(m.content))
          return `${where}.content is not a string or null`;
      } else if (!openAIContentOk(m.content)) return `${where}.content is not a string`;
      continue;
    }
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string") return `${where}.tool_call_id is missing`;
      if (!pending.delete(m.tool_call_id))
        return `${where}: tool_call_id ${JSON.stringify(m.tool_call_id)} answers no preceding tool call`;
      if (!openAIContentOk(m.content)) return `${where}.content is not a string`;
      continue;
    }
    if (!openAIContentOk(m.content)) return `${where}.content is not a string`;
    pending = new Set();
  }
  if (pending.size > 0)
    return `the last message's tool_calls have no tool messages: ${[...pending].join(", ")}`;
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "`tools` is not an array";
    for (const [j, t] of body.tools.entries()) {
      if (
        !isObject(t) ||
        t.type !== "function" ||
        !isObject(t.function) ||
        typeof t.function.name !== "string"
      )
        return `tools[${j}] is not a function tool with a name`;
      if (!TOOL_NAME.test(t.function.name))
        return `tools[${j}].function.name ${JSON.stringify(t.function.name)} is not valid`;
      const schemaError =
        t.function.parameters === undefined ? undefined : objectSchemaError(t.function.parameters);
      if (schemaError) return `tools[${j}] (${t.function.name}): invalid schema: ${schemaError}`;
    }
  }
  return undefined;
}

/** Why `schema` is not a tool's parameter schema: a JSON Schema object of type "object". */
function objectSchemaError(schema: unknown): string | undefined {
  if (!isObject(schema) || schema.type !== "object")
    return `must be a JSON Schema of type "object", got ${JSON.stringify(isObject(schema) ? schema.type : schema)}`;
  const props = schema.properties;
  if (props !== undefined) {
    if (!isObject(props)) return "`properties` is not an object";
    for (const [name, p] of Object.entries(props))
      if (!isObject(p) && typeof p !== "boolean") return `properties.${name} is not a schema`;
  }
  const required = schema.required;
  if (required !== undefined && (!Array.isArray(required) || required.some((r) => typeof r !== "string")))
    return "`required` is not an array of strings";
  return undefined;
}

function checkAnthropic(body: Json): string | undefined {
  if (typeof body.max_tokens !== "number" || !(body.max_tokens > 0)) return "`max_tokens` is missing";
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    return "`system` is not a string or a list of blocks";
  const messages = body.messages as unknown[];
  const pending = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const where = `messages[${i}]`;
    if (!isObject(m)) return `${where} is not an object`;
    if (m.role !== "user" && m.role !== "assistant")
      return `${where}.role ${JSON.stringify(m.role)} is not user or assistant`;
    if (i === 0 && m.role !== "user") return "the first message must be a user message";
    if (i > 0 && (messages[i - 1] as Json).role === m.role) return `${where}: roles must alternate`;
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return `${where}.content is empty`;
    if (m.role === "user") {
      for (const [j, b] of blocks.entries()) {
        if (!isObject(b) || typeof b.type !== "string") return `${where}.content[${j}] has no type`;
        if (b.type === "tool_result") {
          if (typeof b.tool_use_id !== "string" || !pending.delete(b.tool_use_id))
            return `${where}.content[${j}]: tool_result ${JSON.stringify(b.tool_use_id)} answers no tool_use of the previous message`;
        } else if (b.type === "text" && typeof b.text !== "string")
          return `${where}.content[${j}].text is not a string`;
      }
      if (pending.size > 0) return `${where}: tool_use ids without a tool_result: ${[...pending].join(", ")}`;
    } else {
      if (pending.size > 0) return `${where}: tool_use ids without a tool_result: ${[...pending].join(", ")}`;
      for (const [j, b] of blocks.entries()) {
        if (!isObject(b) || typeof b.type !== "string") return `${where}.content[${j}] has no type`;
        if (b.type === "tool_use") {
          if (typeof b.id !== "string" || !/^[a-zA-Z0-9_-]+$/.test(b.id))
            return `${where}.content[${j}].id is not valid`;
          if (typeof b.name !== "string" || !isObject(b.input))
            return `${where}.content[${j}] needs a name and an input object`;
          pending.add(b.id);
        } else if (b.type === "text" && (typeof b.text !== "string" || b.text.trim() === ""))
          return `${where}.content[${j}]: text blocks must be non-empty`;
      }
    }
  }
  if (pending.size > 0)
    return `the last message's tool_use ids have no tool_result: ${[...pending].join(", ")}`;
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "`tools` is not an array";
    for (const [j, t] of body.tools.entries()) {
      if (!isObject(t) || typeof t.name !== "string" || !TOOL_NAME.test(t.name))
        return `tools[${j}].name is not valid`;
      const schemaError = objectSchemaError(t.input_schema);
      if (schemaError) return `tools[${j}].input_schema must be an object schema: ${schemaError}`;
    }
  }
  return undefined;
}
