// A command line as the shell will run it, from a real parser (tree-sitter-bash): the simple
// commands it runs — also those inside pipelines, lists, subshells, functions, $(…), `…` and
// <(…) — each with its words unquoted and unescaped, its redirections, and where it sits
// (pipeline stage, background, function body). The policy matches on these, not on spelling.
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
  /** Set when the command is a stage of a pipeline: which pipeline, and which stage (0 = first). */
  pipeline?: { id: number; stage: number };
  background: boolean;
  /** Names of the functions whose bodies hold this command (innermost last). */
  inFunctions: string[];
  /** Commands run by $(…), `…` and <(…) inside this command's words. */
  substitutions: ShellCommand[];
}

export interface ParsedShell {
  /** Every simple command, in source order (substitutions also appear on their own). */
  commands: ShellCommand[];
  /** Names of the functions the line defines. */
  functions: string[];
  /** False when the parser found a syntax error: the line may not do what the commands say. */
  parsed: boolean;
}

interface Scope {
  pipeline?: { id: number; stage: number };
  background: boolean;
  inFunctions: string[];
  redirects: Redirect[];
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

/** $HOME and ${HOME} are the home folder, written `~` (the only variable we can decide). */
function expansionValue(node: Node): string {
  const inner = node.text.replace(/^\$\{?/, "").replace(/\}$/, "");
  return inner === "HOME" ? "~" : UNKNOWN;
}

class Walker {
  readonly commands: ShellCommand[] = [];
  readonly functions: string[] = [];
  private pipelines = 0;

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
      case "simple_expansion":
      case "expansion":
        return expansionValue(node);
      case "command_substitution":
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
    const inner: Scope = { background: false, inFunctions: scope.inFunctions, redirects: [] };
    for (const c of namedOf(node)) this.statement(c, inner);
    subs.push(...this.commands.slice(before));
  }

  private shellWord(node: Node, subs: ShellCommand[], scope: Scope): ShellWord {
    return { value: this.word(node, subs, scope), raw: node.text };
  }

  private redirect(node: Node, subs: ShellCommand[], scope: Scope): Redirect | undefined {
    const op = kidsOf(node).find((c) => !c.isNamed)?.text ?? "";
    const target = namedOf(node)
      .filter((c) => c.type !== "file_descriptor")
      .pop();
    if (node.type === "heredoc_redirect") {
      for (const c of namedOf(node))
        if (c.type !== "heredoc_start" && c.type !== "heredoc_end") this.statement(c, scope);
      return undefined;
    }
    return target ? { op, target: this.shellWord(target, subs, scope) } : undefined;
  }

  private command(node: Node, scope: Scope): void {
    const subs: ShellCommand[] = [];
    const words: ShellWord[] = [];
    const redirects: Redirect[] = [...scope.redirects];
    const index = this.commands.length;
    // Reserve the slot so the command comes before the substitutions it runs.
    this.commands.push(undefined as unknown as ShellCommand);
    for (const c of namedOf(node)) {
      if (c.type === "command_name") {
        const first = namedOf(c)[0];
        if (first) words.push(this.shellWord(first, subs, scope));
      } else if (c.type === "variable_assignment") {
        for (const v of namedOf(c).slice(1)) this.word(v, subs, scope);
      } else if (c.type.endsWith("_redirect")) {
        const r = this.redirect(c, subs, scope);
        if (r) redirects.push(r);
      } else {
        words.push(this.shellWord(c, subs, scope));
      }
    }
    this.commands[index] = {
      words,
      redirects,
      ...(scope.pipeline ? { pipeline: scope.pipeline } : {}),
      background: scope.background,
      inFunctions: scope.inFunctions,
      substitutions: subs,
    };
  }

  /** Walks any statement-like node. */
  statement(node: Node, scope: Scope): void {
    switch (node.type) {
      case "command":
        this.command(node, scope);
        return;
      case "pipeline": {
        const id = ++this.pipelines;
        let stage = 0;
        for (const c of kidsOf(node)) {
          if (!c.isNamed) continue;
          this.statement(c, { ...scope, pipeline: { id, stage: stage++ } });
        }
        return;
      }
      case "redirected_statement": {
        const subs: ShellCommand[] = [];
        const redirects = [...scope.redirects];
        const body = node.childForFieldName("body");
        for (const c of namedOf(node)) {
          if (c === body || c.id === body?.id) continue;
          if (c.type.endsWith("_redirect")) {
            const r = this.redirect(c, subs, scope);
            if (r) redirects.push(r);
          } else this.statement(c, scope);
        }
        if (body) this.statement(body, { ...scope, redirects });
        return;
      }
      case "function_definition": {
        const name = node.childForFieldName("name")?.text ?? "";
        this.functions.push(name);
        const body = node.childForFieldName("body");
        if (body) this.statement(body, { ...scope, inFunctions: [...scope.inFunctions, name] });
        return;
      }
      default:
        this.walkChildren(node, scope);
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
}

/** Parses a command line (bash syntax). Never throws once loadShellParser() has finished. */
export function parseShell(line: string): ParsedShell {
  if (!parser) throw new Error("the shell parser is not loaded yet: await loadShellParser() first");
  const tree = parser.parse(line);
  if (!tree) return { commands: [], functions: [], parsed: false };
  const w = new Walker();
  try {
    w.walkChildren(tree.rootNode, { background: false, inFunctions: [], redirects: [] });
    return { commands: w.commands, functions: w.functions, parsed: !tree.rootNode.hasError };
  } catch (err) {
    // Nesting deeper than the JS stack (thousands of subshells): judge what was walked, and
    // say the line could not be parsed, so the policy asks.
    if (!(err instanceof RangeError)) throw err;
    return { commands: w.commands.filter(Boolean), functions: w.functions, parsed: false };
  } finally {
    tree.delete();
  }
}
