// Anthropic's messages API with tool use and streaming. The SDK is imported on first use:
// it takes ~120 ms to load and most runs never touch it. It says where a request goes and with
// which headers (once per client), and what a failure is; the request itself is sent by
// stream-post.ts (streamed) or the client's plain `post` (not), not by `messages.create`, whose
// machinery cost ~0.6 ms a request and which prints a deprecation warning at every request.
import type Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsBase,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages/messages";
import { AnthropicBodyEncoder } from "./anthropic-body.js";
import {
  refusesThinkingForm,
  type ThinkingMode,
  thinkingModeFor,
  thinkingParams,
} from "./anthropic-thinking.js";
import {
  fromAnthropicStop,
  fromAnthropicUsage,
  toAnthropic,
  toAnthropicTools,
  withCacheBreakpoints,
} from "./anthropic-wire.js";
import type { IdleWatch } from "./idle.js";
import { type ModelPrice, withCost } from "./pricing.js";
import { type CallContext, isRefusal, protocolError, summarize } from "./retry.js";
import { type SdkProviderOptions, sdkClient, withAttempts } from "./sdk-common.js";
import { streamError } from "./sse.js";
import { postedEvents, type SdkErrors, type StreamTarget, streamTarget } from "./stream-post.js";
import type {
  ModelRequest,
  ModelResponse,
  Provider,
  ReasoningLevel,
  Thinking,
  ThinkingBlock,
  ToolCall,
  Usage,
} from "./types.js";

const JSON_HEADERS = { "content-type": "application/json" };

/** A request's parameters but the conversation and the tools. */
type RequestFields = Omit<MessageCreateParamsBase, "messages" | "system" | "tools">;

/** The conversation and the tools of a request, converted whole (non-streamed requests). */
function wireOf(request: ModelRequest): Pick<MessageCreateParamsBase, "messages" | "system" | "tools"> {
  const { system, messages } = withCacheBreakpoints(toAnthropic(request.messages));
  return {
    messages,
    ...(system ? { system } : {}),
    ...(request.tools.length ? { tools: toAnthropicTools(request.tools) } : {}),
  };
}

/**
 * Models Anthropic has announced the end of (the SDK's `messages.create` warns at every request;
 * here a run is told once). Dated ids count as their model.
 */
const DEPRECATED: Record<string, string> = { "claude-sonnet-4-5": "November 30th, 2026" };

export interface AnthropicProviderOptions extends SdkProviderOptions {
  model: string;
  /** Default $ANTHROPIC_API_KEY. */
  apiKey?: string;
  /** Default https://api.anthropic.com. A trailing /v1 is dropped (the SDK adds it). */
  baseURL?: string;
  pricing?: ModelPrice;
  /** Default true. */
  stream?: boolean;
  /** Required by the API; used when a request sets none (default 8192). */
  maxTokens?: number;
  /** Extended thinking unless a request says otherwise (default: off, as the API's default). */
  reasoning?: ReasoningLevel;
}

interface RawResult {
  content: string;
  toolCalls: ToolCall[];
  stop: string | null;
  usage: Usage;
  thinking: ThinkingBlock[];
}

/** The reply's thinking for people (redacted blocks have no readable text) and for the API. */
function thinkingOf(blocks: ThinkingBlock[]): Thinking | undefined {
  if (blocks.length === 0) return undefined;
  const text = blocks.map((b) => (b.type === "thinking" ? b.thinking : "[redacted thinking]")).join("\n\n");
  return { text, blocks, source: "blocks" };
}

export class AnthropicProvider implements Provider {
  readonly name = "anthropic";
  readonly model: string;
  readonly baseURL: string;
  private sdk?: Promise<{ client: Anthropic; errors: SdkErrors }>;
  /** Where and with which headers the SDK sends a messages request (built once, stream-post.ts). */
  private target?: Promise<StreamTarget>;
  /** A streamed request's body, each message encoded once (anthropic-body.ts). */
  private readonly encoder = new AnthropicBodyEncoder();
  /** Whether this run was told its model is deprecated (once, not at every request). */
  private toldDeprecated = false;
  /** The thinking form the server accepted after refusing the one the model's name suggested. */
  private thinkingMode?: ThinkingMode;

  constructor(private readonly options: AnthropicProviderOptions) {
    this.model = options.model;
    this.baseURL = (options.baseURL ?? "https://api.anthropic.com").replace(/\/+$/, "").replace(/\/v1$/, "");
  }

  prepare(): void {
    this.loadSdk().catch(() => {}); // the first request awaits the same promise and reports it
  }

  private loadSdk(): Promise<{ client: Anthropic; errors: SdkErrors }> {
    this.sdk ??= sdkClient(
      import("@anthropic-ai/sdk"),
      this.baseURL,
      this.options.apiKey ?? process.env.ANTHROPIC_API_KEY ?? "no-key",
      this.options,
    );
    return this.sdk;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const started = performance.now();
    const sdk = await this.loadSdk();
    const retiring = DEPRECATED[this.model.replace(/-\d{8}$/, "")];
    if (retiring && !this.toldDeprecated) {
      this.toldDeprecated = true;
      request.onEvent?.({
        type: "notice",
        message: `${this.model} is deprecated and reaches its end of life on ${retiring} (docs.anthropic.com/en/docs/resources/model-deprecations)`,
      });
    }
    const level = request.reasoning ?? this.options.reasoning;
    const thinkingLevel = level && level !== "off" ? level : undefined;
    const answerTokens = request.maxTokens ?? this.options.maxTokens ?? 8192;
    // Thinking does not go with a changed temperature (docs.anthropic.com, "Extended thinking").
    if (thinkingLevel && request.temperature !== undefined) {
      request.onEvent?.({ type: "notice", message: "extended thinking ignores the temperature setting" });
    }
    // Everything but the conversation and the tools (which the body encoder keeps encoded).
    const fieldsFor = (mode: ThinkingMode): RequestFields => ({
      model: this.model,
      max_tokens: answerTokens,
      ...(request.temperature !== undefined && !thinkingLevel ? { temperature: request.temperature } : {}),
      ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
      ...(thinkingLevel ? thinkingParams(mode, thinkingLevel, answerTokens) : {}),
    });
    const context: CallContext = {
      provider: this.name,
      endpoint: `${this.baseURL}/v1/messages`,
      baseURL: this.baseURL,
      model: this.model,
    };
    const streaming = this.options.stream ?? true;
    const attempt = (fields: RequestFields) =>
      withAttempts(this.options, request, context, (watch) =>
        streaming
          ? this.readStream(sdk, fields, request, watch)
          : this.readJson(sdk.client, fields, request, watch),
      );
    const mode = this.thinkingMode ?? thinkingModeFor(this.model);
    let raw: RawResult;
    try {
      raw = await attempt(fieldsFor(mode));
    } catch (err) {
      // Refused the thinking form the name suggested (a model this does not know, a server of
      // its own): the other form, once, and from then on.
      if (!thinkingLevel || this.thinkingMode || !isRefusal(err) || !refusesThinkingForm(err.message))
        throw err;
      const other: ThinkingMode = mode === "adaptive" ? "budget" : "adaptive";
      this.thinkingMode = other;
      request.onEvent?.({
        type: "notice",
        message: `--reasoning ${thinkingLevel}: the server refused ${mode === "adaptive" ? "adaptive thinking" : "a thinking budget"}; sent with ${other === "adaptive" ? "adaptive thinking" : "a thinking budget"} instead (${summarize(err.message.replace(/^.*?HTTP 400: /, ""), 160)})`,
      });
      raw = await attempt(fieldsFor(other));
    }
    let finishReason = fromAnthropicStop(raw.stop);
    if (raw.toolCalls.length > 0 && finishReason === "stop") finishReason = "tool_calls";
    const thinking = thinkingOf(raw.thinking);
    return {
      message: {
        role: "assistant",
        content: raw.content,
        ...(raw.toolCalls.length ? { toolCalls: raw.toolCalls } : {}),
        ...(thinking ? { thinking } : {}),
      },
      usage: withCost(raw.usage, this.model, this.options.pricing),
      finishReason,
      durationMs: performance.now() - started,
    };
  }

  private async readJson(
    client: Anthropic,
    fields: RequestFields,
    request: ModelRequest,
    watch: IdleWatch,
  ): Promise<RawResult> {
    const message: unknown = await client.post("/v1/messages", {
      body: { ...fields, ...wireOf(request), stream: false },
      signal: watch.signal,
    });
    const blocks = (message as { content?: unknown } | null)?.content;
    if (!message || typeof message !== "object" || !Array.isArray(blocks)) {
      const shown = typeof message === "string" ? message : JSON.stringify(message) || "(empty)";
      throw protocolError(`expected a message object, got: ${summarize(shown, 200)}`);
    }
    const m = message as Anthropic.Message;
    let content = "";
    const toolCalls: ToolCall[] = [];
    const thinking: ThinkingBlock[] = [];
    for (const block of m.content) {
      if (block.type === "text") content += block.text;
      else if (block.type === "tool_use") {
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      } else if (block.type === "thinking") {
        thinking.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
        request.onEvent?.({ type: "thinking_delta", text: block.thinking });
      } else if (block.type === "redacted_thinking") {
        thinking.push({ type: "redacted_thinking", data: block.data });
      }
    }
    if (content) request.onEvent?.({ type: "text_delta", text: content });
    return { content, toolCalls, stop: m.stop_reason, usage: fromAnthropicUsage(m.usage ?? {}), thinking };
  }

  private async readStream(
    { client, errors }: { client: Anthropic; errors: SdkErrors },
    fields: RequestFields,
    request: ModelRequest,
    watch: IdleWatch,
  ): Promise<RawResult> {
    // Sent as the SDK would send it, read by our own SSE decoder (linear in the body's size).
    this.target ??= streamTarget(client, "/v1/messages", JSON_HEADERS);
    const events = postedEvents(
      await this.target,
      this.encoder.encode(
        { ...fields, stream: true },
        request.messages,
        request.tools.length
          ? { key: request.tools, wire: () => toAnthropicTools(request.tools) }
          : undefined,
      ),
      watch.signal,
      errors,
      watch.touch,
    );
    const emit = request.onEvent;
    let content = "";
    let stop: string | null = null;
    // message_delta repeats the counts cumulatively and may leave input counts null.
    const wireUsage: Record<string, number | null | undefined> = {};
    const mergeUsage = (u: object | null | undefined) => {
      for (const [key, value] of Object.entries(u ?? {}))
        if (typeof value === "number") wireUsage[key] = value;
    };
    let started = false;
    let stopped = false;
    const calls: ToolCall[] = [];
    // Content block index -> position in `calls` (text and tool blocks share one index space).
    const toolIndex = new Map<number, number>();
    const thinking: ThinkingBlock[] = [];
    // Content block index -> its thinking block, filled by thinking_delta and signature_delta.
    const thinkingIndex = new Map<number, ThinkingBlock & { type: "thinking" }>();
    for await (const { value } of events) {
      const event = value as RawMessageStreamEvent | { type: "error"; error: unknown };
      switch (event.type) {
        case "error":
          throw streamError(event);
        case "message_start":
          started = true;
          mergeUsage(event.message.usage);
          break;
        case "content_block_start":
          if (event.content_block.type === "tool_use") {
            const { id, name } = event.content_block;
            toolIndex.set(event.index, calls.length);
            emit?.({ type: "tool_call_delta", index: calls.length, id, name });
            calls.push({ id, name, arguments: "" });
          } else if (event.content_block.type === "text" && event.content_block.text) {
            content += event.content_block.text;
            emit?.({ type: "text_delta", text: event.content_block.text });
          } else if (event.content_block.type === "thinking") {
            const block = {
              type: "thinking" as const,
              thinking: event.content_block.thinking ?? "",
              signature: event.content_block.signature ?? "",
            };
            thinkingIndex.set(event.index, block);
            thinking.push(block);
            if (block.thinking) emit?.({ type: "thinking_delta", text: block.thinking });
          } else if (event.content_block.type === "redacted_thinking") {
            thinking.push({ type: "redacted_thinking", data: event.content_block.data });
          }
          break;
        case "content_block_delta":
          if (event.delta.type === "text_delta") {
            content += event.delta.text;
            emit?.({ type: "text_delta", text: event.delta.text });
          } else if (event.delta.type === "thinking_delta") {
            const block = thinkingIndex.get(event.index);
            if (block) {
              block.thinking += event.delta.thinking;
              emit?.({ type: "thinking_delta", text: event.delta.thinking });
            }
          } else if (event.delta.type === "signature_delta") {
            const block = thinkingIndex.get(event.index);
            if (block) block.signature += event.delta.signature;
          } else if (event.delta.type === "input_json_delta") {
            const index = toolIndex.get(event.index);
            const call = index === undefined ? undefined : calls[index];
            if (call && index !== undefined) {
              call.arguments += event.delta.partial_json;
              emit?.({ type: "tool_call_delta", index, argumentsDelta: event.delta.partial_json });
            }
          }
          break;
        case "message_delta":
          stop = event.delta.stop_reason ?? stop;
          mergeUsage(event.usage);
          break;
        case "message_stop":
          stopped = true;
          break;
      }
    }
    if (watch.expired) throw new Error("idle timeout");
    if (!started) throw protocolError("the server answered 200 but the event stream held no data");
    if (!stopped && stop === null) {
      throw protocolError("the event stream ended before the response was complete", true, "connection");
    }
    for (const call of calls) call.arguments ||= "{}";
    return { content, toolCalls: calls, stop, usage: fromAnthropicUsage(wireUsage), thinking };
  }
}
