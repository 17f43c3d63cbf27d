// Resolves settings with the documented precedence:
// flags > environment > project .hands/config.json > user ~/.config/hands/config.json,
// where the project file counts only as far as the folder's trust allows (trust.ts).

import { type ApprovalMode, readSettingsFile, UnsafeFileError } from "@hands/agent";
import { REASONING_LEVELS, type ReasoningLevel } from "@hands/llm";
import { positiveIntSetting, SettingsError } from "./errors.js";
import { type MemorySettings, parseMemoryConfig, resolveMemorySettings } from "./memory-config.js";
import { projectConfigPath, userConfigPath } from "./paths.js";
import type { SettingFlags } from "./settings-flags.js";
import { projectView } from "./trust.js";
import type { TrustState } from "./trust-store.js";

export type ProviderName = "openai" | "anthropic" | "react";
const PROVIDERS: ProviderName[] = ["openai", "anthropic", "react"];
const SANDBOXES = ["auto", "bwrap", "docker", "local", "e2b"];

export interface FileConfig {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  maxSteps?: number;
  maxTokens?: number;
  /** Seconds without data from the model server before a call is retried. */
  idleTimeout?: number;
  sandbox?: string;
  /** sandbox "e2b": the template its sandboxes start from. */
  e2bTemplate?: string;
  /** off | low | medium | high. */
  reasoning?: string;
  /** Approval mode: auto | ask | read-only (one task and sessions alike). */
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
  /** Idle timeout of model calls (flag, HANDS_IDLE_TIMEOUT, config idleTimeout; seconds there). */
  idleTimeoutMs?: number;
  sandbox: string;
  /** sandbox "e2b": the template (--e2b-template, HANDS_E2B_TEMPLATE, config e2bTemplate). */
  e2bTemplate?: string;
  reasoning?: ReasoningLevel;
  memory: MemorySettings;
  /** The approval mode (flag, HANDS_APPROVAL, config, else the kind of run's default). */
  approval: ApprovalMode;
  /** MCP servers (project when trusted, else the user's). */
  mcpServers?: Record<string, unknown>;
  /** Whether the workspace is trusted, and the project settings ignored because it is not. */
  trust: TrustState;
  ignored: string[];
  /** Where each setting that matters for troubleshooting came from. */
  sources: { baseUrl?: string; model?: string; apiKey?: string };
}

export interface ResolveOptions {
  /** The approval mode of this kind of run without any setting (one task: auto; a session: ask). */
  approvalDefault?: ApprovalMode;
  /** false: no config file is read (only the flags and the environment count). */
  configFiles?: boolean;
}

const APPROVAL_MODES: ApprovalMode[] = ["auto", "ask", "read-only"];

/** An approval mode by name, or a SettingsError naming `where` it came from. */
export function approvalMode(value: string, where = "approval mode"): ApprovalMode {
  if ((APPROVAL_MODES as string[]).includes(value)) return value as ApprovalMode;
  throw new SettingsError(`unknown ${where} "${value}"; use auto, ask or read-only`);
}

export function readConfigFile(path: string): FileConfig {
  let text: string | undefined;
  try {
    text = readSettingsFile(path);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new SettingsError(`cannot read ${path}: ${err.message}`);
    throw err;
  }
  if (text === undefined) return {};
  try {
    const value = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error("not a JSON object");
    return value as FileConfig;
  } catch (err) {
    throw new SettingsError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

export function resolveSettings(
  args: SettingFlags,
  workspace: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: ResolveOptions = {},
): Settings {
  const userPath = userConfigPath(env);
  const projectPath = projectConfigPath(workspace);
  const files = opts.configFiles !== false;
  const user = files ? readConfigFile(userPath) : {};
  const view = projectView(
    workspace,
    files ? (readConfigFile(projectPath) as Record<string, unknown>) : {},
    {
      approval: user.approval ?? opts.approvalDefault ?? "auto",
      sandbox: args.sandbox ?? env.HANDS_SANDBOX ?? user.sandbox ?? "auto",
      provider: args.provider ?? env.HANDS_PROVIDER ?? user.provider ?? "openai",
    },
    env,
  );
  const project = view.config as FileConfig;
  const pick = <K extends keyof FileConfig>(key: K): FileConfig[K] => project[key] ?? user[key];

  const provider = (args.provider ?? env.HANDS_PROVIDER ?? pick("provider") ?? "openai") as ProviderName;
  if (!PROVIDERS.includes(provider)) {
    throw new SettingsError(`unknown provider "${provider}"; use one of: ${PROVIDERS.join(", ")}`);
  }
  const sandbox = args.sandbox ?? env.HANDS_SANDBOX ?? pick("sandbox") ?? "auto";
  if (!SANDBOXES.includes(sandbox)) {
    throw new SettingsError(`unknown sandbox "${sandbox}"; available here: ${SANDBOXES.join(", ")}`);
  }

  const e2bTemplate = args.e2bTemplate ?? env.HANDS_E2B_TEMPLATE ?? pick("e2bTemplate");
  if (e2bTemplate !== undefined && (typeof e2bTemplate !== "string" || e2bTemplate === ""))
    throw new SettingsError(`e2bTemplate must be a template name, got ${JSON.stringify(e2bTemplate)}`);

  const reasoning = args.reasoning ?? env.HANDS_REASONING ?? pick("reasoning");
  if (reasoning !== undefined && !REASONING_LEVELS.includes(reasoning as ReasoningLevel)) {
    throw new SettingsError(
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

  const keyVariable = provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  let apiKey: string | undefined;
  if (args.apiKey) [apiKey, sources.apiKey] = [args.apiKey, "--api-key"];
  else if (env[keyVariable]) [apiKey, sources.apiKey] = [env[keyVariable], keyVariable];
  else if (pick("apiKey")) [apiKey, sources.apiKey] = [pick("apiKey"), "config"];
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
    ...idleTimeoutSetting(args, env, pick("idleTimeout")),
    sandbox,
    ...(e2bTemplate ? { e2bTemplate } : {}),
    ...(reasoning ? { reasoning: reasoning as ReasoningLevel } : {}),
    memory: resolveMemorySettings(
      args,
      env,
      parseMemoryConfig(project.memory, projectPath),
      parseMemoryConfig(user.memory, userPath),
    ),
    approval: approvalSetting(args, env, pick("approval"), opts.approvalDefault ?? "auto"),
    ...((args.mcpServers ?? pick("mcpServers")) ? { mcpServers: args.mcpServers ?? pick("mcpServers") } : {}),
    trust: view.trust,
    ignored: view.ignored,
    sources,
  };
}

/** The model calls' idle timeout in ms, when one is set (else the provider's default). */
function idleTimeoutSetting(
  args: SettingFlags,
  env: NodeJS.ProcessEnv,
  fromFile: unknown,
): { idleTimeoutMs?: number } {
  const seconds =
    args.idleTimeout ??
    positiveIntSetting("HANDS_IDLE_TIMEOUT", env.HANDS_IDLE_TIMEOUT) ??
    (typeof fromFile === "number" && Number.isInteger(fromFile) && fromFile > 0 ? fromFile : undefined);
  if (fromFile !== undefined && seconds === undefined)
    throw new SettingsError(
      `idleTimeout in the config must be a whole number of seconds, got ${JSON.stringify(fromFile)}`,
    );
  return seconds ? { idleTimeoutMs: seconds * 1000 } : {};
}

/** flag > HANDS_APPROVAL > config > the run's default; a bad value is an error wherever it came from. */
function approvalSetting(
  args: SettingFlags,
  env: NodeJS.ProcessEnv,
  fromFile: unknown,
  fallback: ApprovalMode,
): ApprovalMode {
  if (args.approval !== undefined) return approvalMode(args.approval, "approval mode");
  if (env.HANDS_APPROVAL) return approvalMode(env.HANDS_APPROVAL, "approval mode in HANDS_APPROVAL");
  if (fromFile !== undefined) return approvalMode(String(fromFile), "approval mode in the config");
  return fallback;
}
