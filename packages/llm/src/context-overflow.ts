// "The prompt is too long for this model": every server words it its own way. This recognises
// the wordings collected from the servers Hands talks to and turns them into one typed error,
// so the agent loop can send a shorter context instead of ending the run.
import { ModelError } from "./types.js";

/** The request did not fit the model's context window; retrying it unchanged cannot help. */
export class ContextOverflowError extends ModelError {
  constructor(
    message: string,
    status: number | undefined,
    /** The window the server named, in tokens, when it did. */
    readonly limitTokens?: number,
    /** The size of the rejected prompt the server named, in tokens, when it did. */
    readonly promptTokens?: number,
  ) {
    super(message, status, false);
    this.name = "ContextOverflowError";
  }
}

// Real messages (servers' own wording, numbers vary):
//  OpenAI / vLLM / DeepSeek / Groq / OpenRouter: code "context_length_exceeded"; "This model's
//    maximum context length is 8192 tokens. However, you requested 9000 tokens (…). Please
//    reduce the length of the messages or completion." / "Your input exceeds the context window
//    of this model."
//  vLLM (newer): "… maximum context length is 4096 tokens and your request has 5000 input
//    tokens …"; "The decoder prompt (length 5000) is longer than the maximum model length of 4096."
//  Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"; "input length and
//    `max_tokens` exceed context limit: 197202 + 21333 > 200000, …"; 413 request_too_large.
//  llama.cpp server: type "exceed_context_size_error", "the request exceeds the available
//    context size, try increasing it" with n_prompt_tokens and n_ctx (status 400, older 500).
//  LM Studio: "Trying to keep the first 15857 tokens when context the overflows. However, the
//    model is loaded with context length of only 4096 tokens, …"; "The number of tokens to keep
//    from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096)."
//  Ollama: "prompt too long; exceeded max context length by 100 tokens"; "input length exceeds
//    the context length".
//  Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768
//    maximum context length".  TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096".
//  Gemini (OpenAI-compatible): "The input token count (1200000) exceeds the maximum number of
//    tokens allowed (1048576)."
const WORDINGS = [
  /context_length_exceeded/i,
  /exceed_context_size_error/i,
  /maximum context length/i,
  /prompt is too long/i,
  /prompt too long/i,
  /exceeds? (the )?(available |max(imum)? )?context (size|length|window|limit)/i,
  /exceed(s|ed)? (the )?context (size|length|window|limit)/i,
  /context (length|window) exceeded/i,
  /exceeds? the context window/i,
  /context the overflows|when context overflows/i,
  /tokens to keep from the initial prompt is greater than the context length/i,
  /longer than the maximum model length/i,
  /too large for model with \d+ maximum context length/i,
  /`inputs` tokens \+ `max_new_tokens` must be <=/i,
  /input token count.*exceeds the maximum number of tokens/i,
  /request_too_large/i,
  /reduce the length of the messages/i,
];

const LIMITS = [
  /maximum context length is (\d+)/i,
  /> (\d+)(?: maximum|,)/i,
  /context length of only (\d+)/i,
  /n_ctx"?:\s*(\d+)/i,
  /maximum model length of (\d+)/i,
  /with (\d+) maximum context length/i,
  /must be <= (\d+)/i,
  /maximum number of tokens allowed \((\d+)\)/i,
];

const PROMPTS = [
  /prompt is too long: (\d+) tokens/i,
  /(?:you requested|resulted in) (?:about )?(\d+) tokens/i,
  /request has (\d+) input tokens/i,
  /keep the first (\d+) tokens/i,
  /n_keep"?:\s*(\d+)/i,
  /n_prompt_tokens"?:\s*(\d+)/i,
  /prompt \(length (\d+)\)/i,
  /Prompt contains (\d+) tokens/i,
  /input token count \((\d+)\)/i,
];

function firstNumber(patterns: RegExp[], text: string): number | undefined {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m?.[1]) return Number(m[1]);
  }
  return undefined;
}

/**
 * The window and prompt sizes when `text` (the server's error message and body, as text)
 * says the prompt did not fit; undefined when it is about something else. A 413 counts too:
 * the body was too large for the server, and a shorter one is the fix.
 */
export function overflowOf(
  status: number | undefined,
  text: string,
): { limitTokens?: number; promptTokens?: number } | undefined {
  if (
    status !== undefined &&
    status !== 413 &&
    (status < 400 || status === 401 || status === 403 || status === 429)
  )
    return undefined;
  if (status !== 413 && !WORDINGS.some((w) => w.test(text))) return undefined;
  const limitTokens = firstNumber(LIMITS, text);
  const promptTokens = firstNumber(PROMPTS, text);
  return {
    ...(limitTokens !== undefined ? { limitTokens } : {}),
    ...(promptTokens !== undefined ? { promptTokens } : {}),
  };
}
