// Opens the memory a run or a session uses, as configured: the file (one per embedding model:
// vectors of different models do not mix), the embedder (built-in hashed vectors, or an
// OpenAI-compatible endpoint that falls back without losing chunks), the summarizer and the
// lifecycle policy; and runs maintenance at most once per configured interval per file.
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Provider } from "@hands/llm";
import type { Embedder, Memory, MemoryEvent } from "@hands/memory";
import { SettingsError } from "./errors.js";
import type { MemorySettings } from "./memory-config.js";
import { outlineForMemory } from "./memory-outline.js";

/** Context windows of common models, in tokens; others are assumed to have 128k. */
const WINDOWS: [RegExp, number][] = [
  [/claude/, 200_000],
  [/gpt-4\.1/, 1_000_000],
  [/gpt-4o|gpt-5|o[134]/, 128_000],
  [/llama|qwen|mistral|gemma/, 32_000],
];

/** The default budget: a share (half) of the model's context window. */
export function defaultContextBudget(model: string): number {
  const w = WINDOWS.find(([re]) => re.test(model))?.[1] ?? 128_000;
  return Math.floor(w / 2);
}

export interface MemoryHost {
  settings: MemorySettings;
  dataDir: string;
  /** The run's provider: its model is the default summarizer and sets the default budget. */
  provider: Provider;
  /** Another model on the same endpoint (memory.summaries: "<model name>"). */
  namedProvider: (model: string) => Promise<Provider>;
  /** Problems that do not stop the run (an endpoint down, a fallback). */
  warn: (text: string) => void;
  env?: NodeJS.ProcessEnv;
}

/** Tokens of context memory assembles for each request: the setting, else half the model's window. */
export function memoryBudget(host: Pick<MemoryHost, "settings" | "provider">): number {
  return host.settings.budget ?? defaultContextBudget(host.provider.model);
}

export interface OpenedMemory {
  memory: Memory;
  path: string;
  budget: number;
}

export async function openMemory(
  host: MemoryHost,
  scope: string,
  onEvent?: (e: MemoryEvent) => void,
): Promise<OpenedMemory> {
  const { LlmSummarizer, Memory } = await import("@hands/memory");
  const { settings, warn } = host;
  const budget = memoryBudget(host);
  const { embedder, path } = await openEmbedder(settings, host.dataDir, warn, host.env);
  const s = settings.summaries;
  const summarizer =
    s.kind === "model"
      ? new LlmSummarizer(s.model ? await host.namedProvider(s.model) : host.provider, (e) =>
          warn(`memory: the model's summary failed (${e.message}); an extractive summary was kept`),
        )
      : undefined;
  try {
    const memory = new Memory({
      path,
      scope,
      ...(embedder ? { embedder } : {}),
      ...(summarizer ? { summarizer } : {}),
      policy: { workingBudget: budget, ...settings.lifecycle },
      outline: outlineForMemory,
      ...(onEvent ? { onEvent } : {}),
    });
    return { memory, path, budget };
  } catch (err) {
    throw new SettingsError(`cannot open the memory file ${path}: ${(err as Error).message}`);
  }
}

/** The memory file of the built-in hashed embeddings (another embeddings model has its own). */
export const hashedMemoryFile = (dataDir: string): string => join(dataDir, "memory.db");

/** The memory file and embedder for the settings (undefined embedder: the built-in one). */
export async function openEmbedder(
  settings: Pick<MemorySettings, "embeddings">,
  dataDir: string,
  warn: (text: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ embedder?: Embedder; path: string }> {
  const e = settings.embeddings;
  const hashed = { path: hashedMemoryFile(dataDir) };
  if (!e) return hashed;
  const { OpenAIEmbedder, ResilientEmbedder } = await import("@hands/memory");
  const apiKey = e.apiKeyEnv ? env[e.apiKeyEnv] : undefined;
  if (e.apiKeyEnv && !apiKey)
    warn(`memory.embeddings.apiKeyEnv names ${e.apiKeyEnv}, which is not set: no API key is sent`);
  let primary: Embedder;
  try {
    primary = await OpenAIEmbedder.connect(
      {
        baseURL: e.baseUrl,
        model: e.model,
        ...(apiKey ? { apiKey } : {}),
        ...(e.dimensions ? { dimensions: e.dimensions } : {}),
      },
      AbortSignal.timeout(15_000),
    );
  } catch (err) {
    warn(
      `memory: the embeddings endpoint ${e.baseUrl} failed (${(err as Error).message}); using the built-in hashed embeddings (${hashed.path}) for this run`,
    );
    return hashed;
  }
  const embedder = new ResilientEmbedder(primary, {
    onError: (err) =>
      warn(
        `memory: the embeddings endpoint ${e.baseUrl} failed (${err.message}); chunks are stored without vectors (full-text search still finds them) until it answers again`,
      ),
  });
  return { embedder, path: join(dataDir, `memory.${e.model.replace(/[^\w.-]+/g, "_")}.db`) };
}

/**
 * Lifecycle maintenance (idle decay, archive, delete per policy), at most once per `everyMs`
 * per memory file: the time of the last pass is a stamp file next to it. Returns what it did,
 * or undefined when it was not due.
 */
export function maintainIfDue(
  memory: Memory,
  path: string,
  everyMs: number,
  now = Date.now(),
): ReturnType<Memory["maintain"]> | undefined {
  const stamp = `${path}.maintained`;
  let last = 0;
  try {
    last = statSync(stamp).mtimeMs;
  } catch {
    // Never maintained.
  }
  if (now - last < everyMs) return undefined;
  const done = memory.maintain();
  writeFileSync(stamp, `${JSON.stringify({ time: new Date(now).toISOString(), ...done })}\n`, {
    mode: 0o600,
  });
  return done;
}
