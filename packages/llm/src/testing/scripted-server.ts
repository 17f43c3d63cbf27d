// A real HTTP server speaking OpenAI's chat-completions and Anthropic's messages wire formats,
// answering from a script. Tests and benchmarks run the real providers against it, so only the
// model is fake, never the protocol.
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { checkChatRequest } from "./request-check.js";

export interface ServerToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

export interface ServerTurn {
  content?: string;
  toolCalls?: ServerToolCall[];
  /**
   * The model's reasoning, streamed before the content. OpenAI: in `reasoningField` (default
   * `reasoning_content`); Anthropic: a thinking block signed by this server.
   */
  reasoning?: string;
  reasoningField?: "reasoning_content" | "reasoning" | "reasoning_details";
  /** Anthropic: a redacted_thinking block (after any thinking block). */
  redactedThinking?: boolean;
  /** Default: estimated from the request and reply sizes (4 characters a token). */
  usage?: {
    inputTokens?: number;
    outputTokens?: number;
    cachedInputTokens?: number;
    reasoningTokens?: number;
  };
  /** OpenAI wire value; mapped for Anthropic. Default "tool_calls" with calls, else "stop". */
  finishReason?: "stop" | "tool_calls" | "length" | "content_filter";
  /** Answer with this HTTP status and an error body in the endpoint's format. */
  status?: number;
  headers?: Record<string, string>;
  errorMessage?: string;
  /** Send this body verbatim instead (garbage tests), with `contentType` (default text/plain). */
  body?: string;
  contentType?: string;
  /** Streaming: send this many SSE events, then destroy the connection. */
  cutAfterEvents?: number;
  /** Streaming: send this many SSE events, then end the response cleanly (no finish, no [DONE]). */
  endAfterEvents?: number;
  /** Streaming: send this many SSE events, then go silent, keeping the connection open. */
  stallAfterEvents?: number;
  /** Streaming: after this many events, an error event (`errorType`, default overloaded) ends the stream. */
  errorEventAfter?: number;
  errorType?: string;
  /** Streaming: the event at this index carries half of its JSON (a corrupted chunk). */
  corruptEvent?: number;
  /** Non-streaming: send this many bytes of the JSON body (headers promise it all), then drop the connection. */
  truncateBodyAt?: number;
  /** Non-streaming: send this many bytes of the JSON body, then go silent with the connection open. */
  stallBodyAt?: number;
  /** Accept the request and never answer (no status line, no headers). */
  neverAnswer?: boolean;
  /** Wait before answering. */
  delayMs?: number;
  /** Characters per text / argument delta (default 12). */
  chunkSize?: number;
  /** Stream parallel tool-call argument pieces round-robin instead of one call after another. */
  interleaveToolCalls?: boolean;
}

export interface RecordedHttpRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined for GET or unparsable bodies). */
  body: any;
}

export type ServerScript =
  | ServerTurn[]
  | ((request: RecordedHttpRequest, index: number) => ServerTurn | Promise<ServerTurn>);

export interface ScriptedServerOptions {
  script: ServerScript;
  /** Model id reported by GET /v1/models (default "scripted-model"). */
  model?: string;
  /**
   * POST /v1/embeddings (answered apart from the chat script): bag-of-words vectors of
   * `dimensions` (default 32) made from each input, so similar texts get similar vectors;
   * `status` may fail the nth embeddings request (0-based) with an HTTP status.
   */
  embeddings?: { dimensions?: number; status?: (index: number) => number | undefined };
  /**
   * A model context window: a chat request of more than `tokens` (its body's characters / 4, the
   * usage estimate below) is rejected with HTTP 400 and the real wording of `server` (default:
   * the endpoint's own), without consuming a script turn.
   */
  contextWindow?: { tokens: number; server?: OverflowWording };
  /**
   * OpenAI-compatible reasoning rules of real servers: "required" answers 400 when an assistant
   * tool-call turn comes back without the reasoning_content it was sent with (DeepSeek's thinking
   * mode); "rejected" answers 400 to any reasoning_content in the input (deepseek-reasoner).
   */
  reasoningEcho?: "required" | "rejected";
  /** Anthropic: the thinking forms of models not in THINKING_FORMS (by default: both). */
  thinkingForms?: Record<string, ThinkingForms>;
}

export type OverflowWording = "openai" | "anthropic" | "llamacpp" | "lmstudio" | "ollama";

/** The error body each server sends when the prompt does not fit (wordings as they send them). */
export function overflowBody(server: OverflowWording, limit: number, tokens: number): string {
  switch (server) {
    case "openai":
      return JSON.stringify({
        error: {
          message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      });
    case "anthropic":
      return JSON.stringify({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: `prompt is too long: ${tokens} tokens > ${limit} maximum`,
        },
      });
    case "llamacpp":
      return JSON.stringify({
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: tokens,
          n_ctx: limit,
        },
      });
    case "ollama":
      // Names neither the window nor the prompt's size, only the excess.
      return JSON.stringify({
        error: {
          message: `prompt too long; exceeded max context length by ${tokens - limit} tokens`,
          type: "api_error",
        },
      });
    case "lmstudio":
      return JSON.stringify({
        error: `Trying to keep the first ${tokens} tokens when context the overflows. However, the model is loaded with context length of only ${limit} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
      });
  }
}

export interface ScriptedServer {
  /** OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1. */
  url: string;
  /** Origin without /v1, e.g. http://127.0.0.1:PORT (what the Anthropic SDK wants). */
  origin: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedHttpRequest[];
  /**
   * Chat requests a real server would have rejected (bad JSON, missing model, unanswered tool
   * calls, …): each was answered 400 and printed to stderr, and `close()` rejects listing them.
   */
  invalid: { request: number; path: string; error: string }[];
  /** Requests rejected by `contextWindow`. */
  readonly overflows: number;
  /** Rejects if any request was invalid: a test that sent one fails even if it expected an error. */
  close(): Promise<void>;
}

type Protocol = "openai" | "anthropic";

const encodeCall = (c: ServerToolCall) =>
  typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments);

function pieces(text: string, size: number): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function usageOf(turn: ServerTurn, rawBodyLength: number) {
  const outChars =
    (turn.content ?? "").length + (turn.toolCalls ?? []).reduce((n, c) => n + encodeCall(c).length, 0);
  return {
    input: turn.usage?.inputTokens ?? Math.ceil(rawBodyLength / 4),
    output: turn.usage?.outputTokens ?? Math.max(1, Math.ceil(outChars / 4)),
    cached: turn.usage?.cachedInputTokens,
    reasoning: turn.usage?.reasoningTokens,
  };
}

function finishOf(turn: ServerTurn): string {
  return turn.finishReason ?? (turn.toolCalls?.length ? "tool_calls" : "stop");
}

// ---- OpenAI chat completions -------------------------------------------------------------

function openaiUsage(u: ReturnType<typeof usageOf>) {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    ...(u.cached !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached } } : {}),
    ...(u.reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning } } : {}),
  };
}

/** The reasoning fields of an OpenAI-compatible message or delta, as each server family names them. */
function openaiReasoning(turn: ServerTurn, text: string, index = 0): Record<string, unknown> {
  const field = turn.reasoningField ?? "reasoning_content";
  if (field !== "reasoning_details") return { [field]: text };
  // OpenRouter sends both the plain text and the details it wants back.
  return { reasoning: text, reasoning_details: [{ type: "reasoning.text", text, index, format: "unknown" }] };
}

function openaiJson(turn: ServerTurn, model: string, id: string, usage: ReturnType<typeof usageOf>): string {
  const calls = turn.toolCalls ?? [];
  return JSON.stringify({
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: turn.content ?? (calls.length ? null : ""),
          ...(turn.reasoning ? openaiReasoning(turn, turn.reasoning) : {}),
          ...(calls.length
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: c.id ?? `call_${id}_${i}`,
                  type: "function",
                  function: { name: c.name, arguments: encodeCall(c) },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: finishOf(turn),
      },
    ],
    usage: openaiUsage(usage),
  });
}

function openaiEvents(
  turn: ServerTurn,
  model: string,
  id: string,
  usage: ReturnType<typeof usageOf>,
  includeUsage: boolean,
): string[] {
  const created = Math.floor(Date.now() / 1000);
  const size = turn.chunkSize ?? 12;
  const chunk = (choices: unknown[], extra?: object) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`;
  const delta = (d: object, finish: string | null = null) =>
    chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const events = [delta({ role: "assistant", content: "" })];
  for (const piece of turn.reasoning ? pieces(turn.reasoning, size) : [])
    events.push(delta(openaiReasoning(turn, piece)));
  for (const piece of turn.content ? pieces(turn.content, size) : []) events.push(delta({ content: piece }));
  const calls = turn.toolCalls ?? [];
  const perCall = calls.map((c, i) => {
    const head = {
      index: i,
      id: c.id ?? `call_${id}_${i}`,
      type: "function",
      function: { name: c.name, arguments: "" },
    };
    return [head, ...pieces(encodeCall(c), size).map((p) => ({ index: i, function: { arguments: p } }))];
  });
  if (turn.interleaveToolCalls) {
    for (let step = 0; perCall.some((p) => p.length > step); step++) {
      for (const p of perCall) if (p[step]) events.push(delta({ tool_calls: [p[step]] }));
    }
  } else {
    for (const p of perCall) for (const d of p) events.push(delta({ tool_calls: [d] }));
  }
  events.push(delta({}, finishOf(turn)));
  if (includeUsage) events.push(chunk([], { usage: openaiUsage(usage) }));
  events.push("data: [DONE]\n\n");
  return events;
}

// ---- Anthropic messages ------------------------------------------------------------------

const ANTHROPIC_STOP: Record<string, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

function anthropicUsage(u: ReturnType<typeof usageOf>) {
  // Anthropic reports cache reads apart from input_tokens.
  const cached = u.cached ?? 0;
  return {
    input_tokens: u.input - cached,
    output_tokens: u.output,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

type AnthropicThinking =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

function anthropicBlocks(turn: ServerTurn, id: string, thinking: AnthropicThinking[]) {
  const blocks: Array<Record<string, unknown>> = [...thinking];
  if (turn.content) blocks.push({ type: "text", text: turn.content });
  (turn.toolCalls ?? []).forEach((c, i) => {
    blocks.push({
      type: "tool_use",
      id: c.id ?? `toolu_${id}_${i}`,
      name: c.name,
      input: JSON.parse(encodeCall(c)),
    });
  });
  return blocks;
}

function anthropicJson(
  turn: ServerTurn,
  model: string,
  id: string,
  usage: ReturnType<typeof usageOf>,
  thinking: AnthropicThinking[],
): string {
  return JSON.stringify({
    id,
    type: "message",
    role: "assistant",
    model,
    content: anthropicBlocks(turn, id, thinking),
    stop_reason: ANTHROPIC_STOP[finishOf(turn)] ?? "end_turn",
    stop_sequence: null,
    usage: anthropicUsage(usage),
  });
}

function anthropicEvents(
  turn: ServerTurn,
  model: string,
  id: string,
  usage: ReturnType<typeof usageOf>,
  thinking: AnthropicThinking[],
): string[] {
  const size = turn.chunkSize ?? 12;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const start = anthropicUsage(usage);
  const events = [
    ev("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...start, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  for (const block of thinking) {
    if (block.type === "redacted_thinking") {
      events.push(ev("content_block_start", { index, content_block: block }));
    } else {
      events.push(
        ev("content_block_start", {
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      for (const p of pieces(block.thinking, size)) {
        events.push(ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: p } }));
      }
      events.push(
        ev("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }),
      );
    }
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  if (turn.content) {
    events.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const p of pieces(turn.content, size)) {
      events.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: p } }));
    }
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  (turn.toolCalls ?? []).forEach((c, i) => {
    const block = { type: "tool_use", id: c.id ?? `toolu_${id}_${i}`, name: c.name, input: {} };
    events.push(ev("content_block_start", { index, content_block: block }));
    for (const p of pieces(encodeCall(c), size)) {
      events.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: p } }));
    }
    events.push(ev("content_block_stop", { index }));
    index++;
  });
  events.push(
    ev("message_delta", {
      delta: { stop_reason: ANTHROPIC_STOP[finishOf(turn)] ?? "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  );
  events.push(ev("message_stop", {}));
  return events;
}

export type ThinkingForms = "adaptive" | "budget" | "both";

/**
 * The thinking forms Anthropic's API takes per model, written out from its documentation (not
 * derived by a rule, so a client that places a model wrongly is refused as the API would refuse
 * it): a token budget only before Claude 4.6, both on the 4.6 models, adaptive only from Opus 4.7
 * on. Dated ids count as their model.
 */
const THINKING_FORMS: Record<string, ThinkingForms> = {
  "claude-3-7-sonnet": "budget",
  "claude-sonnet-4": "budget",
  "claude-opus-4": "budget",
  "claude-opus-4-1": "budget",
  "claude-sonnet-4-5": "budget",
  "claude-haiku-4-5": "budget",
  "claude-opus-4-5": "budget",
  "claude-opus-4-6": "both",
  "claude-sonnet-4-6": "both",
  "claude-opus-4-7": "adaptive",
  "claude-opus-4-8": "adaptive",
  "claude-mythos-preview": "adaptive",
  "claude-sonnet-5": "adaptive",
  "claude-opus-5": "adaptive",
  "claude-fable-5": "adaptive",
  "claude-mythos-5": "adaptive",
  "claude-haiku-5-5": "adaptive",
  "claude-sonnet-5-5": "adaptive",
  "claude-opus-5-5": "adaptive",
};

function thinkingFormsOf(model: unknown, extra: Record<string, ThinkingForms> = {}): ThinkingForms {
  const name = String(model)
    .replace(/-\d{8}$/, "")
    .replace(/-latest$/, "");
  return extra[name] ?? THINKING_FORMS[name] ?? "both";
}

const EFFORTS = ["low", "medium", "high", "xhigh", "max"];

/**
 * What Anthropic's API enforces when a request turns thinking on: the form the model takes; a
 * budget of at least 1,024 tokens below max_tokens, or adaptive thinking with no budget (and
 * effort only where adaptive thinking exists); no temperature; and — in a tool-use loop — the
 * last assistant turn starting with its thinking blocks exactly as they were sent (signatures
 * verified).
 */
function anthropicThinkingError(
  body: any,
  verify: (b: Record<string, unknown>) => boolean,
  forms: ThinkingForms,
): string | undefined {
  const effort = body?.output_config?.effort;
  if (effort !== undefined && !EFFORTS.includes(effort))
    return `output_config.effort: Input should be ${EFFORTS.map((e) => `'${e}'`).join(", ")}`;
  if (effort !== undefined && forms === "budget")
    return `output_config.effort: the effort parameter is not supported by ${body.model}`;
  const type = body?.thinking?.type;
  if (type === undefined || type === "disabled") return undefined;
  if (type === "enabled" && forms === "adaptive")
    return `thinking.type.enabled is not supported for ${body.model}; use thinking.type.adaptive and output_config.effort`;
  if (type === "adaptive" && forms === "budget")
    return `thinking.type.adaptive: adaptive thinking is not supported for ${body.model}`;
  if (type === "adaptive") {
    if ("budget_tokens" in body.thinking)
      return "thinking.adaptive.budget_tokens: Extra inputs are not permitted";
    const display = body.thinking.display;
    if (display !== undefined && display !== null && display !== "summarized" && display !== "omitted")
      return "thinking.adaptive.display: Input should be 'summarized' or 'omitted'";
  } else if (type === "enabled") {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024)
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (typeof body.max_tokens !== "number" || body.max_tokens <= budget)
      return "`max_tokens` must be greater than `thinking.budget_tokens`";
  } else {
    return `thinking.type: Input tag '${type}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'`;
  }
  if (body.temperature !== undefined && body.temperature !== 1)
    return "`temperature` may only be set to 1 when thinking is enabled";
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const [j, b] of m.content.entries()) {
      if ((b?.type === "thinking" || b?.type === "redacted_thinking") && !verify(b))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`${b.type}\` block`;
    }
  }
  // The last assistant turn that used a tool, when the request ends in its tool results.
  const last = messages.length - 1;
  const results =
    messages[last]?.role === "user" &&
    Array.isArray(messages[last].content) &&
    messages[last].content.some((b: any) => b?.type === "tool_result");
  const turn = messages[last - 1];
  if (results && turn?.role === "assistant" && Array.isArray(turn.content)) {
    const first = turn.content[0]?.type;
    if (first !== "thinking" && first !== "redacted_thinking")
      return `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
  }
  return undefined;
}

/** DeepSeek-style rules for reasoning_content coming back (see ScriptedServerOptions.reasoningEcho). */
function reasoningEchoError(
  body: any,
  rule: "required" | "rejected",
  sent: Map<string, string>,
): string | undefined {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    if (m?.role !== "assistant") continue;
    if (rule === "rejected" && m.reasoning_content !== undefined)
      return `messages[${i}]: reasoning_content is not accepted in input messages; remove it`;
    const id = m.tool_calls?.[0]?.id;
    if (rule === "required" && id && sent.has(id) && m.reasoning_content !== sent.get(id))
      return `messages[${i}]: the reasoning_content of an assistant message with tool calls must be passed back`;
  }
  return undefined;
}

// ---- HTTP plumbing -----------------------------------------------------------------------

function errorBody(protocol: Protocol, status: number, message: string): string {
  if (protocol === "anthropic") {
    const type = status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "api_error";
    return JSON.stringify({ type: "error", error: { type, message } });
  }
  return JSON.stringify({
    error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null },
  });
}

/** Each word adds 1 to the slot its hash picks: texts that share words point the same way. */
function bagOfWords(text: string, dims: number): number[] {
  const v: number[] = new Array<number>(dims).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9_]+/g) ?? []) {
    let h = 0;
    for (let i = 0; i < w.length; i++) h = (h * 31 + w.charCodeAt(i)) >>> 0;
    v[h % dims]! += 1;
  }
  if (!v.some((x) => x > 0)) v[0] = 1;
  return v;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Invalid requests no close() has reported yet: the process still fails if a test forgets close(). */
const unreported = new Set<ScriptedServer["invalid"][number]>();
let exitGuard = false;
function guardExit(): void {
  if (exitGuard) return;
  exitGuard = true;
  process.on("exit", () => {
    if (unreported.size === 0) return;
    process.stderr.write(
      `scripted server: ${unreported.size} invalid request(s) were never reported by close()\n`,
    );
    process.exitCode = 1;
  });
}

/** Starts the server on 127.0.0.1 with a free port. */
export async function startScriptedServer(
  scriptOrOptions: ServerScript | ScriptedServerOptions,
): Promise<ScriptedServer> {
  const options: ScriptedServerOptions =
    Array.isArray(scriptOrOptions) || typeof scriptOrOptions === "function"
      ? { script: scriptOrOptions }
      : scriptOrOptions;
  const { script } = options;
  const modelId = options.model ?? "scripted-model";
  const requests: RecordedHttpRequest[] = [];
  const invalid: ScriptedServer["invalid"] = [];
  guardExit();
  const timers = new Set<NodeJS.Timeout>();
  let turns = 0;
  let ids = 0;
  // Thinking signatures, as the real API makes them: only this server can produce valid ones.
  const secret = randomBytes(16);
  const sign = (text: string) => createHmac("sha256", secret).update(text).digest("base64");
  const verifyThinking = (b: Record<string, unknown>) =>
    b["type"] === "thinking"
      ? typeof b["thinking"] === "string" && b["signature"] === sign(`t:${b["thinking"]}`)
      : typeof b["data"] === "string" && b["data"].endsWith(`.${sign(`r:${b["data"].split(".")[0]}`)}`);
  // Tool-call id -> the reasoning_content it was sent with (for reasoningEcho "required").
  const reasoningSent = new Map<string, string>();
  let embeddingRequests = 0;
  let overflows = 0;

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  };

  const answer = async (
    _req: IncomingMessage,
    res: ServerResponse,
    protocol: Protocol,
    record: RecordedHttpRequest,
    rawLength: number,
  ) => {
    const window = options.contextWindow;
    const promptTokens = Math.ceil(rawLength / 4);
    if (window && promptTokens > window.tokens) {
      overflows++;
      return send(res, 400, overflowBody(window.server ?? protocol, window.tokens, promptTokens));
    }
    const index = turns++;
    let turn: ServerTurn | undefined;
    if (Array.isArray(script)) turn = script[index];
    else turn = await script(record, index);
    if (!turn) {
      const total = Array.isArray(script) ? script.length : 0;
      return send(
        res,
        400,
        errorBody(
          protocol,
          400,
          `scripted server: the script has run out (${total} turns, request #${index + 1})`,
        ),
      );
    }
    if (turn.delayMs) {
      const t = turn;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, t.delayMs);
        timers.add(timer);
      });
      // The client went away meanwhile. (Not req.destroyed: node 20 destroys a request stream
      // once its body is read, which would drop every delayed answer.)
      if (res.destroyed || !res.socket || res.socket.destroyed) return;
    }
    const headers = turn.headers ?? {};
    if (turn.body !== undefined) {
      return send(res, turn.status ?? 200, turn.body, {
        "content-type": turn.contentType ?? "text/plain",
        ...headers,
      });
    }
    if (turn.status && turn.status >= 300) {
      return send(
        res,
        turn.status,
        errorBody(protocol, turn.status, turn.errorMessage ?? `scripted error ${turn.status}`),
        headers,
      );
    }
    if (turn.neverAnswer) return;
    const forms = thinkingFormsOf((record.body as any)?.model, options.thinkingForms);
    const rule =
      protocol === "anthropic"
        ? anthropicThinkingError(record.body, verifyThinking, forms)
        : options.reasoningEcho && reasoningEchoError(record.body, options.reasoningEcho, reasoningSent);
    if (rule) return send(res, 400, errorBody(protocol, 400, rule));
    const id = `${protocol === "openai" ? "chatcmpl" : "msg"}_${++ids}`;
    const usage = usageOf(turn, rawLength);
    const thinking: AnthropicThinking[] = [];
    // Adaptive thinking on the models that only think adaptively shows no text unless asked
    // ("summarized"); the signature still carries the turn.
    const asked = (record.body as any)?.thinking;
    const omitted =
      protocol === "anthropic" &&
      asked?.type === "adaptive" &&
      (asked.display === "omitted" || (asked.display !== "summarized" && forms === "adaptive"));
    if (turn.reasoning) {
      const shown = omitted ? "" : turn.reasoning;
      thinking.push({ type: "thinking", thinking: shown, signature: sign(`t:${shown}`) });
    }
    if (turn.redactedThinking) {
      const nonce = randomBytes(12).toString("base64url");
      thinking.push({ type: "redacted_thinking", data: `${nonce}.${sign(`r:${nonce}`)}` });
    }
    if (protocol === "openai" && turn.reasoning) {
      for (const [i, c] of (turn.toolCalls ?? []).entries())
        reasoningSent.set(c.id ?? `call_${id}_${i}`, turn.reasoning);
    }
    const body = record.body as { stream?: boolean; stream_options?: { include_usage?: boolean } };
    if (!body.stream) {
      const json =
        protocol === "openai"
          ? openaiJson(turn, modelId, id, usage)
          : anthropicJson(turn, modelId, id, usage, thinking);
      if (turn.stallBodyAt !== undefined) {
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
        res.write(json.slice(0, turn.stallBodyAt));
        return;
      }
      if (turn.truncateBodyAt !== undefined) {
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
        res.write(json.slice(0, turn.truncateBodyAt), () => res.socket?.destroy());
        return;
      }
      return send(res, turn.status ?? 200, json, headers);
    }
    const events =
      protocol === "openai"
        ? openaiEvents(turn, modelId, id, usage, body.stream_options?.include_usage === true)
        : anthropicEvents(turn, modelId, id, usage, thinking);
    if (turn.errorEventAfter !== undefined) {
      const type = turn.errorType ?? (protocol === "openai" ? "server_error" : "overloaded_error");
      const error = { type, message: turn.errorMessage ?? "Overloaded" };
      events.splice(
        turn.errorEventAfter,
        events.length,
        protocol === "openai"
          ? `data: ${JSON.stringify({ error })}\n\n`
          : `event: error\ndata: ${JSON.stringify({ type: "error", error })}\n\n`,
      );
    }
    if (turn.corruptEvent !== undefined && events[turn.corruptEvent]) {
      const e = events[turn.corruptEvent]!;
      const data = e.indexOf("data: ");
      events[turn.corruptEvent] = `${e.slice(0, data + 6 + Math.floor((e.length - data - 8) / 2))}\n\n`;
    }
    res.writeHead(turn.status ?? 200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...headers,
    });
    if (turn.cutAfterEvents !== undefined) {
      // Flush what we have, then drop the connection mid-stream.
      res.write(events.slice(0, turn.cutAfterEvents).join(""), () => res.socket?.destroy());
      return;
    }
    if (turn.stallAfterEvents !== undefined) {
      res.write(events.slice(0, turn.stallAfterEvents).join(""));
      return;
    }
    const sent = turn.endAfterEvents !== undefined ? events.slice(0, turn.endAfterEvents) : events;
    res.end(sent.join(""));
  };

  const embed = (res: ServerResponse, body: unknown, index: number) => {
    const status = options.embeddings?.status?.(index);
    if (status && status >= 300)
      return send(res, status, errorBody("openai", status, `scripted error ${status}`));
    if (typeof (body as { model?: unknown } | undefined)?.model !== "string")
      return send(res, 400, errorBody("openai", 400, "`model` is missing or not a string"));
    const input = (body as { input?: unknown } | undefined)?.input;
    const texts = typeof input === "string" ? [input] : input;
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string"))
      return send(res, 400, errorBody("openai", 400, "input must be a string or a list of strings"));
    const dims = options.embeddings?.dimensions ?? 32;
    const data = (texts as string[]).map((text, i) => ({
      object: "embedding",
      index: i,
      embedding: bagOfWords(text, dims),
    }));
    send(res, 200, JSON.stringify({ object: "list", data, model: (body as { model?: string }).model ?? "" }));
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    readBody(req)
      .then(async (raw) => {
        let body: unknown;
        try {
          body = raw ? JSON.parse(raw) : undefined;
        } catch {
          body = undefined;
        }
        const record: RecordedHttpRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
        requests.push(record);
        if (req.method === "POST" && path === "/v1/embeddings") return embed(res, body, embeddingRequests++);
        if (req.method === "GET" && path === "/v1/models") {
          return send(
            res,
            200,
            JSON.stringify({
              object: "list",
              data: [{ id: modelId, object: "model", created: 0, owned_by: "scripted" }],
            }),
          );
        }
        const protocol: Protocol | undefined =
          req.method === "POST" && path === "/v1/chat/completions"
            ? "openai"
            : req.method === "POST" && path === "/v1/messages"
              ? "anthropic"
              : undefined;
        if (!protocol) return send(res, 404, errorBody("openai", 404, `no route for ${req.method} ${path}`));
        const problem = checkChatRequest(protocol, raw);
        if (problem) {
          const entry = { request: requests.length, path, error: problem };
          invalid.push(entry);
          unreported.add(entry);
          process.stderr.write(
            `scripted server: request #${entry.request} to ${path} is invalid: ${problem}\n`,
          );
          return send(res, 400, errorBody(protocol, 400, `scripted server: invalid request: ${problem}`));
        }
        await answer(req, res, protocol, record, raw.length);
      })
      .catch((err: unknown) => {
        if (!res.headersSent)
          send(res, 500, errorBody("openai", 500, `scripted server failed: ${String(err)}`));
        else res.destroy();
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/v1`,
    origin,
    port,
    requests,
    invalid,
    get overflows() {
      return overflows;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => {
          for (const entry of invalid) unreported.delete(entry);
          if (invalid.length === 0) return resolve();
          const list = invalid.map((r) => `#${r.request} ${r.path}: ${r.error}`).join("\n  ");
          reject(new Error(`scripted server received ${invalid.length} invalid request(s):\n  ${list}`));
        });
        server.closeAllConnections();
      }),
  };
}
