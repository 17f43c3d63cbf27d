// Finds a model to talk to when none is configured: local OpenAI-compatible servers on their
// usual ports. Also lists a server's models, to pick one when --model is not given.
import { fetchModelList } from "@hands/llm";

export interface LocalServer {
  baseUrl: string;
  label: string;
  models: string[];
}

const USUAL_LOCAL_SERVERS = [
  { baseUrl: "http://127.0.0.1:11434/v1", label: "Ollama" },
  { baseUrl: "http://127.0.0.1:8080/v1", label: "llama.cpp / vLLM" },
  { baseUrl: "http://127.0.0.1:8000/v1", label: "vLLM / llama.cpp" },
];

/** The usual ports, or HANDS_LOCAL_SERVERS (comma-separated base URLs) for servers elsewhere. */
export function localServerCandidates(
  env: NodeJS.ProcessEnv = process.env,
): { baseUrl: string; label: string }[] {
  const custom = env.HANDS_LOCAL_SERVERS?.split(",")
    .map((u) => u.trim())
    .filter(Boolean);
  return custom?.length ? custom.map((baseUrl) => ({ baseUrl, label: "local" })) : USUAL_LOCAL_SERVERS;
}

/** GET {baseUrl}/models; undefined when the server does not answer like an OpenAI endpoint. */
export async function listModels(
  baseUrl: string,
  apiKey?: string,
  timeoutMs = 1500,
): Promise<string[] | undefined> {
  const list = await fetchModelList(baseUrl, { ...(apiKey ? { apiKey } : {}), timeoutMs });
  return list.ok ? list.models : undefined;
}

/** Probes the usual local ports at once; the first in candidate order that answers wins. */
export async function findLocalServer(
  candidates = localServerCandidates(),
  timeoutMs = 600,
): Promise<LocalServer | undefined> {
  const answers = await Promise.all(candidates.map((c) => listModels(c.baseUrl, undefined, timeoutMs)));
  for (let i = 0; i < candidates.length; i++) {
    const models = answers[i];
    if (models) return { ...candidates[i]!, models };
  }
  return undefined;
}

export function noModelHelp(): string {
  return [
    "hands: no model is configured, and no local model server answered",
    `(looked at ${localServerCandidates()
      .map((s) => s.baseUrl)
      .join(", ")}).`,
    "",
    "Configure one of:",
    "  an OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, vLLM, llama.cpp, Ollama…):",
    "    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=sk-...",
    '    hands --model qwen2.5-coder "your task"',
    "  OpenAI itself: export OPENAI_API_KEY=sk-... (and --model gpt-4.1-mini)",
    '  Anthropic:     export ANTHROPIC_API_KEY=... ; hands --provider anthropic --model claude-sonnet-4-5 "your task"',
    "  a local server: `ollama serve` (port 11434), llama.cpp `llama-server` (8080) or vLLM (8000)",
    "",
    'Or put {"baseUrl": "…", "model": "…"} in .hands/config.json or ~/.config/hands/config.json.',
  ].join("\n");
}
