// The text ReAct protocol for models without native tool calling: the tools and the format
// go into the system prompt, history is rendered as Thought/Action/Observation text, and each
// reply is parsed back into a tool call or a final answer.
import { cutAtObservation, parseReact, type ReactParse } from "./react-parser.js";
import type {
  AssistantMessage,
  Message,
  ModelRequest,
  ModelResponse,
  Provider,
  ToolMessage,
  ToolSchema,
} from "./types.js";

export const OBSERVATION_STOP = "\nObservation:";

/** Start of the correction sent when a reply has no keywords at all (used to spot a repeat). */
const NO_KEYWORDS_PREFIX = "Observation: ERROR: your reply has no Action and no Final Answer";

export function formatReminder(toolNames: readonly string[]): string {
  return [
    "Reply in exactly this format:",
    "Thought: <your reasoning>",
    `Action: <one tool name: ${toolNames.join(", ")}>`,
    "Action Input: <the tool's arguments as one JSON object>",
    "or, when you are done:",
    "Thought: <your reasoning>",
    "Final Answer: <your answer to the user>",
  ].join("\n");
}

/** The protocol description appended to the system prompt. */
export function reactSystemPrompt(tools: readonly ToolSchema[]): string {
  const list = tools
    .map(
      (t) =>
        `- ${t.name}: ${t.description.trim()}\n  Arguments (JSON Schema): ${JSON.stringify(t.parameters)}`,
    )
    .join("\n");
  return [
    "You solve the task step by step, using tools. To use a tool, reply in exactly this format:",
    "",
    "Thought: <your reasoning about what to do next>",
    "Action: <the tool name>",
    "Action Input: <the tool's arguments as one JSON object>",
    "",
    'Then stop: the tool\'s result comes back to you as "Observation: <result>". Use one tool per reply.',
    "When the task is done, or you can answer without tools, reply:",
    "",
    "Thought: <your reasoning>",
    "Final Answer: <your answer to the user>",
    "",
    "Rules: write the keywords exactly as shown; Action Input is valid JSON (double-quoted strings,",
    'escaped newlines); never write "Observation:" yourself.',
    "",
    "Available tools:",
    list,
  ].join("\n");
}

function renderCall(call: { name: string; arguments: string }, thought: string): string {
  const head = thought.trim() ? `Thought: ${thought.trim()}\n` : "";
  return `${head}Action: ${call.name}\nAction Input: ${call.arguments || "{}"}`;
}

function renderObservation(result: ToolMessage | undefined, note: string | undefined): string {
  if (!result) return "Observation: (no result)";
  const text =
    result.isError && !/^error/i.test(result.content) ? `ERROR: ${result.content}` : result.content;
  return `Observation: ${text}${note ? `\n\n${note}` : ""}`;
}

/** Told with the result of an Action whose reply held more Actions, which did not run. */
export function ignoredActionsNote(count: number): string {
  const more = count === 1 ? "1 more Action" : `${count} more Actions`;
  return `NOTE: your reply had ${more} after this one; only the first Action ran. Write one Action per reply and wait for its Observation.`;
}

/** Assistant text that is neither an action nor a correction-bound error is a past final answer. */
function renderAnswer(message: AssistantMessage, next: Message | undefined): string {
  const followedByCorrection = next?.role === "user" && next.content.startsWith("Observation: ERROR");
  const parsed = parseReact(message.content, []);
  const hasKeywords = !(parsed.kind === "error" && parsed.reason === "no_keywords");
  return followedByCorrection || hasKeywords ? message.content : `Final Answer: ${message.content}`;
}

/** Renders provider-neutral history as plain text turns (system, user, assistant only). */
export function renderReactHistory(
  messages: readonly Message[],
  tools: readonly ToolSchema[],
  /** Notes to add to the Observation of a tool call, by call id. */
  notes: ReadonlyMap<string, string> = new Map(),
): Message[] {
  const out: Message[] = [];
  const push = (role: "user" | "assistant", content: string) => {
    const last = out[out.length - 1];
    // Observations and user turns can meet; many chat templates demand alternating roles.
    if (last && last.role === role && role === "user") last.content += `\n\n${content}`;
    else out.push({ role, content } as Message);
  };
  const consumed = new Set<ToolMessage>();
  messages.forEach((message, index) => {
    if (message.role === "system") out.push({ role: "system", content: message.content });
    else if (message.role === "user") push("user", message.content);
    else if (message.role === "tool") {
      if (!consumed.has(message)) push("user", renderObservation(message, notes.get(message.toolCallId)));
    } else if (message.toolCalls?.length) {
      // Results are the tool messages right after this one; pair them by id.
      const results: ToolMessage[] = [];
      for (let i = index + 1; i < messages.length && messages[i]!.role === "tool"; i++) {
        results.push(messages[i] as ToolMessage);
      }
      const isLast = index + 1 + results.length >= messages.length;
      message.toolCalls.forEach((call, i) => {
        push("assistant", renderCall(call, i === 0 ? message.content : ""));
        const result = results.find((r) => r.toolCallId === call.id && !consumed.has(r));
        if (result) consumed.add(result);
        if (result || !isLast || i < message.toolCalls!.length - 1) {
          push("user", renderObservation(result, notes.get(call.id)));
        }
      });
    } else push("assistant", renderAnswer(message, messages[index + 1]));
  });
  const prompt = reactSystemPrompt(tools);
  const first = out[0];
  if (first?.role === "system") first.content = `${first.content}\n\n${prompt}`;
  else out.unshift({ role: "system", content: prompt });
  return out;
}

export interface ReactProviderOptions {
  /** Prefix of generated tool call ids (default "react"). */
  idPrefix?: string;
}

/**
 * Wraps a text-only provider (normally an OpenAIProvider, called with `tools: []`) in the
 * ReAct protocol.
 *
 * Replies that cannot be read get a `correction` ("Observation: ERROR: …" with the format and
 * the valid tool names) instead of ending the run. Plain prose with no keywords at all is also
 * corrected — drifting out of the format mid-task is the commonest failure, and taking such
 * prose as the answer would end runs early — with two exceptions where prose is taken as the
 * final answer: the request offers no tools, or the previous turn already corrected prose and
 * the model, finishing normally, answered in prose again (it evidently means to answer).
 */
export class ReactProvider implements Provider {
  readonly name = "react";
  private counter = 0;
  private readonly idPrefix: string;
  /** Observation notes by call id (for replies that held more than one Action). */
  private readonly notes = new Map<string, string>();

  constructor(
    readonly inner: Provider,
    options: ReactProviderOptions = {},
  ) {
    this.idPrefix = options.idPrefix ?? "react";
  }

  get model(): string {
    return this.inner.model;
  }

  prepare(): void {
    this.inner.prepare?.();
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const stop = [...(request.stop ?? []), OBSERVATION_STOP];
    const messages = renderReactHistory(request.messages, request.tools, this.notes);
    const inner = await this.inner.complete({ ...request, messages, tools: [], stop });
    const response = this.understand(request, messages, inner);
    // Reasoning is shown and kept, but the text protocol replays only the reply itself.
    const thought = inner.message.thinking;
    if (!thought) return response;
    return {
      ...response,
      message: { ...response.message, thinking: { text: thought.text, source: thought.source } },
    };
  }

  /** Reads the reply under the protocol: an Action, a Final Answer, plain prose, or a correction. */
  private understand(request: ModelRequest, messages: Message[], inner: ModelResponse): ModelResponse {
    const text = withoutEcho(inner.message.content, messages[messages.length - 1]);
    const parsed = parseReact(text, request.tools);
    const base = { usage: inner.usage, durationMs: inner.durationMs };

    if (parsed.kind === "action") {
      const id = `${this.idPrefix}_${++this.counter}`;
      if (parsed.ignoredActions > 0) {
        // Bounded: the oldest notes go first (a long session keeps only recent ones).
        if (this.notes.size >= MAX_NOTES) this.notes.delete(this.notes.keys().next().value!);
        this.notes.set(id, ignoredActionsNote(parsed.ignoredActions));
      }
      return {
        ...base,
        message: {
          role: "assistant",
          content: parsed.thought,
          toolCalls: [{ id, name: parsed.tool, arguments: parsed.arguments }],
        },
        finishReason: "tool_calls",
      };
    }
    if (parsed.kind === "final") {
      return { ...base, message: { role: "assistant", content: parsed.answer }, finishReason: "stop" };
    }
    const prose = cutAtObservation(text).trim();
    const last = request.messages[request.messages.length - 1];
    const repeatedProse =
      parsed.reason === "no_keywords" &&
      inner.finishReason === "stop" &&
      last?.role === "user" &&
      last.content.startsWith(NO_KEYWORDS_PREFIX);
    if (prose && parsed.reason === "no_keywords" && (request.tools.length === 0 || repeatedProse)) {
      return { ...base, message: { role: "assistant", content: prose }, finishReason: "stop" };
    }
    return {
      ...base,
      message: { role: "assistant", content: prose },
      finishReason: inner.finishReason,
      correction: correctionFor(parsed, request.tools, inner.finishReason === "length"),
    };
  }
}

const MAX_NOTES = 256;

/** Keeps a schema in a correction short: the descriptions are in the system prompt already. */
function withoutDescriptions(key: string, value: unknown): unknown {
  return key === "description" && typeof value === "string" ? undefined : value;
}

/**
 * Drops a copy of the last Observation sent from the start of a reply. The copy is the tool's
 * output, which may hold keyword lines of its own (a file that is a ReAct transcript) that must
 * never be read as the model's Action.
 */
function withoutEcho(reply: string, lastSent: Message | undefined): string {
  if (lastSent?.role !== "user" || !lastSent.content.startsWith("Observation:")) return reply;
  const echo = lastSent.content.trim();
  const start = reply.trimStart();
  const rest = start.slice(echo.length);
  return start.startsWith(echo) && (rest === "" || rest.startsWith("\n")) ? rest : reply;
}

/**
 * What the model is told when its reply could not be used: the exact problem, then what to
 * write. A refused Action Input names the tool's schema instead of repeating the whole format.
 */
export function correctionFor(
  parsed: Extract<ReactParse, { kind: "error" }>,
  tools: readonly ToolSchema[],
  cutOff: boolean,
): string {
  const head = `Observation: ERROR: ${parsed.error}${cutOff ? " (your reply was cut off at the token limit: keep it shorter)" : ""}.`;
  const tool = parsed.tool === undefined ? undefined : tools.find((t) => t.name === parsed.tool);
  if (tool) {
    return `${head} The arguments of ${tool.name} (JSON Schema): ${JSON.stringify(tool.parameters, withoutDescriptions)}\nWrite the Action again:\nAction: ${tool.name}\nAction Input: <one JSON object>`;
  }
  return `${head} ${formatReminder(tools.map((t) => t.name))}`;
}
