// Loads the command policy: project rules (.hands/policy.json) first, then the user's
// (~/.config/hands/policy.json), between the built-in denials and the built-in "ask" rules.
import { readFileSync } from "node:fs";
import {
  CommandPolicy,
  compileRule,
  PolicyError,
  type PolicyRule,
  type PolicyRuleSpec,
} from "./command-policy.js";
import { DEFAULT_ASK, DEFAULT_DENY } from "./defaults.js";

/** Rules of one policy file; [] when the file does not exist. Throws PolicyError when invalid. */
export function readPolicyFile(path: string): PolicyRule[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new PolicyError(`cannot read ${path}: ${(err as Error).message}`);
  }
  return parsePolicyRules(text, path);
}

/** Rules of a policy file's text; `path` names it in errors. Throws PolicyError when invalid. */
export function parsePolicyRules(text: string, path: string): PolicyRule[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new PolicyError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  const rules = (value as { rules?: unknown })?.rules;
  if (!Array.isArray(rules)) throw new PolicyError(`${path}: expected {"rules": [...]}`);
  return rules.map((r, i) => compileRule(r as PolicyRuleSpec, path, i));
}

let builtins: { deny: PolicyRule[]; ask: PolicyRule[] } | undefined;

/**
 * The built-in rules, compiled once per process. Their ~150 examples are code, not settings:
 * command-policy.test.ts checks every one (checkExamples), so start-up does not parse them all
 * (about 60 ms on a cold parser). A policy file's examples are checked when it loads.
 */
export function builtinRules(): { deny: PolicyRule[]; ask: PolicyRule[] } {
  const compile = (r: PolicyRuleSpec, i: number) => compileRule(r, "built-in", i, { checkExamples: false });
  builtins ??= { deny: DEFAULT_DENY.map(compile), ask: DEFAULT_ASK.map(compile) };
  return builtins;
}

export function loadCommandPolicy(paths: { project?: string; user?: string }): CommandPolicy {
  const rules = [
    ...(paths.project ? readPolicyFile(paths.project) : []),
    ...(paths.user ? readPolicyFile(paths.user) : []),
  ];
  const { deny, ask } = builtinRules();
  return new CommandPolicy(rules, deny, ask);
}
