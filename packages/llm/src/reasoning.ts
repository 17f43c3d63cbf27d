// Reasoning ("thinking") on OpenAI-compatible endpoints: reading the shapes servers stream it in,
// deciding what must be sent back, and asking for more or less of it. Anthropic's thinking
// blocks are handled in anthropic-wire.ts; both end up as a message's `thinking`.
import type { Message, ReasoningLevel, Thinking } from "./types.js";

/**
 * Splits `<think>…</think>` (or `<thinking>…</thinking>`) at the start of streamed content from
 * the answer, the way local servers without a reasoning parser emit it. Text before the tag may
 * only be whitespace; a tag later in the text is the answer's own business (a model explaining
 * tags), so it stays in the content.
 */
export class ThinkTagSplitter {
  /** "gap": between the closing tag and the answer's first visible character. */
  private state: "start" | "thinking" | "gap" | "answer" = "start";
  private pending = "";
  private close = "";
  /** Set when the content opened with a think tag. */
  sawTag = false;

  /** Feeds one content delta; returns what of it is thinking and what is answer so far. */
  push(text: string): { thinking: string; answer: string } {
    let thinking = "";
    let answer = "";
    let rest = this.pending + text;
    this.pending = "";
    while (rest) {
      if (this.state === "start") {
        const lead = rest.length - rest.trimStart().length;
        const body = rest.slice(lead);
        const open = OPEN_TAGS.find((t) => body.startsWith(t));
        if (open) {
          this.state = "thinking";
          this.sawTag = true;
          this.close = `</${open.slice(1)}`;
          rest = body.slice(open.length).replace(/^\s+/, "");
          continue;
        }
        if (body === "" || OPEN_TAGS.some((t) => t.startsWith(body))) {
          this.pending = rest; // whitespace or a tag still arriving
          return { thinking, answer };
        }
        this.state = "answer";
        continue;
      }
      if (this.state === "thinking") {
        const end = rest.indexOf(this.close);
        if (end >= 0) {
          thinking += rest.slice(0, end);
          rest = rest.slice(end + this.close.length);
          this.state = "gap";
          continue;
        }
        // Hold back a tail that may be the start of the closing tag.
        const keep = partialSuffix(rest, this.close);
        thinking += rest.slice(0, rest.length - keep);
        this.pending = rest.slice(rest.length - keep);
        return { thinking, answer };
      }
      if (this.state === "gap") {
        rest = rest.replace(/^\s+/, "");
        if (!rest) break;
        this.state = "answer";
      }
      answer += rest;
      rest = "";
    }
    return { thinking, answer };
  }

  /** The end of the stream: whatever was held back. An unclosed tag leaves it all thinking. */
  end(): { thinking: string; answer: string } {
    const rest = this.pending;
    this.pending = "";
    if (this.state === "thinking") return { thinking: rest, answer: "" };
    return { thinking: "", answer: rest };
  }
}

const OPEN_TAGS = ["<think>", "<thinking>"];

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

/**
 * Chat templates that open the think tag in the prompt (DeepSeek-R1 distills, QwQ) make the model
 * start with thinking and only close it: "reasoning…</think>answer". Split that after the fact.
 */
export function splitUnopenedThink(content: string): { thinking: string; answer: string } | undefined {
  const end = content.indexOf("</think>");
  if (end < 0 || content.slice(0, end).includes("<think>")) return undefined;
  return { thinking: content.slice(0, end).trim(), answer: content.slice(end + "</think>".length).trim() };
}

/** One element of OpenRouter's `reasoning_details` (text, summary or encrypted). */
type Detail = Record<string, unknown> & { type?: string; index?: number };

/** Collects the reasoning of one streamed (or whole) response, whatever field carries it. */
export class ReasoningCollector {
  private text = "";
  private field: "reasoning_content" | "reasoning" | undefined;
  private details: Detail[] = [];
  private detailsText = "";

  /** True once any reasoning arrived in a field. */
  get seen(): boolean {
    return this.text !== "" || this.details.length > 0;
  }

  /** Reads a delta (or a whole message); returns the new human-readable text, if any. */
  read(delta: Record<string, unknown> | undefined): string {
    if (!delta) return "";
    let added = "";
    for (const field of ["reasoning_content", "reasoning"] as const) {
      const value = delta[field];
      if (typeof value === "string" && value) {
        // A server that sends both (OpenRouter mirrors one into the other) is read from one.
        if (this.field && this.field !== field) continue;
        this.field = field;
        added += value;
      }
    }
    const details = delta["reasoning_details"];
    if (Array.isArray(details)) {
      for (const d of details) if (d && typeof d === "object") added += this.mergeDetail(d as Detail);
    }
    this.text += added;
    return added;
  }

  /** Streamed details arrive in pieces per index; text pieces are joined, other fields kept. */
  private mergeDetail(d: Detail): string {
    const shown =
      typeof d["text"] === "string" ? d["text"] : typeof d["summary"] === "string" ? d["summary"] : "";
    const same =
      d.index !== undefined ? this.details.find((x) => x.index === d.index && x.type === d.type) : undefined;
    if (!same) this.details.push({ ...d });
    else {
      for (const [key, value] of Object.entries(d)) {
        if (typeof value === "string" && typeof same[key] === "string" && key !== "type" && key !== "format")
          same[key] = (same[key] as string) + value;
        else if (same[key] === undefined) same[key] = value;
      }
    }
    // With a plain reasoning field present, details repeat it: show it once.
    if (this.field) return "";
    this.detailsText += shown;
    return shown;
  }

  /**
   * The reply's thinking. `inToolLoop`: the reply makes tool calls, or follows tool results of the
   * same user turn — then DeepSeek requires its reasoning_content back in every later request
   * ("Thinking Mode", api-docs.deepseek.com/guides/thinking_mode: a 400 otherwise), while outside
   * a tool loop it is not to be sent (deepseek-reasoner answered a 400 to it, per
   * api-docs.deepseek.com/guides/reasoning_model; newer models ignore it). OpenRouter asks for
   * reasoning_details back unmodified in tool-calling flows (openrouter.ai/docs, "Preserving
   * reasoning blocks"); vLLM, SGLang and llama.cpp read reasoning_content on assistant turns.
   */
  result(inToolLoop: boolean): Thinking | undefined {
    const text = this.text || this.detailsText;
    if (!text && this.details.length === 0) return undefined;
    return {
      text,
      source: "field",
      ...(inToolLoop && this.field ? { sendBackAs: this.field } : {}),
      ...(inToolLoop && this.details.length ? { details: this.details } : {}),
    };
  }
}

/** True when the reply at the end of `history` belongs to a user turn that already called tools. */
export function turnHasToolCalls(history: readonly Message[]): boolean {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === "user") return false;
    if (m.role === "tool" || (m.role === "assistant" && m.toolCalls?.length)) return true;
  }
  return false;
}

/** The fields a reasoning level adds to a chat-completions request, and what the user should know. */
export interface ReasoningParams {
  fields: Record<string, unknown>;
  notice?: string;
}

/**
 * Maps a level onto what the server at `baseURL` running `model` understands. Each API has its
 * own switch: OpenAI `reasoning_effort` (minimal|low|medium|high; "none" on gpt-5.1 and later),
 * DeepSeek `thinking: {type}` plus `reasoning_effort` (api-docs.deepseek.com, "Thinking Mode"),
 * OpenRouter `reasoning: {effort | enabled}`, DashScope `enable_thinking`, and for Qwen3 / GLM /
 * DeepSeek chat templates on vLLM, SGLang and llama.cpp `chat_template_kwargs.enable_thinking`.
 */
export function reasoningParams(level: ReasoningLevel, baseURL: string, model: string): ReasoningParams {
  const host = hostOf(baseURL);
  const m = model.toLowerCase();
  if (host.endsWith("openrouter.ai")) {
    return { fields: { reasoning: level === "off" ? { enabled: false } : { effort: level } } };
  }
  if (host.endsWith("deepseek.com")) {
    if (level === "off") return { fields: { thinking: { type: "disabled" } } };
    return { fields: { thinking: { type: "enabled" }, reasoning_effort: level } };
  }
  if (host.includes("dashscope")) {
    if (level === "off") return { fields: { enable_thinking: false } };
    return {
      fields: { enable_thinking: true, thinking_budget: QWEN_BUDGET[level] },
    };
  }
  if (host.endsWith("openai.com") || /^(o\d|gpt-5)/.test(m)) {
    if (!/^(o\d|gpt-5)/.test(m))
      return { fields: {}, notice: `--reasoning ${level}: ${model} is not a reasoning model; ignored` };
    if (level !== "off") return { fields: { reasoning_effort: level } };
    if (/^gpt-5\.\d/.test(m)) return { fields: { reasoning_effort: "none" } };
    if (m.startsWith("gpt-5"))
      return {
        fields: { reasoning_effort: "minimal" },
        notice: `--reasoning off: ${model} cannot stop thinking; using the least ("minimal")`,
      };
    return {
      fields: { reasoning_effort: "low" },
      notice: `--reasoning off: ${model} cannot stop thinking; using the least ("low")`,
    };
  }
  // Local servers: chat templates take an on/off switch; gpt-oss and some servers take an effort.
  if (/qwen3|qwq|glm-4\.[5-9]|glm-[5-9]|deepseek-v3\.[1-9]/.test(m)) {
    const fields = { chat_template_kwargs: { enable_thinking: level !== "off" } };
    return level === "off" || level === "high"
      ? { fields }
      : { fields, notice: `--reasoning ${level}: ${model} only switches thinking on or off; it is on` };
  }
  if (level === "off") return { fields: { chat_template_kwargs: { enable_thinking: false } } };
  return { fields: { reasoning_effort: level } };
}

/** DashScope's thinking_budget in tokens per level. */
const QWEN_BUDGET: Record<Exclude<ReasoningLevel, "off">, number> = { low: 1024, medium: 4096, high: 16384 };

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return "";
  }
}

/** True when a 400's message complains about one of the reasoning fields we added. */
export function rejectsReasoningField(message: string, added: readonly string[]): boolean {
  const text = message.toLowerCase();
  return added.some((f) => text.includes(f)) || /reasoning|thinking/.test(text);
}
