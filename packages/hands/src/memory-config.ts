// Memory settings, with the usual precedence: flags > environment > project config > user
// config. The `memory` key of a config file:
//   { "enabled": true, "contextBudget": 16000,
//     "summaries": "extractive" | "model" | "<model name>",
//     "embeddings": "hash" | { "baseUrl": URL, "model": NAME, "apiKeyEnv": VAR, "dimensions": N },
//     "lifecycle": { "idleAfterHours", "idleDecay", "archiveAfterDays", "archiveBelow",
//                    "deleteArchivedAfterDays", "maintainEveryHours" } }
// Pure parsing: nothing here loads the memory package.

import { positiveIntSetting, SettingsError } from "./errors.js";
import type { SettingFlags } from "./settings-flags.js";
import { nearestName } from "./settings-schema.js";

export interface EmbeddingsSettings {
  baseUrl: string;
  model: string;
  /** Environment variable holding the endpoint's API key (none: no key sent). */
  apiKeyEnv?: string;
  /** Known size of the vectors; asked of the endpoint once at start when not given. */
  dimensions?: number;
}

/** The memory's lifecycle policy, in the memory library's units (ms). */
export interface LifecycleSettings {
  idleAfterMs?: number;
  idleDecay?: number;
  archiveAfterMs?: number;
  archiveBelow?: number;
  deleteArchivedAfterMs?: number;
}

export interface MemorySettings {
  /** Memory assembles the context: on unless --no-memory or memory.enabled is false. */
  enabled: boolean;
  /** Tokens per step's context; undefined: a share of the model's window. */
  budget?: number;
  /** extractive (no model), the run's model, or a named model on the same endpoint. */
  summaries: { kind: "extractive" } | { kind: "model"; model?: string };
  /** An OpenAI-compatible /embeddings endpoint; undefined: built-in hashed embeddings. */
  embeddings?: EmbeddingsSettings;
  lifecycle: LifecycleSettings;
  /** Maintenance (decay, archive, delete) runs at most this often per memory file. */
  maintainEveryMs: number;
}

interface MemoryConfig {
  enabled?: boolean;
  contextBudget?: number;
  summaries?: string;
  embeddings?: "hash" | EmbeddingsSettings;
  lifecycle?: LifecycleSettings;
  maintainEveryMs?: number;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const LIFECYCLE: Record<
  string,
  { to: keyof LifecycleSettings | "maintainEveryMs"; unit: number; max?: number }
> = {
  idleAfterHours: { to: "idleAfterMs", unit: HOUR },
  idleDecay: { to: "idleDecay", unit: 1, max: 1 },
  archiveAfterDays: { to: "archiveAfterMs", unit: DAY },
  archiveBelow: { to: "archiveBelow", unit: 1, max: 1 },
  deleteArchivedAfterDays: { to: "deleteArchivedAfterMs", unit: DAY },
  maintainEveryHours: { to: "maintainEveryMs", unit: HOUR },
};

/** Checks one config file's `memory` value; `where` names the file in errors. */
export function parseMemoryConfig(value: unknown, where: string): MemoryConfig {
  if (value === undefined) return {};
  const bad = (key: string, what: string) => new SettingsError(`${where}: memory.${key} must be ${what}`);
  if (!isObject(value)) throw new SettingsError(`${where}: "memory" must be an object`);
  const out: MemoryConfig = {};
  const known = ["enabled", "contextBudget", "summaries", "embeddings", "lifecycle"];
  for (const key of Object.keys(value))
    if (!known.includes(key)) throw unknownKey(where, `memory.${key}`, key, known);
  if (value.enabled !== undefined) {
    if (typeof value.enabled !== "boolean") throw bad("enabled", "true or false");
    out.enabled = value.enabled;
  }
  if (value.contextBudget !== undefined) {
    if (!Number.isInteger(value.contextBudget) || (value.contextBudget as number) <= 0)
      throw bad("contextBudget", "a positive whole number of tokens");
    out.contextBudget = value.contextBudget as number;
  }
  if (value.summaries !== undefined) {
    if (typeof value.summaries !== "string" || !value.summaries.trim())
      throw bad("summaries", '"extractive", "model" or a model name');
    out.summaries = value.summaries.trim();
  }
  const e = value.embeddings;
  if (e === "hash") out.embeddings = "hash";
  else if (e !== undefined) {
    if (!isObject(e)) throw bad("embeddings", '"hash" or { "baseUrl": URL, "model": NAME }');
    if (typeof e.baseUrl !== "string" || !/^https?:\/\//.test(e.baseUrl))
      throw bad("embeddings.baseUrl", "an http(s) URL");
    if (typeof e.model !== "string" || !e.model) throw bad("embeddings.model", "a model name");
    if (e.apiKeyEnv !== undefined && (typeof e.apiKeyEnv !== "string" || !e.apiKeyEnv))
      throw bad("embeddings.apiKeyEnv", "the name of an environment variable");
    if (e.dimensions !== undefined && (!Number.isInteger(e.dimensions) || (e.dimensions as number) <= 0))
      throw bad("embeddings.dimensions", "a positive whole number");
    out.embeddings = {
      baseUrl: e.baseUrl,
      model: e.model,
      ...(e.apiKeyEnv ? { apiKeyEnv: e.apiKeyEnv as string } : {}),
      ...(e.dimensions ? { dimensions: e.dimensions as number } : {}),
    };
  }
  if (value.lifecycle !== undefined) {
    if (!isObject(value.lifecycle)) throw bad("lifecycle", "an object");
    out.lifecycle = {};
    for (const [key, v] of Object.entries(value.lifecycle)) {
      const spec = LIFECYCLE[key];
      if (!spec) throw unknownKey(where, `memory.lifecycle.${key}`, key, Object.keys(LIFECYCLE));
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (spec.max !== undefined && v > spec.max))
        throw bad(`lifecycle.${key}`, spec.max ? `a number from 0 to ${spec.max}` : "a number ≥ 0");
      if (spec.to === "maintainEveryMs") out.maintainEveryMs = v * spec.unit;
      else out.lifecycle[spec.to] = v * spec.unit;
    }
  }
  return out;
}

/** Combines flags, environment, project and user config (in that order of precedence). */
export function resolveMemorySettings(
  args: Pick<
    SettingFlags,
    "memory" | "contextBudget" | "memorySummaries" | "embeddingsUrl" | "embeddingsModel"
  >,
  env: NodeJS.ProcessEnv,
  project: MemoryConfig,
  user: MemoryConfig,
): MemorySettings {
  const budget =
    args.contextBudget ??
    positiveIntSetting("HANDS_CONTEXT_BUDGET", env.HANDS_CONTEXT_BUDGET) ??
    project.contextBudget ??
    user.contextBudget;
  if (args.memory === false && args.contextBudget !== undefined)
    throw new SettingsError("--no-memory and --context-budget contradict each other: choose one");
  // On by default; --no-memory, or memory.enabled: false in a config, turns it off.
  const enabled =
    args.memory !== false &&
    (args.memory === true || args.contextBudget !== undefined || (project.enabled ?? user.enabled ?? true));
  const summaries = args.memorySummaries ?? project.summaries ?? user.summaries ?? "extractive";
  let embeddings = project.embeddings ?? user.embeddings;
  if (args.embeddingsUrl || args.embeddingsModel) {
    const base = embeddings === "hash" ? undefined : embeddings;
    const baseUrl = args.embeddingsUrl ?? base?.baseUrl;
    const model = args.embeddingsModel ?? base?.model;
    if (!baseUrl || !model)
      throw new SettingsError(
        "--embeddings-url and --embeddings-model go together (or one of them with memory.embeddings in the config)",
      );
    if (!/^https?:\/\//.test(baseUrl))
      throw new SettingsError(`--embeddings-url must be an http(s) URL, got "${baseUrl}"`);
    embeddings = { ...base, baseUrl, model };
  }
  return {
    enabled,
    ...(budget !== undefined ? { budget } : {}),
    summaries:
      summaries === "extractive"
        ? { kind: "extractive" }
        : summaries === "model"
          ? { kind: "model" }
          : { kind: "model", model: summaries },
    ...(embeddings && embeddings !== "hash" ? { embeddings } : {}),
    lifecycle: { ...user.lifecycle, ...project.lifecycle },
    maintainEveryMs: project.maintainEveryMs ?? user.maintainEveryMs ?? DAY,
  };
}

/** The same words as for every other unknown key: the nearest known one, and all of them. */
function unknownKey(where: string, path: string, key: string, known: readonly string[]): SettingsError {
  const near = nearestName(key, known);
  return new SettingsError(
    `${where}: unknown key ${path}${near ? ` (did you mean "${near}"?)` : ""} (known: ${known.join(", ")})`,
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
