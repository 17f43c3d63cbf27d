// The policy's corpora (corpus/hostile.json, corpus/everyday.json) judged by a policy: what
// the corpus test and bench/policy-corpus.mjs both measure. Not part of the package's API.
import { readFileSync } from "node:fs";
import { CommandPolicy, compileRule, type PolicyAction } from "./command-policy.js";
import { builtinRules } from "./load.js";

interface HostileFile {
  classes: Record<string, string[]>;
  notAllowedByAllowRules: { allow: string[]; commands: string[] };
}
interface EverydayFile {
  categories: Record<string, string[]>;
}

const corpusFile = (name: string) => new URL(`../../src/policy/corpus/${name}`, import.meta.url);

export function readCorpora(): {
  hostile: { group: string; command: string }[];
  everyday: { group: string; command: string }[];
  allowRules: string[];
  notAllowed: string[];
} {
  const h = JSON.parse(readFileSync(corpusFile("hostile.json"), "utf8")) as HostileFile;
  const e = JSON.parse(readFileSync(corpusFile("everyday.json"), "utf8")) as EverydayFile;
  const flat = (groups: Record<string, string[]>) =>
    Object.entries(groups).flatMap(([group, cmds]) => cmds.map((command) => ({ group, command })));
  return {
    hostile: flat(h.classes),
    everyday: flat(e.categories),
    allowRules: h.notAllowedByAllowRules.allow,
    notAllowed: h.notAllowedByAllowRules.commands,
  };
}

/** The built-in policy, with the scenario's allow rules (`prefix` each) when given. */
export function corpusPolicy(allow: string[] = []): CommandPolicy {
  const { deny, ask } = builtinRules();
  const rules = allow.map((prefix, i) => compileRule({ prefix, action: "allow" }, "corpus scenario", i));
  return new CommandPolicy(rules, deny, ask);
}

export interface Verdict {
  group: string;
  command: string;
  action: PolicyAction | "none";
  rule?: string;
  reason?: string;
}

/** Judges each command as the gate does (the workspace mounted at /workspace). */
export function judge(policy: CommandPolicy, items: { group: string; command: string }[]): Verdict[] {
  return items.map(({ group, command }) => {
    const d = policy.evaluate(command, { workspaces: ["/workspace"] });
    return {
      group,
      command,
      action: d?.action ?? "none",
      ...(d?.rule ? { rule: d.rule.name } : {}),
      ...(d?.reason ? { reason: d.reason } : {}),
    };
  });
}
