// OpenAI-compatible chat completions (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama, LM Studio …)
// through the official client, with streaming, native tool calls, and recovery of tool calls
// that local models print as text.
import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { IdleWatch } from "./idle.js";
import { fetchModelList, listedModels } from "./list-models.js";
import {
  fromOpenAIFinish,
  fromOpenAIUsage,
  maxTokensParam,
  toOpenAIMessage,
  toOpenAITools,
} from "./openai-wire.js";
import { type ModelPrice, withCost } from "./pricing.js";
import {
  ReasoningCollector,
  reasoningParams,
  rejectsReasoningField,
  splitUnopenedThink,
  ThinkTagSplitter,
  turnHasToolCalls,
} from "./reasoning.js";
import { RequestBodyEncoder } from "./request-body.js";
import { type CallContext, isRefusal, protocolError, summarize } from "./retry.js";
import { type SdkProviderOptions, sdkClient, withAttempts } from "./sdk-common.js";
import { streamError } from "./sse.js";
import { postedEvents, type SdkErrors, type StreamTarget, streamTarget } from "./stream-post.js";
import { extractTextToolCallsWithRest } from "./text-tool-calls.js";
import {
  type FinishReason,
  ModelError,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type ReasoningLevel,
  type Thinking,
  type ToolCall,
  type Usage,
} from "./types.js";

/** Builds the request body (a JSON buffer) with the given extra top-level fields. */
type BodyOf = (extra: Record<string, unknown>) => Buffer;
const JSON_HEADERS = { "content-type": "application/json" };

export interface OpenAIProviderOptions extends SdkProviderOptions {
  model: string;
  /** Default https://api.openai.com/v1. */
  baseURL?: string;
  /** Default $OPENAI_API_KEY; local servers accept any value. */
  apiKey?: string;
  /** Price override for this model (else the built-in table, else no cost). */
  pricing?: ModelPrice;
  /** Server-sent events (default true). */
  stream?: boolean;
  /** Default max output tokens when a request sets none (default: the server's). */
  maxTokens?: number;
  /** Recover tool calls printed as text when there are no native ones (default true). */
  textToolCalls?: boolean;
  /** How hard a reasoning model thinks, unless a request says otherwise (default: the server's). */
  reasoning?: ReasoningLevel;
}

/** What one attempt produced, before text tool-call recovery and costing. */
interface RawResult {
  content: string;
  toolCalls: ToolCall[];
  finish: string | null;
  usage: Usage;
  /** Reasoning from the response's reasoning fields. */
  reasoning: ReasoningCollector;
  /** Reasoning the content carried in a leading think tag (already cut from `content`). */
  tagged: string;
}

let generatedIds = 0;

export class OpenAIProvider implements Provider {
  readonly name = "openai";
  readonly model: string;
  readonly baseURL: string;
  private sdk?: Promise<{ client: OpenAI; errors: SdkErrors }>;
  /** Where and with which headers the SDK sends a chat request (built once, stream-post.ts). */
  private target?: Promise<StreamTarget>;
  private readonly encoder = new RequestBodyEncoder(toOpenAIMessage);
  /** Set once the server refused the reasoning fields: they are not sent again. */
  private reasoningRefused = false;

  constructor(private readonly options: OpenAIProviderOptions) {
    this.model = options.model;
    this.baseURL = (options.baseURL ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  }

  prepare(): void {
    this.loadSdk().catch(() => {}); // the first request awaits the same promise and reports it
  }

  private loadSdk(): Promise<{ client: OpenAI; errors: SdkErrors }> {
    // Loaded on first use: importing the SDK costs ~60 ms that a CLI start should not pay.
    this.sdk ??= sdkClient(
      import("openai"),
      this.baseURL,
      this.options.apiKey ?? process.env.OPENAI_API_KEY ?? "no-key",
      this.options,
    );
    return this.sdk;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const started = performance.now();
    const sdk = await this.loadSdk();
    const maxTokens = request.maxTokens ?? this.options.maxTokens;
    const level = request.reasoning ?? this.options.reasoning;
    const thinking =
      level && !this.reasoningRefused ? reasoningParams(level, this.baseURL, this.model) : undefined;
    if (thinking?.notice) request.onEvent?.({ type: "notice", message: thinking.notice });
    const fields: Record<string, unknown> = {
      model: this.model,
      ...(maxTokens !== undefined ? maxTokensParam(this.model, maxTokens) : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.stop?.length ? { stop: request.stop } : {}),
      ...thinking?.fields,
    };
    const tools = request.tools.length
      ? { key: request.tools, wire: () => toOpenAITools(request.tools) }
      : undefined;
    const bodies: Buffer[] = [];
    const body = (extra: Record<string, unknown>) => {
      const b = this.encoder.encode({ ...fields, ...extra }, request.messages, tools);
      bodies.push(b);
      return b;
    };
    const done = (ok: boolean) => {
      for (const b of bodies.splice(0)) this.encoder.release(b, ok);
    };
    const context: CallContext = {
      provider: this.name,
      endpoint: `${this.baseURL}/chat/completions`,
      baseURL: this.baseURL,
      model: this.model,
    };
    const streaming = this.options.stream ?? true;
    const attempt = () =>
      withAttempts(this.options, request, context, (watch) =>
        (streaming
          ? this.readStream(sdk, body, request, watch)
          : this.readJson(sdk.client, body, request, watch)
        ).then(
          (r) => {
            done(true);
            return r;
          },
          (e: unknown) => {
            done(false);
            throw e;
          },
        ),
      );
    let raw: RawResult;
    try {
      raw = await attempt();
    } catch (err) {
      if (err instanceof ModelError && err.status === 404) throw await this.withListedModels(err);
      // A server that does not know a reasoning switch may refuse the request: say so, drop it.
      const added = Object.keys(thinking?.fields ?? {});
      if (!isRefusal(err) || added.length === 0 || !rejectsReasoningField(err.message, added)) throw err;
      this.reasoningRefused = true;
      for (const f of added) delete fields[f];
      request.onEvent?.({
        type: "notice",
        message: `--reasoning ${level}: the server refused ${added.join(", ")}; sent without it (${summarize(err.message, 120)})`,
      });
      raw = await attempt();
    }
    return this.finish(raw, request, started);
  }

  /** A 404 for the chat request: says which models the endpoint has, when it lists them. */
  private async withListedModels(err: ModelError): Promise<ModelError> {
    const apiKey = this.options.apiKey ?? process.env.OPENAI_API_KEY;
    const list = await fetchModelList(this.baseURL, { ...(apiKey ? { apiKey } : {}) });
    if (!list.ok || list.models.length === 0 || list.models.includes(this.model)) return err;
    err.message += `. ${this.baseURL}/models has no model ${this.model}; it lists: ${listedModels(list.models)}`;
    return err;
  }

  private finish(raw: RawResult, request: ModelRequest, started: number): ModelResponse {
    let { content, toolCalls } = raw;
    let tagged = raw.tagged;
    if (!tagged && !raw.reasoning.seen) {
      const split = splitUnopenedThink(content);
      if (split) ({ thinking: tagged, answer: content } = split);
    }
    let finishReason: FinishReason = fromOpenAIFinish(raw.finish);
    if (toolCalls.length === 0 && request.tools.length > 0 && this.options.textToolCalls !== false) {
      const found = extractTextToolCallsWithRest(
        content,
        request.tools.map((t) => t.name),
      );
      if (found) {
        content = found.rest;
        toolCalls = found.calls;
      }
    }
    if (toolCalls.length > 0 && finishReason === "stop") finishReason = "tool_calls";
    const thinking: Thinking | undefined =
      raw.reasoning.result(toolCalls.length > 0 || turnHasToolCalls(request.messages)) ??
      (tagged.trim() ? { text: tagged.trim(), source: "think_tag" } : undefined);
    return {
      message: {
        role: "assistant",
        content,
        ...(toolCalls.length ? { toolCalls } : {}),
        ...(thinking ? { thinking } : {}),
      },
      usage: withCost(raw.usage, this.model, this.options.pricing),
      finishReason,
      durationMs: performance.now() - started,
    };
  }

  private async readJson(
    client: OpenAI,
    body: BodyOf,
    request: ModelRequest,
    watch: IdleWatch,
  ): Promise<RawResult> {
    const completion: unknown = await client.post("/chat/completions", {
      body: body({ stream: false }),
      headers: JSON_HEADERS,
      signal: watch.signal,
    });
    const choices = (completion as { choices?: unknown } | null)?.choices;
    if (!completion || typeof completion !== "object" || !Array.isArray(choices)) {
      const shown = typeof completion === "string" ? completion : JSON.stringify(completion) || "(empty)";
      throw protocolError(`expected a chat completion object, got: ${summarize(shown, 200)}`);
    }
    const c = completion as OpenAI.Chat.Completions.ChatCompletion;
    const choice = c.choices[0];
    if (!choice) throw protocolError("the response has no choices");
    const reasoning = new ReasoningCollector();
    const thought = reasoning.read(choice.message as unknown as Record<string, unknown>);
    if (thought) request.onEvent?.({ type: "thinking_delta", text: thought });
    const splitter = new ThinkTagSplitter();
    const first = splitter.push(choice.message?.content ?? "");
    const last = splitter.end();
    const tagged = first.thinking + last.thinking;
    const content = first.answer + last.answer;
    if (tagged) request.onEvent?.({ type: "thinking_delta", text: tagged });
    if (content) request.onEvent?.({ type: "text_delta", text: content });
    const toolCalls: ToolCall[] = [];
    for (const call of choice.message?.tool_calls ?? []) {
      if (call.type !== "function") continue;
      toolCalls.push({
        id: call.id || `call_gen_${++generatedIds}`,
        name: call.function.name,
        arguments: call.function.arguments || "{}",
      });
    }
    return {
      content,
      toolCalls,
      finish: choice.finish_reason,
      usage: fromOpenAIUsage(c.usage),
      reasoning,
      tagged,
    };
  }

  private async readStream(
    { client, errors }: { client: OpenAI; errors: SdkErrors },
    body: BodyOf,
    request: ModelRequest,
    watch: IdleWatch,
  ): Promise<RawResult> {
    // Sent as the SDK would send it, read by our own SSE decoder (linear in the body's size).
    this.target ??= streamTarget(client, "/chat/completions", JSON_HEADERS);
    const events = postedEvents(
      await this.target,
      body({ stream: true, stream_options: { include_usage: true } }),
      watch.signal,
      errors,
      watch.touch,
    );
    const emit = request.onEvent;
    let content = "";
    let finish: string | null = null;
    let usage: ChatCompletionChunk["usage"];
    let chunks = 0;
    const reasoning = new ReasoningCollector();
    const splitter = new ThinkTagSplitter();
    let tagged = "";
    const onContent = (piece: { thinking: string; answer: string }) => {
      if (piece.thinking) {
        tagged += piece.thinking;
        emit?.({ type: "thinking_delta", text: piece.thinking });
      }
      if (piece.answer) {
        content += piece.answer;
        emit?.({ type: "text_delta", text: piece.answer });
      }
    };
    // Parallel tool calls arrive interleaved by index; names and ids come once, arguments in pieces.
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    for await (const { value } of events) {
      if (value && typeof value === "object" && "error" in value) throw streamError(value);
      const chunk = value as ChatCompletionChunk;
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      const thought = reasoning.read(delta as Record<string, unknown> | undefined);
      if (thought) emit?.({ type: "thinking_delta", text: thought });
      if (delta?.content) onContent(splitter.push(delta.content));
      for (const tc of delta?.tool_calls ?? []) {
        const index = tc.index ?? 0;
        let entry = calls.get(index);
        if (!entry) {
          entry = { id: "", name: "", arguments: "" };
          calls.set(index, entry);
        }
        if (tc.id && !entry.id) entry.id = tc.id;
        if (tc.function?.name && !entry.name) entry.name = tc.function.name;
        if (tc.function?.arguments) entry.arguments += tc.function.arguments;
        emit?.({
          type: "tool_call_delta",
          index,
          ...(tc.id ? { id: tc.id } : {}),
          ...(tc.function?.name ? { name: tc.function.name } : {}),
          ...(tc.function?.arguments ? { argumentsDelta: tc.function.arguments } : {}),
        });
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (watch.expired) throw new Error("idle timeout");
    onContent(splitter.end());
    if (chunks === 0) {
      throw protocolError("the server answered 200 but the event stream held no data");
    }
    if (finish === null) {
      throw protocolError("the event stream ended before the response was complete", true, "connection");
    }
    const toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({
        id: c.id || `call_gen_${++generatedIds}`,
        name: c.name,
        arguments: c.arguments || "{}",
      }));
    return { content, toolCalls, finish, usage: fromOpenAIUsage(usage), reasoning, tagged };
  }
}
