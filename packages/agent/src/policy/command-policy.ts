// The command policy: ordered rules that match a shell command by prefix, glob or regex and
// say allow / ask / deny. Each rule carries examples that must (not) match; they are checked
// when the policy loads, so a rule that does not do what its author meant is caught at once.

export type PolicyAction = "allow" | "ask" | "deny";

export interface PolicyRuleSpec {
  /** Shown in the audit log and to the model; defaults to the pattern. */
  name?: string;
  /** The command (or one of its `&&` / `;` / `|` parts) starts with this, word by word. */
  prefix?: string;
  /** `*` = any characters, `?` = one character; must match the whole command or part. */
  glob?: string;
  /** A JavaScript regular expression searched in the whole command. */
  regex?: string;
  action: PolicyAction;
  reason?: string;
  examples?: { match?: string[]; noMatch?: string[] };
}

export interface PolicyRule extends PolicyRuleSpec {
  name: string;
  /** Where the rule came from (file path or "built-in"). */
  origin: string;
  test(command: string): boolean;
}

export interface PolicyDecision {
  action: PolicyAction;
  rule?: PolicyRule;
  reason?: string;
}

export class PolicyError extends Error {}

const ACTIONS: PolicyAction[] = ["allow", "ask", "deny"];
const SEVERITY: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 };

/** Collapses whitespace so `rm  -rf   /` and `rm -rf /` are the same command. */
export function normalizeCommand(command: string): string {
  return command.replace(/\s+/g, " ").trim();
}

/** The simple commands of a command line, split at `&&`, `||`, `;`, `|`, newlines and `$(`/backticks. */
export function commandParts(command: string): string[] {
  return command
    .split(/&&|\|\||[;|\n`]|\$\(/)
    .map((p) => normalizeCommand(p.replace(/[()]/g, " ")))
    .filter(Boolean)
    .map(stripWrappers);
}

/** `sudo rm …`, `env X=1 rm …`, `nohup rm …` are judged as `rm …`. */
function stripWrappers(part: string): string {
  let p = part;
  for (;;) {
    const next = p
      .replace(/^(sudo(\s+-\S+)*|env|nohup|time|command|exec|nice)\s+/, "")
      .replace(/^\w+=\S*\s+/, "");
    if (next === p) return p;
    p = next;
  }
}

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (const ch of normalizeCommand(glob)) {
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

export function compileRule(spec: PolicyRuleSpec, origin: string, index = 0): PolicyRule {
  const where = `${origin}, rule ${index + 1}`;
  if (typeof spec !== "object" || spec === null) throw new PolicyError(`${where}: a rule must be an object`);
  if (!ACTIONS.includes(spec.action))
    throw new PolicyError(`${where}: "action" must be one of ${ACTIONS.join(", ")}`);
  const kinds = (["prefix", "glob", "regex"] as const).filter((k) => spec[k] !== undefined);
  if (kinds.length !== 1) throw new PolicyError(`${where}: give exactly one of "prefix", "glob" or "regex"`);
  const kind = kinds[0]!;
  const pattern = spec[kind];
  if (typeof pattern !== "string" || !pattern.trim())
    throw new PolicyError(`${where}: "${kind}" must be a non-empty string`);
  let test: (command: string) => boolean;
  if (kind === "regex") {
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (err) {
      throw new PolicyError(`${where}: bad regex: ${(err as Error).message}`);
    }
    test = (c) => re.test(normalizeCommand(c));
  } else {
    const matchPart =
      kind === "prefix"
        ? (() => {
            const pre = normalizeCommand(pattern);
            return (p: string) =>
              p === pre || p.startsWith(`${pre} `) || (pre.endsWith(" ") && p.startsWith(pre));
          })()
        : (() => {
            const re = globToRegExp(pattern);
            return (p: string) => re.test(p);
          })();
    test = (c) => matchPart(normalizeCommand(c)) || commandParts(c).some(matchPart);
  }
  const rule: PolicyRule = { ...spec, name: spec.name ?? `${kind} ${pattern}`, origin, test };
  for (const ex of spec.examples?.match ?? [])
    if (!test(ex))
      throw new PolicyError(`${where} (${rule.name}): example "${ex}" should match but does not`);
  for (const ex of spec.examples?.noMatch ?? [])
    if (test(ex)) throw new PolicyError(`${where} (${rule.name}): example "${ex}" should not match but does`);
  return rule;
}

export class CommandPolicy {
  /**
   * `first` rules are checked before `rules` (built-in denials no file can lift);
   * `last` rules after them (built-in "ask" defaults a project may relax).
   */
  constructor(
    readonly rules: PolicyRule[],
    private readonly first: PolicyRule[] = [],
    private readonly last: PolicyRule[] = [],
  ) {}

  /** The first matching rule decides; undefined when none matches. */
  evaluate(command: string): PolicyDecision | undefined {
    for (const list of [this.first, this.rules, this.last]) {
      for (const rule of list) {
        if (rule.test(command))
          return { action: rule.action, rule, ...(rule.reason ? { reason: rule.reason } : {}) };
      }
    }
    return undefined;
  }

  /** Every rule, in the order they are checked. */
  all(): PolicyRule[] {
    return [...this.first, ...this.rules, ...this.last];
  }
}

export function stricter(a: PolicyAction, b: PolicyAction): PolicyAction {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}
