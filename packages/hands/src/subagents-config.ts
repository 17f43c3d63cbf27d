// Sub-agent settings: the config's "subagents" ({ "enabled": true, "maxConcurrent": 4,
// "maxSteps": 30, "tools": "read-only" | "all", "maxTokens": N }), the --subagents flag or the
// SDK's `subagents`. "tools" is the widest set a child may get ("read-only": never writes, even
// when the model asks for "all"); "maxTokens" is each child's own budget, inside the parent's.
import type { ChildToolSet } from "@hands/agent";
import { SettingsError } from "./errors.js";
import { nearestName } from "./settings-schema.js";

export interface SubagentConfig {
  enabled?: boolean;
  maxConcurrent?: number;
  maxSteps?: number;
  tools?: ChildToolSet;
  maxTokens?: number;
}

/** What a session runs with: off, or the bounds its task tool and --plan's children keep. */
export interface SubagentSettings {
  enabled: boolean;
  maxConcurrent: number;
  maxSteps: number;
  tools: ChildToolSet;
  maxTokens?: number;
}

export const SUBAGENT_KEYS = ["enabled", "maxConcurrent", "maxSteps", "tools", "maxTokens"] as const;
const LIMITS: Record<string, number> = { maxConcurrent: 64, maxSteps: 1000, maxTokens: 100_000_000 };

/** `value` checked key by key; `where` names its source (a file, "subagents option"). */
export function parseSubagentsConfig(value: unknown, where: string): SubagentConfig {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new SettingsError(
      `${where}: "subagents" must be an object ({ enabled, maxConcurrent, maxSteps, tools, maxTokens })`,
    );
  const out: SubagentConfig = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (!(SUBAGENT_KEYS as readonly string[]).includes(key)) {
      const near = nearestName(key, SUBAGENT_KEYS);
      throw new SettingsError(
        `${where}: unknown key subagents.${key}${near ? ` (did you mean "${near}"?)` : ""} (known: ${SUBAGENT_KEYS.join(", ")})`,
      );
    }
    const bad = (what: string) =>
      new SettingsError(`${where}: subagents.${key} must be ${what}, got ${JSON.stringify(v)}`);
    if (key === "enabled") {
      if (typeof v !== "boolean") throw bad("true or false");
      out.enabled = v;
    } else if (key === "tools") {
      if (v !== "read-only" && v !== "all") throw bad('"read-only" or "all"');
      out.tools = v;
    } else {
      const max = LIMITS[key]!;
      if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > max)
        throw bad(`a whole number from 1 to ${max}`);
      out[key as "maxConcurrent" | "maxSteps" | "maxTokens"] = v as number;
    }
  }
  return out;
}

/** The layers, lowest first (user file, project file, flag/SDK), key by key; undefined: off. */
export function resolveSubagents(...layers: SubagentConfig[]): SubagentSettings | undefined {
  const s: SubagentConfig = Object.assign({}, ...layers.map(defined));
  if (!s.enabled) return undefined;
  return {
    enabled: true,
    maxConcurrent: s.maxConcurrent ?? 4,
    maxSteps: s.maxSteps ?? 30,
    tools: s.tools ?? "all",
    ...(s.maxTokens ? { maxTokens: s.maxTokens } : {}),
  };
}

function defined(c: SubagentConfig): SubagentConfig {
  return Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
}
