// A command line as the shell will run it, from a real parser (tree-sitter-bash): the simple
// commands it runs — also those inside pipelines, lists, subshells, functions, $(…), `…` and
// <(…) — each with its words unquoted and unescaped, its redirections, and where it sits
// (pipeline stage, background, function body). The policy matches on these, not on spelling.
// The walk follows the line as the shell runs it: variables the line sets are filled in
// (`x=/*; rm -rf $x` is `rm -rf /*`), `cd` moves the folder later commands run in, a called
// function's body is walked with its arguments (`f(){ rm -rf "$@"; }; f /*`), a `for` body
// once per value, and here-documents/here-strings are kept as the program's standard input.
// What only the running shell knows is UNKNOWN, never a guess.
//
// tree-sitter-bash is the grammar the tree-sitter project maintains; the agent already runs
// web-tree-sitter for code_outline, it never throws (a broken line gives a tree with ERROR
// nodes, which we report as `parsed: false`), and it covers here-docs, [[ ]], (( )), case,
// functions and process substitution. Its runtime loads asynchronously (about 15 ms and some
// megabytes, once), and a run that never runs a command should not pay for it: loadShellParser()
// loads it, and is awaited before the first command is judged and before a policy file's
// examples are checked; parsing itself stays synchronous.
import { createRequire } from "node:module";
import type { Node, Parser } from "web-tree-sitter";
import { parserForWasm } from "../outline/loader.js";
import { expandBraces } from "./braces.js";

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

/** Loads tree-sitter-bash (once; later calls return at once). parseShell needs it loaded. */
export function loadShellParser(): Promise<void> {
  if (parser) return Promise.resolve();
  loading ??= parserForWasm(
    createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm"),
  ).then(
    (p) => {
      parser = p;
    },
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}

/** Whether parseShell can run now (loadShellParser has finished). */
export function shellParserLoaded(): boolean {
  return parser !== undefined;
}

/** A node's children (the binding types them as nullable). */
function kidsOf(node: Node): Node[] {
  return node.children.filter((c): c is Node => c !== null);
}

function namedOf(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

/** Stands for a part of a word that is only known at run time. */
export const UNKNOWN = "\u0000";

export interface ShellWord {
  /** The word as the program receives it; UNKNOWN marks parts only known at run time. */
  value: string;
  /** The source text, for messages and for rules that match words as written. */
  raw: string;
}

export interface Redirect {
  op: string;
  target: ShellWord;
}

export interface ShellCommand {
  /** The command name and its arguments (variable assignments before it are left out). */
  words: ShellWord[];
  redirects: Redirect[];
  /** Variable assignments written before the command (`PAGER=less git log`): its environment. */
  assignments: Assignment[];
  /** What a here-document or here-string gives it on standard input (UNKNOWN marks run-time parts). */
  stdin?: string;
  /**
   * The folder it runs in, as the line's own `cd`s leave it: "." is where the line starts
   * (the session's folder); UNKNOWN marks a folder only known at run time (`cd "$X"`, `cd -`).
   */
  cwd: string;
  /** Set when the command is a stage of a pipeline: which pipeline, and which stage (0 = first). */
  pipeline?: { id: number; stage: number };
  background: boolean;
  /** Names of the functions whose bodies hold this command (innermost last). */
  inFunctions: string[];
  /** Commands run by $(…), `…` and <(…) inside this command's words. */
  substitutions: ShellCommand[];
  /** For eval and trap, whose code runs in this same shell: the variables the line set by then. */
  vars?: ReadonlyMap<string, string>;
}

export interface Assignment {
  name: string;
  value: string;
}

export interface ParsedShell {
  /** Every simple command, in source order (substitutions also appear on their own). */
  commands: ShellCommand[];
  /** Names of the functions the line defines. */
  functions: string[];
  /** Every variable the line sets (`X=…`, `export X=…`, `X=… cmd`), in source order. */
  assignments: Assignment[];
  /** The folder the line leaves the shell in (see ShellCommand.cwd). */
  cwd: string;
  /** False when the parser found a syntax error: the line may not do what the commands say. */
  parsed: boolean;
}

/**
 * What the shell knows while it runs the line: the variables the line set, the folder its
 * `cd`s moved to, and inside a called function its arguments. Subshells, pipeline stages and
 * substitutions get a copy (their changes do not reach the rest of the line).
 */
interface State {
  vars: Map<string, string>;
  cwd: string;
  /** The function's arguments ($1, "$@"); undefined outside a call (they are unknown). */
  positional?: string[];
}

interface Scope {
  pipeline?: { id: number; stage: number };
  background: boolean;
  inFunctions: string[];
  redirects: Redirect[];
  stdin?: string;
  state: State;
}

/** Backslash escapes outside quotes: `\/` is `/`, a backslash-newline joins lines. */
function unescapeBare(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
}

/** Inside double quotes only \" \\ \$ \` and backslash-newline are escapes. */
function unescapeDouble(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\(["\\$`])/g, "$1");
}

/** $'…' strings: the C escapes the shell decodes. */
function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    f: "\f",
    v: "\v",
  };
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{1,4}|.)/gs, (_, esc: string) => {
    if (esc[0] === "x" || esc[0] === "u") return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
    if (/^[0-7]+$/.test(esc)) return String.fromCodePoint(Number.parseInt(esc, 8));
    return simple[esc] ?? esc;
  });
}

/** The folder `to` names when the shell is in `from` (both as ShellCommand.cwd). */
export function joinPath(from: string, to: string): string {
  if (to.startsWith("/") || to.startsWith("~") || from === ".") return to;
  return `${from.replace(/\/+$/, "")}/${to}`;
}

/** A variable's value as the line knows it: $HOME is `~`, $PWD the folder; others UNKNOWN. */
function variableValue(name: string, state: State): string {
  if (name === "HOME") return "~";
  if (name === "PWD") return state.cwd;
  const pos = state.positional;
  if (name === "@" || name === "*") return pos ? pos.join(" ") : UNKNOWN;
  if (name === "#") return pos ? String(pos.length) : UNKNOWN;
  if (/^[1-9]$/.test(name)) return pos ? (pos[Number(name) - 1] ?? "") : UNKNOWN;
  return state.vars.get(name) ?? UNKNOWN;
}

/** `${X}`, `${X:-default}`, `${X=default}`: the value when it can be told; UNKNOWN otherwise. */
function expansionValue(node: Node, state: State): string {
  const inner = node.text.replace(/^\$\{?/, "").replace(/\}$/, "");
  const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#])(.*)$/s.exec(inner);
  if (!m) return UNKNOWN;
  const [, name, rest] = m as unknown as [string, string, string];
  const value = variableValue(name, state);
  if (rest === "") return value;
  const dflt = /^:?[-=](.*)$/s.exec(rest);
  // A default only counts when the variable is known to be set; otherwise either may apply.
  if (dflt && !value.includes(UNKNOWN)) return value === "" ? unescapeBare(dflt[1]!) : value;
  return UNKNOWN;
}

/** How many times function bodies are walked again for their calls, per line. */
const MAX_CALL_WALKS = 64;
/** How many values of a `for` loop its body is walked with. */
const MAX_LOOP_VALUES = 8;
/** How many simple commands one line may expand to (nested loops and calls multiply them). */
const MAX_COMMANDS = 2000;

class Walker {
  readonly commands: ShellCommand[] = [];
  readonly functions: string[] = [];
  readonly assignments: Assignment[] = [];
  private readonly bodies = new Map<string, Node>();
  private readonly called = new Set<string>();
  private readonly aliases = new Map<string, string>();
  private pipelines = 0;
  private callWalks = 0;
  /** Set when a limit stopped the walk: the line is then reported as not parsed. */
  truncated = false;

  /** The value of a word-like node; substitutions inside it are walked into `subs`. */
  word(node: Node, subs: ShellCommand[], scope: Scope): string {
    switch (node.type) {
      case "word":
      case "number":
        return unescapeBare(node.text); // a leading ~ stays: the policy reads it as the home folder
      case "raw_string":
        return node.text.slice(1, -1);
      case "ansi_c_string":
        return decodeAnsiC(node.text.slice(2, -1));
      case "string_content":
        return unescapeDouble(node.text);
      case "simple_expansion": {
        const name = namedOf(node)[0]?.text ?? "";
        return variableValue(name, scope.state);
      }
      case "expansion":
        return expansionValue(node, scope.state);
      case "command_substitution": {
        const before = subs.length;
        this.substitution(node, subs, scope);
        return subs.length === before + 1 ? knownOutputOf(subs[before]!, scope.state) : UNKNOWN;
      }
      case "process_substitution":
        this.substitution(node, subs, scope);
        return UNKNOWN;
      case "arithmetic_expansion":
        return UNKNOWN;
      case "string":
      case "translated_string":
      case "concatenation": {
        let out = "";
        for (const c of kidsOf(node)) if (c.isNamed) out += this.word(c, subs, scope);
        return out;
      }
      default:
        return node.text;
    }
  }

  private substitution(node: Node, subs: ShellCommand[], scope: Scope): void {
    const before = this.commands.length;
    const inner: Scope = {
      background: false,
      inFunctions: scope.inFunctions,
      redirects: [],
      state: copyState(scope.state),
    };
    for (const c of namedOf(node)) this.statement(c, inner);
    subs.push(...this.commands.slice(before).filter(Boolean));
  }

  private shellWord(node: Node, subs: ShellCommand[], scope: Scope): ShellWord {
    return { value: this.word(node, subs, scope), raw: node.text };
  }

  /**
   * The words an argument becomes: an unquoted expansion whose value is known is split at
   * blanks (`x="-rf /"; rm $x` is `rm -rf /`), and "$@" is one word per argument.
   */
  private argWords(node: Node, subs: ShellCommand[], scope: Scope): ShellWord[] {
    const pos = scope.state.positional;
    if (
      pos &&
      node.type === "string" &&
      node.namedChildren.length === 1 &&
      node.namedChildren[0]?.type === "simple_expansion" &&
      node.namedChildren[0].text === "$@"
    )
      return pos.map((value) => ({ value, raw: node.text }));
    const w = this.shellWord(node, subs, scope);
    // An unquoted brace list is several words: `{rm,-rf,/}` runs `rm -rf /`.
    if ((node.type === "word" || node.type === "concatenation") && /\{[^}]*(,|\.\.)[^}]*\}/.test(node.text)) {
      const words = expandBraces(w.value, 256);
      if (words.length > 1) return words.map((value) => ({ value, raw: node.text }));
    }
    const unquoted =
      node.type === "simple_expansion" ||
      node.type === "expansion" ||
      (node.type === "concatenation" &&
        namedOf(node).some((c) => c.type === "simple_expansion" || c.type === "expansion"));
    // With IFS changed the line splits words where the policy cannot follow.
    if (unquoted && scope.state.vars.has("IFS") && !w.value.includes(UNKNOWN))
      return [{ value: UNKNOWN, raw: node.text }];
    if (unquoted && /\s/.test(w.value)) {
      return w.value
        .split(/\s+/)
        .filter(Boolean)
        .map((value) => ({ value, raw: node.text }));
    }
    return [w];
  }

  /** Here-document text as the program reads it: expansions filled in unless the delimiter is quoted. */
  private heredocText(node: Node, scope: Scope, subs: ShellCommand[]): string {
    const body = namedOf(node).find((c) => c.type === "heredoc_body");
    const start = namedOf(node).find((c) => c.type === "heredoc_start")?.text ?? "";
    if (!body) return "";
    for (const c of namedOf(body)) if (c.type === "command_substitution") this.substitution(c, subs, scope);
    if (/['"\\]/.test(start)) return body.text;
    return body.text.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#])|\$\{[^}]*\}|\$\([^)]*\)|`[^`]*`|\$\(\([^)]*\)\)/g,
      (_all, a?: string, b?: string) => {
        const name = a ?? b;
        return name ? variableValue(name, scope.state) : UNKNOWN;
      },
    );
  }

  private redirect(node: Node, subs: ShellCommand[], scope: Scope): Redirect | undefined {
    const op = kidsOf(node).find((c) => !c.isNamed)?.text ?? "";
    if (node.type === "heredoc_redirect") return undefined; // handled by the statement
    if (node.type === "herestring_redirect") {
      const target = namedOf(node)[0];
      return target ? { op: "<<<", target: this.shellWord(target, subs, scope) } : undefined;
    }
    // `>&2 x`: the grammar gives the redirect every following word; the first is its target.
    const target = namedOf(node).filter((c) => c.type !== "file_descriptor" && c.type !== "ERROR")[0];
    return target ? { op, target: this.shellWord(target, subs, scope) } : undefined;
  }

  private assign(node: Node, subs: ShellCommand[], scope: Scope): Assignment {
    const name = node.childForFieldName("name")?.text ?? namedOf(node)[0]?.text ?? "";
    const valueNode = node.childForFieldName("value");
    let value = "";
    if (valueNode) value = valueNode.type === "array" ? UNKNOWN : this.word(valueNode, subs, scope);
    for (const v of namedOf(node).slice(1))
      if (v !== valueNode && v.id !== valueNode?.id) this.word(v, subs, scope);
    const a = { name, value };
    this.assignments.push(a);
    return a;
  }

  private command(node: Node, scope: Scope): void {
    if (this.commands.length >= MAX_COMMANDS) {
      this.truncated = true;
      return;
    }
    const subs: ShellCommand[] = [];
    let words: ShellWord[] = [];
    const redirects: Redirect[] = [...scope.redirects];
    const assignments: Assignment[] = [];
    let stdin = scope.stdin;
    const index = this.commands.length;
    // Reserve the slot so the command comes before the substitutions it runs.
    this.commands.push(undefined as unknown as ShellCommand);
    for (const c of namedOf(node)) {
      if (c.type === "command_name") {
        const first = namedOf(c)[0];
        if (first) words.push(...this.argWords(first, subs, scope));
      } else if (c.type === "variable_assignment") {
        assignments.push(this.assign(c, subs, scope));
      } else if (c.type.endsWith("_redirect")) {
        const r = this.redirect(c, subs, scope);
        if (r?.op === "<<<") stdin = `${r.target.value}\n`;
        else if (r) redirects.push(r);
      } else {
        words.push(...this.argWords(c, subs, scope));
      }
    }
    const alias = this.aliases.get(words[0]?.value ?? "");
    if (alias !== undefined) {
      const expanded = parseShell(alias).commands[0]?.words ?? [];
      words = [...expanded, ...words.slice(1)];
    }
    const state = scope.state;
    const sameShell = words[0]?.value === "eval" || words[0]?.value === "trap";
    this.commands[index] = {
      ...(sameShell ? { vars: new Map(state.vars) } : {}),
      words,
      redirects,
      assignments,
      ...(stdin !== undefined ? { stdin } : {}),
      cwd: state.cwd,
      ...(scope.pipeline ? { pipeline: scope.pipeline } : {}),
      background: scope.background,
      inFunctions: scope.inFunctions,
      substitutions: subs,
    };
    this.effectOnShell(words, scope);
  }

  /** What a builtin changes for the rest of the line: cd, read, unset, alias; and function calls. */
  private effectOnShell(words: ShellWord[], scope: Scope): void {
    const [first, ...rest] = words.map((w) => w.value);
    const state = scope.state;
    if (first !== undefined && this.bodies.has(first)) {
      this.call(first, rest, scope);
      return;
    }
    // Pipeline stages run in subshells: their cd and variables do not outlive them.
    if (scope.pipeline) return;
    const operandsOf = () => rest.filter((a) => !a.startsWith("-"));
    switch (first) {
      case "cd":
      case "pushd": {
        const to = operandsOf()[0];
        if (to === undefined) state.cwd = first === "cd" ? "~" : UNKNOWN;
        else if (rest.includes("-") || /^[+-][0-9]/.test(to)) state.cwd = UNKNOWN;
        else state.cwd = joinPath(state.cwd, to);
        return;
      }
      case "popd":
        state.cwd = UNKNOWN;
        return;
      case "read":
      case "mapfile":
      case "readarray":
      case "getopts":
        for (const v of operandsOf()) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) state.vars.set(v, UNKNOWN);
        if (first === "read") state.vars.set("REPLY", UNKNOWN);
        return;
      case "printf": {
        const k = rest.indexOf("-v");
        if (k !== -1 && rest[k + 1]) state.vars.set(rest[k + 1]!, UNKNOWN);
        return;
      }
      case "alias":
        for (const a of rest) {
          const eq = a.indexOf("=");
          if (eq > 0) this.aliases.set(a.slice(0, eq), a.slice(eq + 1));
        }
        return;
    }
  }

  /** Walks a function's body again for one call, with its arguments known. */
  private call(name: string, args: string[], scope: Scope): void {
    const body = this.bodies.get(name)!;
    this.called.add(name);
    if (scope.inFunctions.includes(name)) return; // recursion: the body is already being walked
    if (++this.callWalks > MAX_CALL_WALKS) {
      this.truncated = true;
      return;
    }
    this.statement(body, {
      ...scope,
      inFunctions: [...scope.inFunctions, name],
      state: { ...scope.state, positional: args },
    });
  }

  /** Walks any statement-like node. */
  statement(node: Node, scope: Scope): void {
    switch (node.type) {
      case "command":
        this.command(node, scope);
        return;
      case "variable_assignment": {
        const a = this.assign(node, [], scope);
        scope.state.vars.set(a.name, a.value);
        return;
      }
      case "declaration_command":
      case "unset_command": {
        const unset = node.type === "unset_command";
        for (const c of namedOf(node)) {
          if (c.type === "variable_assignment") {
            const a = this.assign(c, [], scope);
            scope.state.vars.set(a.name, a.value);
          } else if (c.type === "variable_name" || (unset && c.type === "word")) {
            // `local x` and `unset x` leave it empty; `export x` keeps what it had.
            if (unset || !/^(export|readonly)/.test(node.text)) scope.state.vars.set(c.text, "");
          } else this.word(c, [], scope);
        }
        return;
      }
      case "subshell": {
        this.walkChildren(node, { ...scope, state: copyState(scope.state) });
        return;
      }
      case "pipeline": {
        const id = ++this.pipelines;
        let stage = 0;
        for (const c of kidsOf(node)) {
          if (!c.isNamed) continue;
          this.statement(c, { ...scope, pipeline: { id, stage: stage++ }, state: copyState(scope.state) });
        }
        return;
      }
      case "redirected_statement": {
        this.redirected(node, scope);
        return;
      }
      case "for_statement": {
        this.forLoop(node, scope);
        return;
      }
      case "function_definition": {
        const name = node.childForFieldName("name")?.text ?? "";
        this.functions.push(name);
        const body = node.childForFieldName("body");
        if (body) this.bodies.set(name, body);
        return;
      }
      default:
        this.walkChildren(node, scope);
    }
  }

  private redirected(node: Node, scope: Scope): void {
    const subs: ShellCommand[] = [];
    const redirects = [...scope.redirects];
    let stdin = scope.stdin;
    const body = node.childForFieldName("body");
    // `cat <<EOF | sh`: the grammar puts what follows the here-document's start inside it.
    const after: Node[] = [];
    for (const c of namedOf(node)) {
      if (c === body || c.id === body?.id) continue;
      if (c.type === "heredoc_redirect") {
        stdin = this.heredocText(c, scope, subs);
        for (const k of namedOf(c))
          if (!/^heredoc_(start|body|end)$/.test(k.type) && k.type !== "file_descriptor") after.push(k);
      } else if (c.type.endsWith("_redirect")) {
        const r = this.redirect(c, subs, scope);
        if (r?.op === "<<<") stdin = `${r.target.value}\n`;
        else if (r) redirects.push(r);
      } else this.statement(c, scope);
    }
    const pipe = after.find((k) => k.type === "pipeline");
    if (body && pipe) {
      const id = ++this.pipelines;
      this.statement(body, {
        ...scope,
        redirects,
        ...(stdin !== undefined ? { stdin } : {}),
        pipeline: { id, stage: 0 },
        state: copyState(scope.state),
      });
      let stage = 1;
      for (const k of kidsOf(pipe))
        if (k.isNamed)
          this.statement(k, { ...scope, pipeline: { id, stage: stage++ }, state: copyState(scope.state) });
    } else if (body) this.statement(body, { ...scope, redirects, ...(stdin !== undefined ? { stdin } : {}) });
    else if (redirects.length > scope.redirects.length)
      // `> file` alone truncates the file: a command `:` with that redirection.
      this.commands.push({
        words: [{ value: ":", raw: "" }],
        redirects,
        assignments: [],
        cwd: scope.state.cwd,
        ...(scope.pipeline ? { pipeline: scope.pipeline } : {}),
        background: scope.background,
        inFunctions: scope.inFunctions,
        substitutions: subs,
      });
    for (const k of after) if (k !== pipe) this.statement(k, scope);
  }

  private forLoop(node: Node, scope: Scope): void {
    const variable = node.childForFieldName("variable")?.text ?? "";
    const body = node.childForFieldName("body");
    const values: string[] = [];
    let words = 0;
    for (const c of namedOf(node)) {
      if (c === body || c.id === body?.id || c.type === "variable_name") continue;
      words++;
      for (const w of this.argWords(c, [], scope)) values.push(w.value);
    }
    if (words === 0) values.push(...(scope.state.positional ?? [UNKNOWN]));
    if (!body) return;
    const walked = values.slice(0, MAX_LOOP_VALUES);
    if (values.length > MAX_LOOP_VALUES) walked.push(UNKNOWN);
    if (walked.length === 0) walked.push(UNKNOWN);
    for (const v of walked) {
      if (this.commands.length >= MAX_COMMANDS) {
        this.truncated = true;
        return;
      }
      scope.state.vars.set(variable, v);
      this.statement(body, scope);
    }
  }

  /** Walks a node's children, marking the statements followed by `&` as background. */
  walkChildren(node: Node, scope: Scope): void {
    const kids = kidsOf(node);
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i]!;
      if (!c.isNamed) continue;
      const background = scope.background || kids[i + 1]?.type === "&";
      if (c.type.endsWith("_redirect") || c.type === "word" || c.type === "string") {
        // words of for/case/test headers: only their substitutions run
        this.word(c, [], scope);
        continue;
      }
      this.statement(c, { ...scope, background });
    }
  }

  /** Functions the line defines but never calls are judged once with unknown arguments. */
  finish(scope: Scope): void {
    for (const [name, body] of this.bodies)
      if (!this.called.has(name))
        this.statement(body, { ...scope, inFunctions: [name], state: copyState(scope.state) });
  }
}

/**
 * The output of the few commands whose output the line tells: `mktemp` (a new temporary path),
 * `pwd` (the folder), `git rev-parse --show-toplevel` (the workspace). UNKNOWN for any other.
 */
function knownOutputOf(c: ShellCommand, state: State): string {
  const w = c.words.map((x) => x.value);
  if (c.substitutions.length || c.redirects.length) return UNKNOWN;
  if (w[0] === "mktemp" && w.slice(1).every((a) => !a.includes("/") && !/^(-p|--tmpdir|-t)/.test(a)))
    return "/tmp/tmp.XXXXXXXXXX";
  if (w[0] === "pwd" && w.length === 1) return state.cwd;
  if (
    w[0] === "git" &&
    w[1] === "rev-parse" &&
    w[2] === "--show-toplevel" &&
    w.length === 3 &&
    state.cwd === "."
  )
    return ".";
  return UNKNOWN;
}

function copyState(s: State): State {
  return { vars: new Map(s.vars), cwd: s.cwd, ...(s.positional ? { positional: s.positional } : {}) };
}

/**
 * Parses a command line (bash syntax); `vars` are variables already set (the code of an `eval`
 * runs with the line's). Never throws once loadShellParser() has finished.
 */
export function parseShell(line: string, vars?: ReadonlyMap<string, string>): ParsedShell {
  if (!parser) throw new Error("the shell parser is not loaded yet: await loadShellParser() first");
  const tree = parser.parse(line);
  if (!tree) return { commands: [], functions: [], assignments: [], cwd: ".", parsed: false };
  const w = new Walker();
  const state: State = { vars: new Map(vars), cwd: "." };
  const scope: Scope = { background: false, inFunctions: [], redirects: [], state };
  try {
    w.walkChildren(tree.rootNode, scope);
    w.finish(scope);
    return {
      commands: w.commands.filter(Boolean),
      functions: w.functions,
      assignments: w.assignments,
      cwd: state.cwd,
      parsed: !tree.rootNode.hasError && !w.truncated,
    };
  } catch (err) {
    // Nesting deeper than the JS stack (thousands of subshells): judge what was walked, and
    // say the line could not be parsed, so the policy asks.
    if (!(err instanceof RangeError)) throw err;
    return {
      commands: w.commands.filter(Boolean),
      functions: w.functions,
      assignments: w.assignments,
      cwd: UNKNOWN,
      parsed: false,
    };
  } finally {
    tree.delete();
  }
}
