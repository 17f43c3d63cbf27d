// A provider that plays back scripted turns, for tests of everything above the model.
import { withCost } from "./pricing.js";
import { abortError, sleep } from "./retry.js";
import type { FinishReason, ModelRequest, ModelResponse, Provider, ToolCall, Usage } from "./types.js";

export interface ScriptedTurn {
  content?: string;
  toolCalls?: Array<{ id?: string; name: string; arguments: Record<string, unknown> | string }>;
  usage?: Partial<Usage>;
  finishReason?: FinishReason;
  correction?: string;
  /** Throw this instead of answering (a string becomes an Error). */
  error?: Error | string;
}

export type ScriptStep = ScriptedTurn | ((request: ModelRequest) => ScriptedTurn | Promise<ScriptedTurn>);

export interface ScriptedProviderOptions {
  model?: string;
  /** Simulated latency per turn, in ms (honours the abort signal). */
  delayMs?: number;
  /**
   * Emit text_delta / tool_call_delta events like a streaming provider (default false, so
   * event-sequence assertions above the model stay short).
   */
  emitEvents?: boolean;
}

/** A request as recorded: the arrays are copied, so later mutation by the caller does not show. */
export type RecordedModelRequest = Omit<ModelRequest, "onEvent" | "signal">;

export class ScriptedProvider implements Provider {
  readonly name = "scripted";
  readonly model: string;
  readonly requests: RecordedModelRequest[] = [];
  private next = 0;
  private ids = 0;

  /** `script` is a list of steps, or one function answering every request. */
  constructor(
    private readonly script: ScriptStep[] | ((request: ModelRequest) => ScriptedTurn | Promise<ScriptedTurn>),
    private readonly options: ScriptedProviderOptions = {},
  ) {
    this.model = options.model ?? "scripted";
  }

  /** Steps not yet played. */
  get remaining(): number {
    return Array.isArray(this.script) ? this.script.length - this.next : Number.POSITIVE_INFINITY;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const started = performance.now();
    const { onEvent: _onEvent, signal: _signal, ...rest } = request;
    this.requests.push({ ...rest, messages: [...request.messages], tools: [...request.tools] });
    if (request.signal?.aborted) throw abortError(request.signal);
    let step: ScriptStep;
    if (Array.isArray(this.script)) {
      const s = this.script[this.next];
      if (!s) {
        throw new Error(
          `ScriptedProvider: the script has run out (${this.script.length} turns scripted, request #${this.requests.length} received)`,
        );
      }
      this.next++;
      step = s;
    } else step = this.script;
    const turn = typeof step === "function" ? await step(request) : step;
    if (this.options.delayMs) await sleep(this.options.delayMs, request.signal);
    if (turn.error !== undefined) throw typeof turn.error === "string" ? new Error(turn.error) : turn.error;

    const content = turn.content ?? "";
    const emit = this.options.emitEvents ? request.onEvent : undefined;
    if (content) emit?.({ type: "text_delta", text: content });
    const toolCalls: ToolCall[] = (turn.toolCalls ?? []).map((c, index) => {
      const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments);
      const call = { id: c.id ?? `call_${++this.ids}`, name: c.name, arguments: args };
      request.onEvent?.({
        type: "tool_call_delta",
        index,
        id: call.id,
        name: call.name,
        argumentsDelta: args,
      });
      return call;
    });
    const usage: Usage = {
      inputTokens: turn.usage?.inputTokens ?? 0,
      outputTokens: turn.usage?.outputTokens ?? 0,
      ...(turn.usage?.cachedInputTokens !== undefined
        ? { cachedInputTokens: turn.usage.cachedInputTokens }
        : {}),
    };
    return {
      message: { role: "assistant", content, ...(toolCalls.length ? { toolCalls } : {}) },
      usage:
        turn.usage?.costUsd !== undefined
          ? { ...usage, costUsd: turn.usage.costUsd }
          : withCost(usage, this.model),
      finishReason: turn.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
      ...(turn.correction ? { correction: turn.correction } : {}),
      durationMs: performance.now() - started,
    };
  }
}
