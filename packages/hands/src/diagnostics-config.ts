// The `diagnostics` setting: whether write_file/edit_file report the new errors a language
// server finds (default on), how long an edit waits for them, and how many are listed.
// Config: "diagnostics": { "enabled": false } or { "waitMs": 3000, "maxErrors": 5 };
// the command line: --no-diagnostics (wins over the files).
import { SettingsError } from "./errors.js";

export interface DiagnosticsSettings {
  enabled: boolean;
  waitMs?: number;
  /** How long the first edit waits for a server to start (default 10 s). */
  startWaitMs?: number;
  maxErrors?: number;
}

type Parsed = Partial<DiagnosticsSettings>;

const KEYS = ["enabled", "waitMs", "startWaitMs", "maxErrors"] as const;

/** A config file's `diagnostics` value, checked key by key. */
export function parseDiagnosticsConfig(value: unknown, where: string): Parsed {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SettingsError(`${where}: diagnostics must be an object such as { "enabled": false }`);
  const out: Parsed = {};
  for (const [k, v] of Object.entries(value)) {
    if (!(KEYS as readonly string[]).includes(k))
      throw new SettingsError(`${where}: diagnostics.${k} is not a setting (use ${KEYS.join(", ")})`);
    if (k === "enabled") {
      if (typeof v !== "boolean")
        throw new SettingsError(`${where}: diagnostics.enabled must be true or false`);
      out.enabled = v;
    } else {
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 600_000)
        throw new SettingsError(`${where}: diagnostics.${k} must be a whole number from 1 to 600000`);
      out[k as "waitMs" | "startWaitMs" | "maxErrors"] = v;
    }
  }
  return out;
}

/** The flag wins, then the project's file, then the user's; on by default. */
export function resolveDiagnosticsSettings(
  flag: boolean | undefined,
  project: Parsed,
  user: Parsed,
): DiagnosticsSettings {
  const waitMs = project.waitMs ?? user.waitMs;
  const maxErrors = project.maxErrors ?? user.maxErrors;
  const startWaitMs = project.startWaitMs ?? user.startWaitMs;
  return {
    enabled: flag ?? project.enabled ?? user.enabled ?? true,
    ...(waitMs !== undefined ? { waitMs } : {}),
    ...(startWaitMs !== undefined ? { startWaitMs } : {}),
    ...(maxErrors !== undefined ? { maxErrors } : {}),
  };
}
