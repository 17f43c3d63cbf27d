// Resolves settings with the documented precedence:
// flags > environment > project .hands/config.json > user ~/.config/hands/config.json,
// where the project file counts only as far as the folder's trust allows (trust.ts).

import { type ApprovalMode, readSettingsFile, UnsafeFileError } from "@hands/agent";
import type { ReasoningLevel } from "@hands/llm";
import {
  type DiagnosticsSettings,
  parseDiagnosticsConfig,
  resolveDiagnosticsSettings,
} from "./diagnostics-config.js";
import { SettingsError } from "./errors.js";
import { type HookCommands, parseHookCommands } from "./hook-commands.js";
import { type MemorySettings, parseMemoryConfig, resolveMemorySettings } from "./memory-config.js";
import { type ModelRoles, parseModelRoles } from "./model-roles.js";
import { projectConfigPath, userConfigPath } from "./paths.js";
import type { SettingFlags } from "./settings-flags.js";
import {
  checkConfig,
  checkSetting,
  environmentWarnings,
  type PROVIDER_NAMES,
  SETTINGS,
  type SettingKey,
  type SettingSpec,
  settingFromText,
} from "./settings-schema.js";
import { parseSubagentsConfig, type SubagentConfig } from "./subagents-config.js";
import { projectView } from "./trust.js";
import type { TrustState } from "./trust-store.js";

/** The first request's repository map, in tokens, unless set: small, it rides along with every request. */
export const REPO_MAP_FIRST_REQUEST_TOKENS = 512;

export type ProviderName = (typeof PROVIDER_NAMES)[number];

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
  /** A local template (hands sandbox template build) for docker and bwrap sandboxes. */
  template?: string;
  /** off | low | medium | high. */
  reasoning?: string;
  /** Approval mode: auto | ask | read-only (one task and sessions alike). */
  approval?: string;
  /** MCP servers whose tools the agent may use, by name. */
  mcpServers?: Record<string, unknown>;
  /** Memory (AdaMEM) settings: see memory-config.ts. */
  memory?: unknown;
  repoMap?: string;
  repoMapTokens?: number;
  /** query_database's databases by name (checked by parseDatabases). */
  databases?: Record<string, unknown>;
  /** Hook commands by event (hook-commands.ts). */
  hooks?: unknown;
  /** Models by role (model-roles.ts). */
  models?: unknown;
  /** Sub-agents (subagents-config.ts). */
  subagents?: unknown;
  /** Language-server diagnostics after edits: see diagnostics-config.ts. */
  diagnostics?: unknown;
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
  /** sandbox docker/bwrap: the local template (--template, HANDS_TEMPLATE, config template). */
  template?: string;
  reasoning?: ReasoningLevel;
  memory: MemorySettings;
  /** Tokens of the repository map in a session's first request; 0: none (--no-repo-map, repoMap "off"). */
  repoMapTokens: number;
  /** Diagnostics after edits (diagnostics-config.ts). */
  diagnostics: DiagnosticsSettings;
  /** Sandboxed commands' network (--network) and allowed domains (--allow-domain). */
  network?: string;
  allowDomain?: string[];
  /** The approval mode (flag, HANDS_APPROVAL, config, else the kind of run's default). */
  approval: ApprovalMode;
  /** MCP servers (project when trusted, else the user's). */
  mcpServers?: Record<string, unknown>;
  /** Databases by name: the user's, the project's when trusted, then --database (later wins). */
  databases?: Record<string, unknown>;
  /** Hook commands: the user's, then the project's (only when its folder is trusted). */
  hooks: HookCommands;
  /** Models by role: the flag's, else the project's (trusted) over the user's, role by role. */
  models: ModelRoles;
  /** Sub-agents as the config files set them: the project's (trust-filtered) over the user's, key by key. */
  subagents: SubagentConfig;
  /** Whether the workspace is trusted, and the project settings ignored because it is not. */
  trust: TrustState;
  ignored: string[];
  /** Settings given that do not apply (a misspelt HANDS_* variable), one line each. */
  warnings: string[];
  /** Where each setting that matters for troubleshooting came from. */
  sources: { baseUrl?: string; model?: string; apiKey?: string };
}

export interface ResolveOptions {
  /** The approval mode of this kind of run without any setting (one task: auto; a session: ask). */
  approvalDefault?: ApprovalMode;
  /** false: no config file is read (only the flags and the environment count). */
  configFiles?: boolean;
}

/** An approval mode by name, or a SettingsError naming `where` it came from. */
export function approvalMode(value: string, where = "approval mode"): ApprovalMode {
  return checkSetting("approval", value, where) as ApprovalMode;
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
  // Each file is checked against the settings' table (settings-schema.ts): a wrong type is an
  // error naming the file and the key, an unknown key a warning. The project file as far as it applies.
  const userFile = checkConfig(files ? (readConfigFile(userPath) as Record<string, unknown>) : {}, userPath);
  const user = userFile.config as FileConfig;
  const fromEnv = (key: SettingKey, name: string) => settingFromText(key, env[name], name);
  const envProvider = fromEnv("provider", "HANDS_PROVIDER") as string | undefined;
  const envSandbox = fromEnv("sandbox", "HANDS_SANDBOX") as string | undefined;
  const view = projectView(
    workspace,
    files ? (readConfigFile(projectPath) as Record<string, unknown>) : {},
    {
      approval: user.approval ?? opts.approvalDefault ?? "auto",
      sandbox: args.sandbox ?? envSandbox ?? user.sandbox ?? "auto",
      provider: args.provider ?? envProvider ?? user.provider ?? "openai",
    },
    env,
  );
  const projectFile = checkConfig(view.config, projectPath);
  const project = projectFile.config as FileConfig;
  const pick = <K extends keyof FileConfig>(key: K): FileConfig[K] => project[key] ?? user[key];
  const flag = (key: SettingKey, value: unknown) =>
    value === undefined ? undefined : checkSetting(key, value, (SETTINGS[key] as SettingSpec).flag ?? key);

  const provider = (flag("provider", args.provider) ??
    envProvider ??
    pick("provider") ??
    "openai") as ProviderName;
  const sandbox = (flag("sandbox", args.sandbox) ?? envSandbox ?? pick("sandbox") ?? "auto") as string;
  const e2bTemplate = (flag("e2bTemplate", args.e2bTemplate) ??
    fromEnv("e2bTemplate", "HANDS_E2B_TEMPLATE") ??
    pick("e2bTemplate")) as string | undefined;
  const template = (flag("template", args.template) ??
    fromEnv("template", "HANDS_TEMPLATE") ??
    pick("template")) as string | undefined;
  const reasoning = (flag("reasoning", args.reasoning) ??
    fromEnv("reasoning", "HANDS_REASONING") ??
    pick("reasoning")) as string | undefined;

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
  const maxSteps = (flag("maxSteps", args.maxSteps) ??
    fromEnv("maxSteps", "HANDS_MAX_STEPS") ??
    pick("maxSteps") ??
    50) as number;
  const maxTokens = (flag("maxTokens", args.maxTokens) ??
    fromEnv("maxTokens", "HANDS_MAX_TOKENS") ??
    pick("maxTokens")) as number | undefined;
  const repoMapOff =
    (flag("repoMap", args.repoMap) ?? fromEnv("repoMap", "HANDS_REPO_MAP") ?? pick("repoMap")) === "off";
  const repoMapTokens = (flag("repoMapTokens", args.repoMapTokens) ??
    fromEnv("repoMapTokens", "HANDS_REPO_MAP_TOKENS") ??
    pick("repoMapTokens") ??
    REPO_MAP_FIRST_REQUEST_TOKENS) as number;
  const idleSeconds = (flag("idleTimeout", args.idleTimeout) ??
    fromEnv("idleTimeout", "HANDS_IDLE_TIMEOUT") ??
    pick("idleTimeout")) as number | undefined;

  return {
    provider,
    ...(model ? { model } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    maxSteps,
    ...(maxTokens ? { maxTokens } : {}),
    ...(idleSeconds ? { idleTimeoutMs: idleSeconds * 1000 } : {}),
    sandbox,
    ...(e2bTemplate ? { e2bTemplate } : {}),
    ...(template ? { template } : {}),
    ...(reasoning ? { reasoning: reasoning as ReasoningLevel } : {}),
    memory: resolveMemorySettings(
      args,
      env,
      parseMemoryConfig(project.memory, projectPath),
      parseMemoryConfig(user.memory, userPath),
    ),
    repoMapTokens: repoMapOff ? 0 : repoMapTokens,
    diagnostics: resolveDiagnosticsSettings(
      args.diagnostics,
      parseDiagnosticsConfig(project.diagnostics, projectPath),
      parseDiagnosticsConfig(user.diagnostics, userPath),
    ),
    approval: (flag("approval", args.approval) ??
      fromEnv("approval", "HANDS_APPROVAL") ??
      pick("approval") ??
      opts.approvalDefault ??
      "auto") as ApprovalMode,
    ...(args.network !== undefined ? { network: flag("network", args.network) as string } : {}),
    ...(args.allowDomain?.length ? { allowDomain: args.allowDomain } : {}),
    ...((args.mcpServers ?? pick("mcpServers")) ? { mcpServers: args.mcpServers ?? pick("mcpServers") } : {}),
    ...databasesOf(user.databases, project.databases, args.databases),
    models: {
      ...parseModelRoles(user.models, `${userPath}: "models"`),
      ...parseModelRoles(project.models, `${projectPath}: "models"`),
      ...parseModelRoles(args.models, "--models"),
    },
    subagents: {
      ...parseSubagentsConfig(user.subagents, userPath),
      ...parseSubagentsConfig(project.subagents, projectPath),
    },
    hooks: joinHookCommands(
      parseHookCommands(user.hooks, userPath),
      parseHookCommands(project.hooks, projectPath),
    ),
    trust: view.trust,
    ignored: view.ignored,
    warnings: [...userFile.warnings, ...projectFile.warnings, ...environmentWarnings(env)],
    sources,
  };
}

/** The databases of every source, by name; a later source's entry replaces an earlier one's. */
function databasesOf(...sources: (Record<string, unknown> | undefined)[]): {
  databases?: Record<string, unknown>;
} {
  const merged = Object.assign({}, ...sources.filter(Boolean)) as Record<string, unknown>;
  return Object.keys(merged).length ? { databases: merged } : {};
}

/** Both files' hook commands, the user's first (a project adds to them, never replaces them). */
function joinHookCommands(user: HookCommands, project: HookCommands): HookCommands {
  const out: HookCommands = {};
  for (const key of new Set([...Object.keys(user), ...Object.keys(project)]) as Set<keyof HookCommands>)
    out[key] = [...(user[key] ?? []), ...(project[key] ?? [])];
  return out;
}
