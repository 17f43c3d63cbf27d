// Resolves settings with the documented precedence:
// flags > environment > project .hands/config.json > user ~/.config/hands/config.json.
import { readFileSync } from "node:fs";
import { REASONING_LEVELS, type ReasoningLevel } from "@hands/llm";
import type { CliArgs } from "./args.js";
import { positiveIntSetting, UsageError } from "./args.js";
import { type MemorySettings, parseMemoryConfig, resolveMemorySettings } from "./memory-config.js";
import { projectConfigPath, userConfigPath } from "./paths.js";

export type ProviderName = "openai" | "anthropic" | "react";
const PROVIDERS: ProviderName[] = ["openai", "anthropic", "react"];
const SANDBOXES = ["auto", "bwrap", "docker", "local"];

export interface FileConfig {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  maxSteps?: number;
  maxTokens?: number;
  sandbox?: string;
  /** off | low | medium | high. */
  reasoning?: string;
  /** Interactive approval mode: auto | ask | read-only. */
  approval?: string;
  /** MCP servers whose tools the agent may use, by name. */
  mcpServers?: Record<string, unknown>;
  /** Memory (AdaMEM) settings: see memory-config.ts. */
  memory?: unknown;
}

export interface Settings {
  provider: ProviderName;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  maxSteps: number;
  maxTokens?: number;
  sandbox: string;
  reasoning?: ReasoningLevel;
  memory: MemorySettings;
  /** Where each setting that matters for troubleshooting came from. */
  sources: { baseUrl?: string; model?: string };
}

export function readConfigFile(path: string): FileConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  try {
    const value = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error("not a JSON object");
    return value as FileConfig;
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

export function resolveSettings(
  args: CliArgs,
  workspace: string,
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const userPath = userConfigPath(env);
  const projectPath = projectConfigPath(workspace);
  const user = readConfigFile(userPath);
  const project = readConfigFile(projectPath);
  const pick = <K extends keyof FileConfig>(key: K): FileConfig[K] => project[key] ?? user[key];

  const provider = (args.provider ?? env.HANDS_PROVIDER ?? pick("provider") ?? "openai") as ProviderName;
  if (!PROVIDERS.includes(provider)) {
    throw new UsageError(`unknown provider "${provider}"; use one of: ${PROVIDERS.join(", ")}`);
  }
  const sandbox = args.sandbox ?? env.HANDS_SANDBOX ?? pick("sandbox") ?? "auto";
  if (!SANDBOXES.includes(sandbox)) {
    throw new UsageError(`unknown sandbox "${sandbox}"; available here: ${SANDBOXES.join(", ")}`);
  }

  const reasoning = args.reasoning ?? env.HANDS_REASONING ?? pick("reasoning");
  if (reasoning !== undefined && !REASONING_LEVELS.includes(reasoning as ReasoningLevel)) {
    throw new UsageError(
      `unknown reasoning level "${reasoning}"; use one of: ${REASONING_LEVELS.join(", ")}`,
    );
  }

  const sources: Settings["sources"] = {};
  let baseUrl: string | undefined;
  if (args.baseUrl) [baseUrl, sources.baseUrl] = [args.baseUrl, "--base-url"];
  else if (provider === "anthropic" && env.ANTHROPIC_BASE_URL)
    [baseUrl, sources.baseUrl] = [env.ANTHROPIC_BASE_URL, "ANTHROPIC_BASE_URL"];
  else if (provider !== "anthropic" && env.OPENAI_BASE_URL)
    [baseUrl, sources.baseUrl] = [env.OPENAI_BASE_URL, "OPENAI_BASE_URL"];
  else if (pick("baseUrl")) [baseUrl, sources.baseUrl] = [pick("baseUrl"), "config"];

  let model: string | undefined;
  if (args.model) [model, sources.model] = [args.model, "--model"];
  else if (env.HANDS_MODEL) [model, sources.model] = [env.HANDS_MODEL, "HANDS_MODEL"];
  else if (pick("model")) [model, sources.model] = [pick("model"), "config"];

  const apiKey =
    args.apiKey ?? (provider === "anthropic" ? env.ANTHROPIC_API_KEY : env.OPENAI_API_KEY) ?? pick("apiKey");
  const maxSteps =
    args.maxSteps ?? positiveIntSetting("HANDS_MAX_STEPS", env.HANDS_MAX_STEPS) ?? pick("maxSteps") ?? 50;
  const maxTokens =
    args.maxTokens ?? positiveIntSetting("HANDS_MAX_TOKENS", env.HANDS_MAX_TOKENS) ?? pick("maxTokens");

  return {
    provider,
    ...(model ? { model } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    maxSteps,
    ...(maxTokens ? { maxTokens } : {}),
    sandbox,
    ...(reasoning ? { reasoning: reasoning as ReasoningLevel } : {}),
    memory: resolveMemorySettings(
      args,
      env,
      parseMemoryConfig(project.memory, projectPath),
      parseMemoryConfig(user.memory, userPath),
    ),
    sources,
  };
}
