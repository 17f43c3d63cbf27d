// One table of the settings: each one's type, and its names in a config file, the environment,
// the command line and the SDK's options. Every way in checks values against it, so a wrong
// value reads the same wherever it came from ("<where> must be <type>, got <value>"), and a
// misspelled name gets the nearest real one ("did you mean maxSteps?"): a config file's unknown
// key is an error, as an unknown flag or SDK option is; an unknown HANDS_* variable close to a
// real one is a warning (the environment holds other programs' variables too).
import { editDistance } from "@hands/agent";
import { REASONING_LEVELS } from "@hands/llm";
import { positiveInt, SettingsError } from "./errors.js";

export type SettingType =
  | { kind: "string" }
  | { kind: "url" }
  | { kind: "positiveInt"; unit?: string }
  | { kind: "enum"; what: string; values: readonly string[] }
  | { kind: "stringList" }
  | { kind: "object" };

export interface SettingSpec {
  type: SettingType;
  /** Environment variables that set it, first wins (none: not settable there). */
  env?: readonly string[];
  flag?: string;
  /** Its name among the SDK's session options. */
  sdk?: string;
  /** false: not read from config files (a flag or SDK option only). */
  config?: false;
}

const oneOf = (what: string, values: readonly string[]): SettingType => ({ kind: "enum", what, values });

export const PROVIDER_NAMES = ["openai", "anthropic", "react"] as const;
export const SANDBOX_NAMES = ["auto", "bwrap", "docker", "local", "e2b"] as const;
export const APPROVAL_NAMES = ["auto", "ask", "read-only"] as const;

/** The settings of a config file (its top-level keys), with their other names. */
export const SETTINGS = {
  provider: {
    type: oneOf("provider", PROVIDER_NAMES),
    env: ["HANDS_PROVIDER"],
    flag: "--provider",
    sdk: "provider",
  },
  model: { type: { kind: "string" }, env: ["HANDS_MODEL"], flag: "--model", sdk: "model" },
  baseUrl: {
    type: { kind: "url" },
    env: ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"],
    flag: "--base-url",
    sdk: "baseURL",
  },
  apiKey: {
    type: { kind: "string" },
    env: ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    flag: "--api-key",
    sdk: "apiKey",
  },
  maxSteps: { type: { kind: "positiveInt" }, env: ["HANDS_MAX_STEPS"], flag: "--max-steps", sdk: "maxSteps" },
  maxTokens: {
    type: { kind: "positiveInt", unit: "tokens" },
    env: ["HANDS_MAX_TOKENS"],
    flag: "--max-tokens",
    sdk: "maxTokens",
  },
  idleTimeout: {
    type: { kind: "positiveInt", unit: "seconds" },
    env: ["HANDS_IDLE_TIMEOUT"],
    flag: "--idle-timeout",
    sdk: "idleTimeout",
  },
  sandbox: {
    type: oneOf("sandbox", SANDBOX_NAMES),
    env: ["HANDS_SANDBOX"],
    flag: "--sandbox",
    sdk: "sandbox",
  },
  e2bTemplate: { type: { kind: "string" }, env: ["HANDS_E2B_TEMPLATE"], flag: "--e2b-template" },
  /** Choosing one of the user's own built templates cannot weaken the sandbox: project config may. */
  template: { type: { kind: "string" }, env: ["HANDS_TEMPLATE"], flag: "--template" },
  reasoning: {
    type: oneOf("reasoning level", REASONING_LEVELS),
    env: ["HANDS_REASONING"],
    flag: "--reasoning",
    sdk: "reasoning",
  },
  approval: {
    type: oneOf("approval mode", APPROVAL_NAMES),
    env: ["HANDS_APPROVAL"],
    flag: "--approval",
    sdk: "approval",
  },
  network: { type: oneOf("network", ["none", "host"]), flag: "--network", sdk: "network", config: false },
  allowDomain: { type: { kind: "stringList" }, flag: "--allow-domain", sdk: "allowDomains", config: false },
  mcpServers: { type: { kind: "object" }, sdk: "mcpServers" },
  /** query_database's databases: name → postgres:// URL, SQLite path, or { url | path, writes }. */
  databases: { type: { kind: "object" }, flag: "--database", sdk: "databases" },
  /** Models by role (model-roles.ts): planner, executor, summarizer, subagent, chat, strong. */
  models: { type: { kind: "object" }, flag: "--models", sdk: "models" },
  /** Hook commands by event (hook-commands.ts); the SDK takes functions in its own `hooks` option. */
  hooks: { type: { kind: "object" } },
  /** Sub-agents (subagents-config.ts): enabled, maxConcurrent, maxSteps, tools, maxTokens. */
  subagents: { type: { kind: "object" }, flag: "--subagents", sdk: "subagents" },
  /** Checked key by key in memory-config.ts. */
  memory: { type: { kind: "object" }, sdk: "memory" },
  /** The repository map in a session's first request: on (default) or off, and its size. */
  repoMap: {
    type: oneOf("repo map", ["on", "off"]),
    env: ["HANDS_REPO_MAP"],
    flag: "--no-repo-map",
    sdk: "repoMap",
  },
  repoMapTokens: {
    type: { kind: "positiveInt", unit: "tokens" },
    env: ["HANDS_REPO_MAP_TOKENS"],
    flag: "--repo-map-tokens",
    sdk: "repoMapTokens",
  },
  /** Checked key by key in diagnostics-config.ts. */
  diagnostics: { type: { kind: "object" } },
} as const satisfies Record<string, SettingSpec>;

export type SettingKey = keyof typeof SETTINGS;
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

/** Other HANDS_* variables Hands reads: not settings, but no typo either. */
const OTHER_VARIABLES = [
  "HANDS_DATA_DIR",
  "HANDS_CONTEXT_BUDGET",
  "HANDS_LOCAL_SERVERS",
  "HANDS_NO_CODE_CACHE",
  "HANDS_SERVE_DATA",
  "HANDS_SERVE_DATABASE",
  "HANDS_DEBIAN_MIRROR",
  "HANDS_DEBIAN_SUITE",
  "HANDS_SANDBOX_UID",
];

function show(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** The known name that differs only in case, else one a typo or two away. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const folded = known.find((k) => k.toLowerCase() === name.toLowerCase());
  if (folded) return folded;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** What a type is, in the words of an error. */
export function describeType(type: SettingType): string {
  switch (type.kind) {
    case "string":
      return "a non-empty string";
    case "url":
      return "an http:// or https:// URL";
    case "positiveInt":
      return `a positive whole number${type.unit ? ` of ${type.unit}` : ""}`;
    case "enum":
      return `one of ${type.values.join(", ")}`;
    case "stringList":
      return "a list of non-empty strings";
    case "object":
      return "a JSON object";
  }
}

/**
 * `value` (from a config file or the SDK: JSON types) checked against `key`'s type; a
 * SettingsError naming `where` (`~/.config/hands/config.json: "maxSteps"`, `maxSteps`) otherwise.
 */
export function checkSetting(key: SettingKey, value: unknown, where: string): unknown {
  const type: SettingType = SETTINGS[key].type;
  const fail = (): never => {
    throw new SettingsError(`${where} must be ${describeType(type)}, got ${show(value)}`);
  };
  switch (type.kind) {
    case "string":
      if (typeof value !== "string" || !value.trim()) fail();
      return value;
    case "url":
      if (typeof value !== "string" || !/^https?:\/\/[^\s/]+/i.test(value)) fail();
      return value;
    case "positiveInt":
      if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) fail();
      return value;
    case "enum":
      if (typeof value !== "string") fail();
      return checkChoice(type, value as string, where);
    case "stringList":
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || !v.trim())) fail();
      return value;
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) fail();
      return value;
  }
}

function checkChoice(
  type: { what: string; values: readonly string[] },
  value: string,
  where: string,
): string {
  if (type.values.includes(value)) return value;
  const near = nearestName(value, type.values);
  throw new SettingsError(
    `${where}: unknown ${type.what} "${value}"; use one of: ${type.values.join(", ")}${near ? ` (did you mean "${near}"?)` : ""}`,
  );
}

/**
 * A setting's text (from the environment or a flag: always a string) as its type; `where`
 * names the variable or flag. Unset or empty means not given.
 */
export function settingFromText(key: SettingKey, text: string | undefined, where: string): unknown {
  if (text === undefined || text === "") return undefined;
  const type: SettingType = SETTINGS[key].type;
  switch (type.kind) {
    case "positiveInt":
      return positiveInt(where, text);
    case "enum":
      return checkChoice(type, text, where);
    case "stringList":
      return text
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean);
    case "object":
      throw new SettingsError(`${where}: ${key} cannot be set here`);
    default:
      return checkSetting(key, text, where);
  }
}

/**
 * A config file's settings checked against the table: a wrong type is a SettingsError naming
 * the file and the key; an unknown key (or one that only a flag sets) is left out, with a
 * warning that gives the nearest real one. A warning, not an error: one config file serves
 * every version of Hands a user has, and a key a newer one knows must not stop an older one.
 */
export function checkConfig(
  config: Record<string, unknown>,
  file: string,
): { config: Record<string, unknown>; warnings: string[] } {
  const checked: Record<string, unknown> = {};
  const warnings: string[] = [];
  const inFiles = SETTING_KEYS.filter((k) => (SETTINGS[k] as SettingSpec).config !== false);
  for (const [key, value] of Object.entries(config)) {
    const spec = Object.hasOwn(SETTINGS, key) ? (SETTINGS[key as SettingKey] as SettingSpec) : undefined;
    if (!spec || spec.config === false) {
      const near = spec ? undefined : nearestName(key, inFiles);
      warnings.push(
        spec
          ? `${file}: "${key}" is not read from a config file (only ${spec.flag ?? "the SDK"} sets it); it is ignored`
          : `${file}: unknown setting "${key}"${near ? ` (did you mean "${near}"?)` : ""}; it is ignored (the settings: ${inFiles.join(", ")})`,
      );
      continue;
    }
    // null: not set here (as if the key were absent).
    if (value === undefined || value === null) continue;
    checked[key] = checkSetting(key as SettingKey, value, `${file}: "${key}"`);
  }
  return { config: checked, warnings };
}

/** HANDS_* variables that are no setting but one typo from one: a warning each (they are ignored). */
export function environmentWarnings(env: NodeJS.ProcessEnv): string[] {
  const settingVariables = SETTING_KEYS.flatMap((k) => [...((SETTINGS[k] as SettingSpec).env ?? [])]).filter(
    (v) => v.startsWith("HANDS_"),
  );
  const known = new Set([...settingVariables, ...OTHER_VARIABLES]);
  const warnings: string[] = [];
  for (const name of Object.keys(env)) {
    if (!name.startsWith("HANDS_") || known.has(name)) continue;
    const near = nearestName(name, settingVariables);
    if (near && editDistance(name, near) <= 2)
      warnings.push(`${name} is not a Hands setting (did you mean ${near}?); it is ignored`);
  }
  return warnings;
}
