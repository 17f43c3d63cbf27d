// One entry point for the CLI: a provider from a plain config object.
import { AnthropicProvider, type AnthropicProviderOptions } from "./anthropic.js";
import { OpenAIProvider, type OpenAIProviderOptions } from "./openai.js";
import { ReactProvider } from "./react.js";
import type { Provider } from "./types.js";

export type ProviderKind = "openai" | "anthropic" | "react";

export interface ProviderConfig extends Omit<OpenAIProviderOptions, "textToolCalls"> {
  provider: ProviderKind;
  /** OpenAI only: recover tool calls printed as text (default true). */
  textToolCalls?: boolean;
}

/**
 * "openai": native tool calling over chat completions; "anthropic": the messages API;
 * "react": the text protocol over an OpenAI-compatible endpoint, for models without tool calling.
 */
export function createProvider(config: ProviderConfig): Provider {
  const { provider, ...options } = config;
  switch (provider) {
    case "openai":
      return new OpenAIProvider(options);
    case "anthropic": {
      const { textToolCalls: _unused, ...rest } = options;
      return new AnthropicProvider(rest as AnthropicProviderOptions);
    }
    case "react":
      return new ReactProvider(new OpenAIProvider({ ...options, textToolCalls: false }));
    default:
      throw new Error(`unknown provider "${String(provider)}" (expected openai, anthropic or react)`);
  }
}
