// Memory for an Agent wired by hand (with @hands/agent rather than a session): the defaults a
// session uses (extractive summaries, built-in embeddings, the default lifecycle), one call.
import type { Provider } from "@hands/llm";
import { AgentMemory } from "./agent-memory.js";
import { resolveMemorySettings } from "./memory-config.js";
import { dataDir as defaultDataDir } from "./paths.js";

export interface AgentMemoryOptions {
  /** The agent's model: it sets the default budget (half its window). */
  provider: Provider;
  workspace: string;
  /** Tokens per step's context (default: half the model's window). */
  contextBudget?: number;
  /** Where memory.db is kept (default: the Hands data folder). */
  dataDir?: string;
  /** Which conversation this is (default: a new one). */
  scope?: string;
  /** Problems that do not stop the run (default: none shown). */
  onWarning?: (text: string) => void;
}

/**
 * Opens memory for `new Agent({ ...memory.agentOptions(), tools: [...tools, memory.tool] })`;
 * after each task `memory.learn(task, result)`, at the end `memory.close()`.
 */
export function openAgentMemory(options: AgentMemoryOptions): Promise<AgentMemory> {
  const settings = resolveMemorySettings(
    options.contextBudget !== undefined ? { contextBudget: options.contextBudget } : {},
    {},
    {},
    {},
  );
  const warn = options.onWarning ?? (() => {});
  return AgentMemory.open(
    {
      settings,
      dataDir: options.dataDir ?? defaultDataDir(),
      provider: options.provider,
      namedProvider: async () => options.provider,
      warn,
    },
    options.workspace,
    options.scope ?? `agent-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
  );
}
