// Per-role models: the config's "models" ({ "planner": "…", "executor": "…", "summarizer": "…",
// "subagent": "…", "chat": "…", "strong": "…", "escalateAfter": 2 }), the --models flag
// (planner=NAME,strong=NAME) or the SDK's `models`. All are models of the same endpoint.
import { MODEL_ROLES, type ModelRole } from "@hands/agent";
import { SettingsError } from "./errors.js";
import { nearestName } from "./settings-schema.js";

export type ModelRoles = { [R in ModelRole]?: string } & { escalateAfter?: number };

const KEYS = [...MODEL_ROLES, "escalateAfter"];

/** `value` checked key by key; `where` names its source. */
export function parseModelRoles(value: unknown, where: string): ModelRoles {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new SettingsError(`${where} must be an object of models by role (${MODEL_ROLES.join(", ")})`);
  const out: ModelRoles = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (!KEYS.includes(key)) {
      const near = nearestName(key, KEYS);
      throw new SettingsError(
        `${where}: unknown role "${key}"${near ? ` (did you mean "${near}"?)` : ""}; use: ${KEYS.join(", ")}`,
      );
    }
    if (key === "escalateAfter") {
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
        throw new SettingsError(
          `${where}.escalateAfter must be a positive whole number, got ${JSON.stringify(v)}`,
        );
      out.escalateAfter = v;
    } else {
      if (typeof v !== "string" || !v.trim())
        throw new SettingsError(`${where}.${key} must be a model name, got ${JSON.stringify(v)}`);
      out[key as ModelRole] = v;
    }
  }
  return out;
}

/** The --models flag's text: role=NAME pairs separated by commas. */
export function modelRolesFromText(text: string): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const pair of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf("=");
    if (at <= 0)
      throw new SettingsError(
        `--models: "${pair}" is not role=MODEL (e.g. --models strong=gpt-4.1,chat=gpt-4.1-mini)`,
      );
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    out[key] = key === "escalateAfter" ? Number(value) : value;
  }
  return out;
}
