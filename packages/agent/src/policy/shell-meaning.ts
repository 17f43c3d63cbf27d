// What a command line runs, by meaning: each simple command (shell-parse.ts) with its wrappers
// taken off (sudo, env, nice, timeout, xargs, command, exec, … and `bash -c "…"`, `sh -c`,
// `eval`, `su -c`, whose strings are parsed in turn), its program named without its folder
// (/bin/rm is rm), and helpers that normalise paths (//, /./, .., trailing slashes, ~, $HOME).
import { parseShell, type Redirect, type ShellCommand, type ShellWord, UNKNOWN } from "./shell-parse.js";

export interface Invocation {
  /** The program without its folder (/bin/rm → rm); "" when it is only known at run time. */
  name: string;
  /** The program as written (./gradlew, /bin/rm), for rules that name a path. */
  written: string;
  /** The arguments as the program receives them (UNKNOWN marks run-time parts). */
  args: string[];
  /** Wrappers it runs under, outermost first: "sudo", "env", "xargs", "bash -c"… */
  via: string[];
  redirects: Redirect[];
  pipeline?: { id: number; stage: number };
  background: boolean;
  /** Functions whose bodies hold it. */
  inFunctions: string[];
  /** What runs to produce parts of its words ($(…), `…`, <(…)), understood the same way. */
  feeds: Invocation[];
  /** `written` and the arguments as one line, for prefix and glob rules. */
  text: string;
}

export interface CommandMeaning {
  /** The command line, whitespace collapsed (for regex rules). */
  text: string;
  invocations: Invocation[];
  functions: string[];
  /** False when the line (or a `bash -c` string in it) has a syntax error. */
  parsed: boolean;
}

/** How deep `bash -c "bash -c '…'"` strings are followed. */
const MAX_DEPTH = 4;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox-sh"]);

interface Wrapper {
  /** Short options that take a value (-u root, -uroot). */
  short?: string;
  /** Long options that take a value when written without "=" (--user root). */
  long?: string[];
  /** Leading operands before the command (timeout's DURATION, chroot's DIR). */
  operands?: number;
}

/** Programs that run the rest of their arguments as a command. */
const WRAPPERS: Record<string, Wrapper> = {
  sudo: {
    short: "ughprtCDUTR",
    long: [
      "user",
      "group",
      "host",
      "prompt",
      "role",
      "type",
      "close-from",
      "chdir",
      "other-user",
      "command-timeout",
      "chroot",
    ],
  },
  doas: { short: "uC" },
  env: { short: "uCS", long: ["unset", "chdir", "split-string"] },
  nice: { short: "n", long: ["adjustment"] },
  nohup: {},
  setsid: {},
  time: { short: "fo", long: ["format", "output"] },
  timeout: { short: "sk", long: ["signal", "kill-after"], operands: 1 },
  stdbuf: { short: "ioe", long: ["input", "output", "error"] },
  ionice: { short: "cnp", long: ["class", "classdata", "pid"] },
  exec: { short: "a" },
  command: {},
  builtin: {},
  xargs: {
    short: "adEIiLlnPs",
    long: [
      "arg-file",
      "delimiter",
      "eof",
      "replace",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "process-slot-var",
    ],
  },
  busybox: {},
  chroot: { long: ["userspec", "groups"], operands: 1 },
  unbuffer: {},
};

/** The program name of a command word: its last path component; "" when not known. */
export function programName(word: string): string {
  if (word.includes(UNKNOWN)) return "";
  const trimmed = word.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/**
 * A path with `//`, `/./`, `..` and trailing slashes resolved lexically; `~`, `$HOME` (already
 * `~` here) stay `~`. Relative paths come back as they are (they are inside the workspace).
 * Going above the home folder (`~/..`) is reported as `/`.
 */
export function normalizePath(p: string): string {
  let home = false;
  let s = p;
  if (s === "~" || s.startsWith("~/")) {
    home = true;
    s = s.slice(1) || "/";
  }
  if (!s.startsWith("/")) return p;
  const parts: string[] = [];
  for (const seg of s.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0 && home) return "/";
      parts.pop();
      continue;
    }
    parts.push(seg);
  }
  const out = `/${parts.join("/")}`;
  return home ? (out === "/" ? "~" : `~${out}`) : out;
}

/**
 * Index of the first operand after the options that start at `start` (`--` ends them).
 * Options taking a value consume it (attached or next).
 */
export function skipOptions(args: string[], start: number, w: Wrapper = {}): number {
  let i = start;
  while (i < args.length) {
    const a = args[i]!;
    if (a === "--") return i + 1;
    if (!a.startsWith("-") || a === "-") return i;
    if (a.startsWith("--")) {
      const long = a.slice(2);
      i += !long.includes("=") && w.long?.includes(long) ? 2 : 1;
      continue;
    }
    let step = 1;
    for (let j = 1; j < a.length; j++) {
      if (w.short?.includes(a[j]!)) {
        if (j === a.length - 1) step = 2; // the value is the next argument
        break;
      }
    }
    i += step;
  }
  return i;
}

/** The short option letters in args before the first operand (`-xc` → x, c). */
function shortFlags(args: string[], end: number): string {
  let out = "";
  for (const a of args.slice(0, end)) if (/^-[a-zA-Z]+$/.test(a)) out += a.slice(1);
  return out;
}

class Understanding {
  parsed = true;
  readonly functions: string[] = [];

  /** The invocations of a command line, at `depth` levels of `bash -c` strings. */
  line(text: string, depth: number, outer?: Partial<Invocation>): Invocation[] {
    const parsed = parseShell(text);
    if (!parsed.parsed) this.parsed = false;
    this.functions.push(...parsed.functions);
    return parsed.commands.flatMap((c) => this.command(c, depth, outer));
  }

  private command(c: ShellCommand, depth: number, outer?: Partial<Invocation>): Invocation[] {
    const feeds = c.substitutions.flatMap((s) => this.command(s, depth));
    const base = {
      via: [...(outer?.via ?? [])],
      redirects: [...(outer?.redirects ?? []), ...c.redirects],
      ...(c.pipeline ? { pipeline: c.pipeline } : outer?.pipeline ? { pipeline: outer.pipeline } : {}),
      background: c.background || (outer?.background ?? false),
      inFunctions: [...(outer?.inFunctions ?? []), ...c.inFunctions],
      feeds,
    };
    return this.unwrap(c.words, base, depth);
  }

  private unwrap(
    words: ShellWord[],
    base: Omit<Invocation, "name" | "written" | "args" | "text">,
    depth: number,
  ): Invocation[] {
    let rest = words;
    const via = base.via;
    for (;;) {
      const first = rest[0]?.value;
      if (first === undefined) return [];
      const name = programName(first);
      const args = rest.slice(1).map((w) => w.value);
      const wrapper = WRAPPERS[name];
      if (wrapper && args.length > 0) {
        if (name === "command" && /^-[pvV]*[vV]/.test(args[0] ?? "")) return []; // command -v: a lookup
        let at = skipOptions(args, 0, wrapper);
        if (name === "env") {
          const split = args.findIndex((a, k) => k < at && /^(-S|--split-string)/.test(a));
          if (split !== -1) {
            const str =
              args[split]!.length > 2 && args[split]!.startsWith("-S")
                ? args[split]!.slice(2)
                : args[split + 1];
            const inner = parseShell(str ?? "").commands[0]?.words ?? [];
            rest = [...inner, ...rest.slice(1 + at)];
            via.push(name);
            continue;
          }
          while (at < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[at]!)) at++;
        }
        at += wrapper.operands ?? 0;
        if (at < args.length) {
          via.push(name);
          rest = rest.slice(1 + at);
          continue;
        }
      }
      const code = this.codeString(name, args);
      if (code !== undefined && !code.includes(UNKNOWN) && depth < MAX_DEPTH) {
        const label = name === "eval" ? "eval" : `${name} -c`;
        return this.line(code, depth + 1, { ...base, via: [...via, label] });
      }
      const written = first.includes(UNKNOWN) ? rest[0]!.raw : normalizePath(first);
      // Words only known at run time are shown as written ($(…), "$X").
      const shown = rest.slice(1).map((w) => (w.value.includes(UNKNOWN) ? w.raw : w.value));
      return [{ ...base, via, name, written, args, text: [written, ...shown].join(" ") }];
    }
  }

  /** The code a shell runs from its arguments: `bash -c CODE`, `eval A B`, `su -c CODE`. */
  private codeString(name: string, args: string[]): string | undefined {
    if (name === "eval") return args.length > 0 ? args.join(" ") : undefined;
    if (SHELLS.has(name)) {
      const end = skipOptions(args, 0, { short: "oO" });
      return shortFlags(args, end).includes("c") ? args[end] : undefined;
    }
    if (name === "su") {
      const k = args.findIndex((a) => a === "-c" || a === "--command");
      if (k !== -1) return args[k + 1];
      const eq = args.find((a) => a.startsWith("--command="));
      return eq?.slice("--command=".length);
    }
    return undefined;
  }
}

/** Parses a command line and says what it runs. */
export function understand(command: string): CommandMeaning {
  const u = new Understanding();
  const invocations = u.line(command, 0);
  return {
    text: command.replace(/\s+/g, " ").trim(),
    invocations,
    functions: u.functions,
    parsed: u.parsed,
  };
}
