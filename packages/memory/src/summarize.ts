// Compression of low-value chunks into shorter summaries. Extractive by default (no model,
// deterministic); an LLM summary when a Provider is configured.
import type { Provider } from "@hands/llm";
import { extractiveSummary } from "./text.js";

export interface Summarizer {
  readonly name: string;
  summarize(texts: string[], maxTokens: number, signal?: AbortSignal): Promise<string>;
}

export class ExtractiveSummarizer implements Summarizer {
  readonly name = "extractive";
  async summarize(texts: string[], maxTokens: number): Promise<string> {
    return summarizeSync(texts, maxTokens);
  }
}

export function summarizeSync(texts: string[], maxTokens: number): string {
  const each = Math.max(8, Math.floor(maxTokens / Math.max(1, texts.length)));
  return texts.map((t) => extractiveSummary(t, each)).join("\n");
}

export class LlmSummarizer implements Summarizer {
  readonly name: string;
  constructor(
    private readonly provider: Provider,
    /** Told when a summary falls back to the extractive one (the model failed or said nothing). */
    private readonly onFallback?: (error: Error) => void,
  ) {
    this.name = `llm:${provider.model}`;
  }

  async summarize(texts: string[], maxTokens: number, signal?: AbortSignal): Promise<string> {
    try {
      const res = await this.provider.complete({
        messages: [
          {
            role: "system",
            content:
              "Summarize the notes for an agent's memory. Keep every path, command, number, identifier, error and decision. Plain text, no preamble.",
          },
          { role: "user", content: `Within about ${maxTokens} tokens:\n\n${texts.join("\n---\n")}` },
        ],
        tools: [],
        maxTokens: maxTokens * 2,
        ...(signal ? { signal } : {}),
      });
      const text = res.message.content.trim();
      if (text) return text;
      this.onFallback?.(new Error("the model returned an empty summary"));
    } catch (err) {
      // A failed summary must not lose the chunk: fall back to the extractive one.
      this.onFallback?.(err instanceof Error ? err : new Error(String(err)));
    }
    return summarizeSync(texts, maxTokens);
  }
}
