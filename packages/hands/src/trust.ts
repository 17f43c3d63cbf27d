// Project settings (.hands/config.json, .hands/policy.json) come from the workspace, which a
// cloned repository or any sandboxed command can write: until the user trusts the folder, they
// may only make a run stricter or choose harmless things. Everything else is ignored, each
// with a line saying what and how to trust the folder (`hands trust`).
//
// Honoured from an untrusted folder: model, maxSteps, maxTokens, idleTimeout, reasoning; sandbox bwrap/docker (or the
// same as without the project); the same provider as without it; an approval mode at least as
// strict as without it; memory
// enabled/contextBudget/summaries; policy deny and ask rules. Anything else — and any key
// added later — is ignored until the folder is trusted: this is a list of what is allowed,
// not of what is forbidden.
import type { PolicyRule } from "@hands/agent";
import { type TrustState, trustState } from "./trust-store.js";

type Json = Record<string, unknown>;

/** What the run would use without the project file, for the "no weaker than" checks. */
export interface Baseline {
  approval: string;
  sandbox: string;
  provider: string;
}

export interface ProjectView {
  trust: TrustState;
  /** The project settings that apply. */
  config: Json;
  /** One description per ignored setting. */
  ignored: string[];
}

const APPROVAL_RANK: Record<string, number> = { auto: 0, ask: 1, "read-only": 2 };
const ISOLATING = ["bwrap", "docker"];
const SAFE_MEMORY_KEYS = ["enabled", "contextBudget", "summaries"];

/** Why each well-known setting is ignored from an untrusted folder. */
const WHY: Record<string, string> = {
  baseUrl: "your API key and requests would go to that server",
  apiKey: "your requests would go to the project's account",
  provider: "it chooses which of your API keys is sent, and where",
  mcpServers: "it would start commands or connect to servers on your machine",
  databases: "query_database would connect to the database servers it names, with their credentials",
  sandbox: "commands would run with less isolation",
  approval: "it asks less than without the project",
  hooks: "its commands would run on your machine, outside the sandbox, at every tool call",
  subagents: "it would let the model start agents of its own, several at once, that spend your tokens",
};

const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

/** Splits an untrusted project config into what may apply and what is ignored. */
export function untrustedConfig(project: Json, baseline: Baseline): { config: Json; ignored: string[] } {
  const config: Json = {};
  const ignored: string[] = [];
  const ignore = (key: string, why: string, value?: unknown) =>
    ignored.push(`${key}${value === undefined ? "" : ` ${show(value)}`} (${why})`);
  for (const [key, value] of Object.entries(project)) {
    if (value === undefined) continue;
    switch (key) {
      case "model":
      case "maxSteps":
      case "maxTokens":
      case "idleTimeout":
      case "reasoning":
        config[key] = value;
        break;
      case "diagnostics":
        config[key] = untrustedDiagnostics(value, ignore);
        break;
      case "provider":
        if (value === baseline.provider) config[key] = value;
        else ignore(key, WHY.provider!, value);
        break;
      case "sandbox":
        if (ISOLATING.includes(value as string) || value === baseline.sandbox) config[key] = value;
        else ignore(key, WHY.sandbox!, value);
        break;
      case "approval":
        if ((APPROVAL_RANK[value as string] ?? -1) >= (APPROVAL_RANK[baseline.approval] ?? 0))
          config[key] = value;
        else ignore(key, WHY.approval!, value);
        break;
      case "memory":
        config[key] = untrustedMemory(value, ignore);
        break;
      case "subagents":
        config[key] = untrustedSubagents(value, ignore);
        break;
      case "mcpServers":
        ignore(
          key,
          WHY.mcpServers!,
          typeof value === "object" && value ? Object.keys(value).join(", ") : value,
        );
        break;
      case "apiKey":
        ignore(key, WHY.apiKey!);
        break;
      case "databases":
        // By name only: the URLs carry passwords.
        ignore(
          key,
          WHY.databases!,
          typeof value === "object" && value ? Object.keys(value).join(", ") : undefined,
        );
        break;
      default:
        ignore(key, WHY[key] ?? "not a setting an untrusted folder may change", WHY[key] ? value : undefined);
    }
  }
  return { config, ignored };
}

type Ignore = (key: string, why: string, value?: unknown) => void;

/**
 * The keys of a nested setting an untrusted folder may keep: `refuse` names why a key (with
 * its value) is dropped, and whether the dropped value is shown. Not an object: passed on for
 * the setting's own parser to reject with its message.
 */
function keepNested(
  name: string,
  value: unknown,
  ignore: Ignore,
  refuse: (key: string, v: unknown) => { why: string; show?: boolean } | undefined,
): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const kept: Json = {};
  for (const [key, v] of Object.entries(value)) {
    const refused = refuse(key, v);
    if (!refused) kept[key] = v;
    else if (refused.show) ignore(`${name}.${key}`, refused.why, v);
    else ignore(`${name}.${key}`, refused.why);
  }
  return kept;
}

function untrustedMemory(value: unknown, ignore: Ignore): unknown {
  return keepNested("memory", value, ignore, (key) => {
    if (SAFE_MEMORY_KEYS.includes(key)) return undefined;
    if (key === "embeddings") return { why: "memory text and the key it names would go to that endpoint" };
    if (key === "lifecycle") return { why: "it could delete the memories of every project" };
    return { why: "not a setting an untrusted folder may change" };
  });
}

/**
 * An untrusted folder may turn sub-agents off, keep children read-only and bound them (as it
 * may set maxSteps and maxTokens), never turn them on or give children every tool.
 */
function untrustedSubagents(value: unknown, ignore: Ignore): unknown {
  return keepNested("subagents", value, ignore, (key, v) =>
    (key === "enabled" && v === true) || (key === "tools" && v === "all")
      ? { why: WHY.subagents!, show: true }
      : undefined,
  );
}

/** The longest wait an untrusted folder may set for language servers (the defaults: 1.5–10 s). */
const UNTRUSTED_DIAGNOSTICS_WAIT_MS = 30_000;

/**
 * An untrusted folder may turn diagnostics off or list fewer errors; its waits are capped, so a
 * cloned repository cannot make every edit wait minutes on a server that never answers.
 */
function untrustedDiagnostics(value: unknown, ignore: Ignore): unknown {
  return keepNested("diagnostics", value, ignore, (key, v) =>
    (key === "waitMs" || key === "startWaitMs") && typeof v === "number" && v > UNTRUSTED_DIAGNOSTICS_WAIT_MS
      ? { why: `more than ${UNTRUSTED_DIAGNOSTICS_WAIT_MS} ms: every edit could wait that long`, show: true }
      : undefined,
  );
}

/** The project's command policy rules that may apply untrusted: deny and ask, never allow. */
export function untrustedPolicy(rules: PolicyRule[]): { rules: PolicyRule[]; ignored: string[] } {
  return {
    rules: rules.filter((r) => r.action !== "allow"),
    ignored: rules
      .filter((r) => r.action === "allow")
      .map((r) => `policy rule ${show(r.name)} (allow: it would let commands run without asking)`),
  };
}

/** The project config as it applies to this run. */
export function projectView(
  workspace: string,
  project: Json,
  baseline: Baseline,
  env: NodeJS.ProcessEnv = process.env,
): ProjectView {
  const trust = trustState(workspace, env);
  if (trust.trusted) return { trust, config: project, ignored: [] };
  return { trust, ...untrustedConfig(project, baseline) };
}

/** The lines that say what was ignored and how to trust the folder (none when nothing was). */
export function untrustedNotice(workspace: string, trust: TrustState, ignored: string[]): string[] {
  if (ignored.length === 0 || trust.trusted) return [];
  const lines = ignored.map((i) => `hands: ignored from .hands/: ${i}`);
  if (trust.why === "store-unsafe") lines.push(`hands: trusted folders not read: ${trust.detail}`);
  else if (trust.why === "replaced") lines.push(`hands: ${trust.detail}`);
  lines.push(
    `hands: ${workspace} is not a trusted folder, so its settings may not weaken security or send secrets elsewhere; ` +
      "to apply them: hands trust (hands trust --list shows trusted folders, hands untrust forgets one)",
  );
  return lines;
}
