import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnthropicProvider } from "./anthropic.js";
import { ContextOverflowError, overflowOf } from "./context-overflow.js";
import { OpenAIProvider } from "./openai.js";
import { startScriptedServer } from "./testing/scripted-server.js";

// Wordings as the servers send them (collected from their issue trackers), with the numbers
// each names: [status, text, limit, prompt].
const REAL: Array<[number | undefined, string, number | undefined, number | undefined]> = [
  [
    400,
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion. context_length_exceeded",
    8192,
    9000,
  ],
  [
    400,
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    undefined,
    undefined,
  ],
  [400, "prompt is too long: 208656 tokens > 200000 maximum", 200000, 208656],
  [
    400,
    "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again",
    200000,
    undefined,
  ],
  [
    413,
    '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    undefined,
    undefined,
  ],
  [
    400,
    '{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}',
    8192,
    14429,
  ],
  [
    500,
    "the request exceeds the available context size. try increasing the context size or enable context shift",
    undefined,
    undefined,
  ],
  [
    400,
    "Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
    4096,
    15857,
  ],
  [
    400,
    "The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input.",
    4096,
    13055,
  ],
  [
    400,
    "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum context length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - 3500).",
    4096,
    3500,
  ],
  [400, "The decoder prompt (length 5000) is longer than the maximum model length of 4096.", 4096, 5000],
  [400, "prompt too long; exceeded max context length by 100 tokens", undefined, undefined],
  [
    400,
    "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
    32768,
    40000,
  ],
  [
    422,
    "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 1000 `max_new_tokens`",
    4096,
    undefined,
  ],
  [
    400,
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    1048576,
    1200000,
  ],
];

const NOT_OVERFLOW: Array<[number | undefined, string]> = [
  [429, "Rate limit reached for requests. Please reduce the length of the messages"],
  [401, "Incorrect API key provided"],
  [404, "The model `gpt-9` does not exist"],
  [400, "max_tokens must be at least 1, got -186."],
  [500, "internal server error"],
  [400, "Invalid 'messages[2].tool_call_id': no tool call found"],
];

describe("context overflow wordings", () => {
  for (const [status, text, limit, prompt] of REAL) {
    test(`recognised: ${text.slice(0, 60)}`, () => {
      const found = overflowOf(status, text);
      assert.ok(found, "an overflow");
      assert.equal(found.limitTokens, limit);
      assert.equal(found.promptTokens, prompt);
    });
  }
  test("other errors are not overflows", () => {
    for (const [status, text] of NOT_OVERFLOW) assert.equal(overflowOf(status, text), undefined, text);
  });
});

describe("providers throw ContextOverflowError, without retrying", () => {
  const cases = [
    ["openai", "openai"],
    ["openai", "llamacpp"],
    ["openai", "lmstudio"],
    ["anthropic", "anthropic"],
  ] as const;
  for (const [endpoint, server] of cases) {
    test(`${endpoint} endpoint, ${server} wording`, async () => {
      const s = await startScriptedServer({
        script: [{ content: "never" }],
        contextWindow: { tokens: 10, server },
      });
      try {
        const options = { model: "m", apiKey: "k", retry: { baseDelayMs: 0 } };
        const provider =
          endpoint === "openai"
            ? new OpenAIProvider({ baseURL: s.url, ...options })
            : new AnthropicProvider({ baseURL: s.origin, ...options });
        const err = await provider
          .complete({ messages: [{ role: "user", content: "x".repeat(400) }], tools: [] })
          .catch((e: unknown) => e);
        assert.ok(err instanceof ContextOverflowError, String(err));
        assert.equal(err.limitTokens, 10);
        if (server !== "openai") assert.ok((err.promptTokens ?? 0) > 10);
        assert.match(err.message, /does not fit the model's context window/);
        assert.equal(s.requests.length, 1, "not retried");
      } finally {
        await s.close();
      }
    });
  }
});
