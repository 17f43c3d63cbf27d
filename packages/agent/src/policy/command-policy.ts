// The command policy: rules that say allow / ask / deny for a shell command. Rules match the
// parsed command (shell-meaning.ts), not its spelling: a `prefix` or `glob` is matched against
// each program the line runs (with its folder, quoting and wrappers such as sudo, env or
// `bash -c` taken off, and the programs that `find -exec`, `xargs`, `git -c core.pager=…` and
// the like run), a `regex` against the whole line. Each rule carries examples that must (not)
// match; they are checked when the policy loads, so a rule that does not do what its author
// meant is caught at once.
//
// The model: a command is judged by everything it can run or write. The built-in rules see
// every program it runs and every file it deletes or writes (programs.ts, path-reach.ts) and
// always win: an allow rule never outranks a built-in deny or ask (the confirmations of a named
// command — a forced push, `git reset --hard`, sudo — only for a rule that names that command).
// An allow rule covers only
// the plain form of a program: a program run with an option that runs code or writes files
// (`find -exec/-delete`, `sed -i`, `git -c`, `make SHELL=`…, programs.ts's "risky") is never
// allowed by a rule, and neither is a line with a part the policy cannot read (that asks).
import { type CommandMeaning, type Context, type Invocation, understand } from "./shell-meaning.js";

export type PolicyAction = "allow" | "ask" | "deny";

export interface PolicyRuleSpec {
  /** Shown in the audit log and to the model; defaults to the pattern. */
  name?: string;
  /** A program the command runs starts with this, word by word (`npm test`, `/bin/rm`, `rm`). */
  prefix?: string;
  /** `*` = any characters, `?` = one character; must match one program's whole line. */
  glob?: string;
  /** A JavaScript regular expression searched in the whole command. */
  regex?: string;
  /** Built-in rules only (code, not JSON): true when this one invocation is what the rule means. */
  matches?: (invocation: Invocation, command: CommandMeaning) => boolean;
  /**
   * Built-in "ask" rules only: the commands an allow rule must name (its prefix or glob starts
   * with one) to lift this confirmation — `{"prefix": "git push", "action": "allow"}` lifts the
   * forced-push question, an `ls` allow never lifts `sudo ls`'s.
   */
  liftedBy?: string[];
  /** Built-in rules only: the reason for this invocation (names the path or option). */
  explain?: (invocation: Invocation, command: CommandMeaning) => string;
  action: PolicyAction;
  reason?: string;
  examples?: { match?: string[]; noMatch?: string[] };
}

export interface PolicyRule extends PolicyRuleSpec {
  name: string;
  /** Where the rule came from (file path or "built-in"). */
  origin: string;
  /** True when the rule matches the command (for a prefix or glob: one of the programs it runs). */
  test(command: string): boolean;
  /** True when the rule matches this invocation of the understood command. */
  matchesPart(invocation: Invocation, command: CommandMeaning): boolean;
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

/** The programs a command line runs, each as one line of words (see shell-meaning.ts). */
export function commandParts(command: string): string[] {
  return understand(command).invocations.map((i) => i.text);
}

/** The lines a prefix or glob rule is matched against: as written, by program name, with wrappers. */
function partLines(inv: Invocation): string[] {
  const byName = [inv.name, ...inv.args].join(" ");
  const wrappers = inv.via.filter((v) => !v.includes(" "));
  return [inv.text, byName, ...(wrappers.length ? [[...wrappers, inv.text].join(" ")] : [])];
}

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (const ch of normalizeCommand(glob)) {
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}

type PartMatcher = (invocation: Invocation, command: CommandMeaning) => boolean;

function matcherFor(
  spec: PolicyRuleSpec,
  kind: "prefix" | "glob" | "regex" | "matches",
  where: string,
): PartMatcher {
  if (kind === "matches") {
    if (typeof spec.matches !== "function") throw new PolicyError(`${where}: "matches" must be a function`);
    return spec.matches;
  }
  const pattern = spec[kind];
  if (typeof pattern !== "string" || !pattern.trim())
    throw new PolicyError(`${where}: "${kind}" must be a non-empty string`);
  if (kind === "regex") {
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (err) {
      throw new PolicyError(`${where}: bad regex: ${(err as Error).message}`);
    }
    return (_inv, command) => re.test(command.text);
  }
  const line =
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
  return (inv) => partLines(inv).some(line);
}

/**
 * Compiles a rule and checks its examples (pass `checkExamples: false` only for rules whose
 * examples a test checks instead: the built-ins, so start-up does not parse ~150 examples).
 */
export function compileRule(
  spec: PolicyRuleSpec,
  origin: string,
  index = 0,
  options: { checkExamples?: boolean } = {},
): PolicyRule {
  const where = `${origin}, rule ${index + 1}`;
  if (typeof spec !== "object" || spec === null) throw new PolicyError(`${where}: a rule must be an object`);
  if (!ACTIONS.includes(spec.action))
    throw new PolicyError(`${where}: "action" must be one of ${ACTIONS.join(", ")}`);
  const kinds = (["prefix", "glob", "regex", "matches"] as const).filter((k) => spec[k] !== undefined);
  if (kinds.length !== 1) throw new PolicyError(`${where}: give exactly one of "prefix", "glob" or "regex"`);
  const kind = kinds[0]!;
  const matchesPart = matcherFor(spec, kind, where);
  const test = (command: string) => {
    const meaning = understand(command);
    if (kind === "regex") return matchesPart(undefined as never, meaning);
    return meaning.invocations.some((inv) => matchesPart(inv, meaning));
  };
  const name = spec.name ?? `${kind} ${String(spec[kind])}`;
  const rule: PolicyRule = { ...spec, name, origin, test, matchesPart };
  if (options.checkExamples !== false) checkExamples(rule, where);
  return rule;
}

/** Throws PolicyError unless the rule matches each `match` example and no `noMatch` one. */
export function checkExamples(rule: PolicyRule, where = `${rule.origin} (${rule.name})`): void {
  for (const ex of rule.examples?.match ?? [])
    if (!rule.test(ex))
      throw new PolicyError(`${where} (${rule.name}): example "${ex}" should match but does not`);
  for (const ex of rule.examples?.noMatch ?? [])
    if (rule.test(ex))
      throw new PolicyError(`${where} (${rule.name}): example "${ex}" should not match but does`);
}

/**
 * What a line that does not parse gets: "ask". Its programs cannot be told apart reliably, so
 * neither an allow rule nor the absence of a denial can be trusted (denials still apply to
 * what could be parsed).
 */
export const UNPARSEABLE_RULE: PolicyRule = {
  name: "unparseable command",
  origin: "built-in",
  action: "ask",
  reason: "the command has a shell syntax error, so the policy cannot tell what it runs",
  test: (command) => !understand(command).parsed,
  matchesPart: () => false,
};

export class CommandPolicy {
  /**
   * `first` (built-in denials) and `last` (built-in "ask" rules) outrank `rules` (the files'):
   * for each program a command runs, the strictest built-in rule that matches decides unless
   * the first matching file rule is stricter.
   */
  constructor(
    readonly rules: PolicyRule[],
    private readonly first: PolicyRule[] = [],
    private readonly last: PolicyRule[] = [],
  ) {}

  /**
   * Any denial denies the command; then a line that does not parse, or any "ask", asks; the
   * command is allowed only when an allow rule covers every program it runs, each in its
   * plain form (no option that runs code or writes files). Undefined when no rule decides
   * (the approval mode does).
   */
  evaluate(command: string, context: Context = {}): PolicyDecision | undefined {
    const meaning = understand(command, context);
    let ask: PolicyDecision | undefined;
    let allow: PolicyRule | undefined;
    let everyPartAllowed = meaning.invocations.some((i) => !i.guessed);
    for (const inv of meaning.invocations) {
      const deny = this.first.find((r) => r.matchesPart(inv, meaning));
      if (deny) return decided(deny, inv, meaning);
      const own = this.rules.find(
        (r) =>
          (r.action !== "allow" || (inv.risky.length === 0 && !inv.guessed)) && r.matchesPart(inv, meaning),
      );
      if (own?.action === "deny") return decided(own, inv, meaning);
      const asks = this.last.filter((r) => r.matchesPart(inv, meaning));
      const builtinAsk = own?.action === "allow" ? asks.find((r) => !lifts(own, r)) : asks[0];
      if (builtinAsk) ask ??= decided(builtinAsk, inv, meaning);
      else if (own?.action === "ask") ask ??= decided(own, inv, meaning);
      if (inv.guessed) continue;
      if (own?.action === "allow" && !builtinAsk) allow ??= own;
      else everyPartAllowed = false;
    }
    if (!meaning.parsed) return decided(UNPARSEABLE_RULE);
    if (ask) return ask;
    if (everyPartAllowed && allow) return decided(allow);
    if (meaning.invocations.length === 0) {
      // Nothing runs (an assignment, a comment): only a regex on the whole line can say anything.
      const rule = this.all().find((r) => r.regex !== undefined && r.test(command));
      if (rule) return decided(rule);
    }
    return undefined;
  }

  /** Every rule, in the order they are checked. */
  all(): PolicyRule[] {
    return [...this.first, ...this.last, ...this.rules];
  }
}

/** True when an allow rule names a command a built-in confirmation may be lifted for. */
function lifts(allow: PolicyRule, ask: PolicyRule): boolean {
  const pattern = normalizeCommand(allow.prefix ?? allow.glob ?? "");
  return (ask.liftedBy ?? []).some((cmd) => pattern === cmd || pattern.startsWith(`${cmd} `));
}

function decided(rule: PolicyRule, inv?: Invocation, meaning?: CommandMeaning): PolicyDecision {
  const reason = inv && meaning && rule.explain ? rule.explain(inv, meaning) : rule.reason;
  return { action: rule.action, rule, ...(reason ? { reason } : {}) };
}

export function stricter(a: PolicyAction, b: PolicyAction): PolicyAction {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}
