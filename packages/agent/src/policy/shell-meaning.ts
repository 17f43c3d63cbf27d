// What a command line runs, by meaning: each simple command (shell-parse.ts) with its wrappers
// taken off (sudo, env, nice, timeout, taskset, flock, script -c, watch, xargs, busybox, …),
// the code strings shells run parsed in turn (`bash -c`, `fish -c`, `eval`, `su -c`, `trap`,
// here-documents and here-strings fed to a shell), the commands known programs' options run
// (programs.ts: `find -exec`, `git -c core.pager=…`, `awk system()`, …) as invocations of their
// own, its program named without its folder (/bin/rm is rm), and the files it deletes or
// writes. What cannot be read from the line is recorded as "opaque" (the policy asks).
import { inlineCodeKnowledge, runsScriptOperand } from "./inline-code.js";
import { normalizeAny } from "./path-reach.js";
import { DANGEROUS_HEADS, type Effect, type Knowledge, knowledgeOf, type Run } from "./programs.js";
import {
  type Assignment,
  joinPath,
  parseShell,
  type Redirect,
  type ShellCommand,
  type ShellWord,
  UNKNOWN,
} from "./shell-parse.js";

export type { Effect } from "./programs.js";

export interface Invocation {
  /** The program without its folder (/bin/rm → rm); "" when it is only known at run time. */
  name: string;
  /** The program as written (./gradlew, /bin/rm), for rules that name a path. */
  written: string;
  /** The arguments as the program receives them (UNKNOWN marks run-time parts). */
  args: string[];
  /** Wrappers it runs under, outermost first: "sudo", "env", "xargs", "bash -c", "find -exec"… */
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
  /** The folder it runs in ("." = the session's folder; see ShellCommand.cwd). */
  cwd: string;
  /** Variables set for it alone (`PAGER=… git log`). */
  assignments: Assignment[];
  /** What a here-document or here-string feeds it. */
  stdin?: string;
  /** Files it deletes, writes or changes the mode of (its options and its redirections). */
  effects: Effect[];
  /** Why it runs code the policy cannot read from the line (the policy asks). */
  opaque: string[];
  /** Options that make it more than the plain form an allow rule names (no allow covers it). */
  risky: string[];
  /** Found among an unknown program's arguments (it may run them): judged, never needed for an allow. */
  guessed: boolean;
}

export interface CommandMeaning {
  /** The command line, whitespace collapsed (for regex rules). */
  text: string;
  invocations: Invocation[];
  functions: string[];
  /** False when the line (or a code string in it) has a syntax error. */
  parsed: boolean;
  /** The folder the line leaves the session in. */
  cwd: string;
  /** The workspace's absolute paths as commands see it. */
  workspaces: readonly string[];
}

export interface Context {
  /** The session's folder before the line runs (as a previous line left it); default ".". */
  cwd?: string;
  /** Absolute paths of the workspace (default: /workspace, where the sandboxes mount it). */
  workspaces?: readonly string[];
}

/** How deep code strings in code strings (`bash -c "find -exec sh -c '…'"`) are followed. */
const MAX_DEPTH = 6;

const SHELLS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "ash",
  "mksh",
  "yash",
  "busybox-sh",
  "fish",
  "tcsh",
  "csh",
  "rbash",
  "elvish",
  "xonsh",
  "nu",
]);

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
  pkexec: { long: ["user"] },
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
  busybox: {},
  toybox: {},
  chroot: { long: ["userspec", "groups"], operands: 1 },
  unbuffer: {},
  taskset: { operands: 1 },
  chrt: { short: "TPD", operands: 1 },
  numactl: { short: "NmCpiPb", long: ["cpunodebind", "membind", "physcpubind", "preferred", "interleave"] },
  prlimit: { short: "p", long: ["pid"] },
  unshare: { short: "SGRw", long: ["setuid", "setgid", "root", "wd"] },
  nsenter: { short: "tSGrw", long: ["target", "setuid", "setgid", "root", "wd"] },
  runuser: { short: "ugG", long: ["user", "group", "supp-group"] },
  flock: { short: "wE", long: ["timeout", "conflict-exit-code"], operands: 1 },
  strace: { short: "oepsuEIPabX" },
  ltrace: { short: "oepsuEnA" },
  valgrind: {},
  "xvfb-run": { short: "snfewp", long: ["server-args", "server-num", "auth-file", "error-file", "wait"] },
  "dbus-run-session": {},
  "ssh-agent": { short: "aEPt" },
  fakeroot: { short: "is" },
  eatmydata: {},
  nocache: {},
  torsocks: {},
  proxychains: { short: "f" },
  proxychains4: { short: "f" },
  caffeinate: { short: "tw" },
  catchsegv: {},
  "systemd-run": {
    short: "pEuMH",
    long: ["property", "setenv", "unit", "machine", "host", "working-directory"],
  },
  firejail: {},
  proot: { short: "rbwq" },
  faketime: { short: "f", operands: 1 },
  setarch: { operands: 1 },
  linux32: {},
  linux64: {},
  entr: {},
  cgexec: { short: "g" },
  chpst: { short: "uUenl" },
  setpriv: {},
  gosu: { operands: 1 },
  "su-exec": { operands: 1 },
  runcon: { short: "turl" },
  screen: { short: "SceptT" },
  npx: { short: "p", long: ["package"] },
  bunx: {},
  pnpx: {},
  "cross-env": {},
  dotenv: { short: "ec" },
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
};

/** `npm exec X`, `poetry run X`, …: a program and a subcommand that run the rest. */
const RUNNER_SUBCOMMANDS: Record<string, RegExp> = {
  npm: /^(exec|x)$/,
  pnpm: /^(exec|dlx)$/,
  yarn: /^(exec|dlx)$/,
  bun: /^x$/,
  uv: /^run$/,
  poetry: /^run$/,
  pipenv: /^run$/,
  pdm: /^run$/,
  pipx: /^run$/,
  bundle: /^exec$/,
  conda: /^run$/,
  mamba: /^run$/,
  rye: /^run$/,
  hatch: /^run$/,
};

/** Variables whose value is a command some program runs. */
const CODE_VARS =
  /^(PAGER|GIT_PAGER|MANPAGER|SYSTEMD_PAGER|BROWSER|EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR|SUDO_EDITOR|FCEDIT|GIT_SSH_COMMAND|GIT_SSH|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|PROMPT_COMMAND|LESSOPEN|LESSCLOSE|RSYNC_RSH|GIT_PROXY_COMMAND)$/;
/** Variables that make programs load code from elsewhere: the policy cannot judge that. */
const LOADER_VARS =
  /^(LD_PRELOAD|LD_AUDIT|BASH_ENV|ENV|GIT_EXEC_PATH|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_TEMPLATE_DIR|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|DYLD_INSERT_LIBRARIES)$/;
/** Variables that change what a program does or which program runs (no allow covers the form). */
const RISKY_VARS =
  /^(PATH|NODE_OPTIONS|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|LD_LIBRARY_PATH|MAKEFLAGS|MFLAGS|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|IFS|CDPATH|SHELLOPTS|BASHOPTS)$/;

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

type Base = Omit<
  Invocation,
  "name" | "written" | "args" | "text" | "effects" | "opaque" | "risky" | "guessed"
>;

const WRITE_OPS = /^(>|>>|&>|&>>|>\||<>|>&|&>\|)$/;

class Understanding {
  parsed = true;
  readonly functions: string[] = [];
  private stages = new Map<string, Invocation>();
  private pathChanged = false;
  /** The folder the top-level line leaves the shell in. */
  endCwd = ".";
  /** The variables an eval or trap of the command being unwrapped runs with. */
  private sameShellVars: ReadonlyMap<string, string> | undefined;
  /** Symbolic links the line made, by the link's path: later paths through them reach the target. */
  private readonly links = new Map<string, string>();

  constructor(private readonly workspaceCwd: string) {}

  /** The invocations of a command line, at `depth` levels of code strings. */
  line(
    text: string,
    depth: number,
    outer?: Partial<Invocation>,
    vars?: ReadonlyMap<string, string>,
  ): Invocation[] {
    const parsed = parseShell(text, vars);
    if (!parsed.parsed) this.parsed = false;
    if (depth === 0) this.endCwd = parsed.cwd;
    this.functions.push(...parsed.functions);
    const saved = this.stages;
    this.stages = new Map();
    const out: Invocation[] = [];
    const cwd = outer?.cwd ?? this.workspaceCwd;
    for (const a of parsed.assignments) {
      if (a.name === "PATH") this.pathChanged = true;
      out.push(...this.assignment(a, depth, { ...(outer ?? {}), cwd }));
    }
    for (const c of parsed.commands) {
      const invs = this.command(c, depth, outer);
      if (c.pipeline && invs[0]) this.stages.set(`${c.pipeline.id}:${c.pipeline.stage}`, invs[0]);
      out.push(...invs);
    }
    this.stages = saved;
    if (this.pathChanged) for (const inv of out) inv.risky.push("the line changes PATH");
    return out;
  }

  /** A variable whose value is a command, or that loads code, wherever it is set. */
  private assignment(a: Assignment, depth: number, outer: Partial<Invocation>): Invocation[] {
    if (CODE_VARS.test(a.name) && a.value) {
      const code = a.value.replace(/^\|\|?-?/, "").replaceAll("%s", "FILE");
      return this.code(code, depth, outer, `${a.name}=`);
    }
    if (LOADER_VARS.test(a.name) && a.value)
      return [
        this.synthetic(outer, "export", [`${a.name}=${a.value}`], {
          opaque: [`${a.name} makes programs load code the policy cannot judge`],
        }),
      ];
    return [];
  }

  private synthetic(
    outer: Partial<Invocation>,
    name: string,
    args: string[],
    extra: Partial<Invocation> = {},
  ): Invocation {
    return {
      name,
      written: name,
      args,
      via: [...(outer.via ?? [])],
      redirects: [],
      background: false,
      inFunctions: [...(outer.inFunctions ?? [])],
      feeds: outer.feeds ?? [],
      ...(outer.pipeline ? { pipeline: outer.pipeline } : {}),
      text: [name, ...args].join(" "),
      cwd: outer.cwd ?? ".",
      assignments: [],
      effects: [],
      opaque: [],
      risky: [],
      guessed: outer.guessed ?? false,
      ...extra,
    };
  }

  /** Shell code from a string: parsed when it is known, opaque when it is not. */
  private code(
    code: string,
    depth: number,
    outer: Partial<Invocation>,
    label: string,
    vars?: ReadonlyMap<string, string>,
  ): Invocation[] {
    if (code.includes(UNKNOWN) || depth >= MAX_DEPTH)
      return [
        this.synthetic(outer, label.split(" ")[0]!, [code.replaceAll(UNKNOWN, "…")], {
          opaque: [
            depth >= MAX_DEPTH
              ? `${label} nests code too deep to follow`
              : `${label} runs code only known at run time`,
          ],
        }),
      ];
    return this.line(code, depth + 1, { ...outer, via: [...(outer.via ?? []), label] }, vars);
  }

  private command(c: ShellCommand, depth: number, outer?: Partial<Invocation>): Invocation[] {
    const feeds = c.substitutions.flatMap((s) => this.command(s, depth, outer));
    const base: Base = {
      via: [...(outer?.via ?? [])],
      redirects: [...c.redirects],
      ...(c.pipeline ? { pipeline: c.pipeline } : outer?.pipeline ? { pipeline: outer.pipeline } : {}),
      background: c.background || (outer?.background ?? false),
      inFunctions: [...(outer?.inFunctions ?? []), ...c.inFunctions],
      feeds,
      cwd: joinPath(outer?.cwd ?? this.workspaceCwd, c.cwd),
      assignments: c.assignments,
      ...(c.stdin !== undefined
        ? { stdin: c.stdin }
        : outer?.stdin !== undefined
          ? { stdin: outer.stdin }
          : {}),
    };
    this.sameShellVars = c.vars;
    const out = this.unwrap(c.words, base, depth, outer?.guessed ?? false);
    // Redirections on the statement apply to what it runs first (a wrapper's program).
    if (outer?.redirects?.length && out[0]) out[0].redirects.push(...outer.redirects);
    return out;
  }

  /** Records the links `ln -s` makes and rewrites paths that go through earlier ones. */
  private throughLinks(inv: Invocation): void {
    for (const e of inv.effects) {
      if (e.kind === "link") continue;
      const p = normalizeAny(joinPath(inv.cwd, e.path));
      for (const [link, target] of this.links)
        if (p === link || p.startsWith(`${link}/`)) e.path = target + p.slice(link.length);
    }
    const link = inv.effects.find((e) => e.kind === "link");
    const dest = inv.effects.find((e) => e.kind === "write" && e.by === "ln");
    if (link && dest && (inv.cwd === "." || /^[/~]/.test(link.path)))
      this.links.set(normalizeAny(joinPath(inv.cwd, dest.path)), link.path);
  }

  /** The text the previous stage of the pipeline writes, when the line tells (echo, printf, cat <<EOF). */
  private pipedText(base: Base): string | undefined {
    const p = base.pipeline;
    if (!p || p.stage === 0) return undefined;
    const prev = this.stages.get(`${p.id}:${p.stage - 1}`);
    if (!prev) return undefined;
    const ops = prev.args.filter((a) => !/^-[neE]+$/.test(a));
    if (prev.name === "echo") return `${ops.join(" ")}\n`;
    if (prev.name === "printf" && ops.length === 1) return ops[0]!.replace(/\\n/g, "\n");
    if (prev.name === "cat" && prev.stdin !== undefined && ops.length === 0) return prev.stdin;
    return undefined;
  }

  /** What xargs or parallel appends: the words its standard input carries, when the line tells. */
  private stdinWords(base: Base): string[] {
    if (base.stdin !== undefined) return base.stdin.split(/\s+/).filter(Boolean);
    const p = base.pipeline;
    if (!p || p.stage === 0) return [UNKNOWN];
    const prev = this.stages.get(`${p.id}:${p.stage - 1}`);
    if (!prev) return [UNKNOWN];
    const ops = prev.args.filter((a) => !a.startsWith("-"));
    switch (prev.name) {
      case "echo":
        return ops.length ? ops : [""];
      case "printf":
        return ops.length > 1 ? ops.slice(1) : ops;
      case "find":
      case "ls":
      case "fd":
      case "fdfind":
        return ops.length && prev.name !== "fd" ? [ops[0]!] : ["."];
      case "git":
        return ["."];
      case "grep":
      case "rg":
        return prev.args.some((a) => /^-[a-zA-Z]*[lL]|^--files/.test(a)) ? ["."] : [UNKNOWN];
      case "seq":
        return ["1"];
      case "cat":
        return prev.stdin !== undefined ? prev.stdin.split(/\s+/).filter(Boolean) : [UNKNOWN];
      default:
        return [UNKNOWN];
    }
  }

  private unwrap(words: ShellWord[], base: Base, depth: number, guessed: boolean): Invocation[] {
    let rest = words;
    const via = base.via;
    let cwd = base.cwd;
    const assignments = [...base.assignments];
    const extra: Invocation[] = [];
    for (;;) {
      const first = rest[0]?.value;
      if (first === undefined) return extra;
      const name = programName(first);
      const args = rest.slice(1).map((w) => w.value);
      const wrapper = WRAPPERS[name];
      if (wrapper && args.length > 0) {
        if (name === "command" && /^-[pvV]*[vV]/.test(args[0] ?? "")) return extra; // command -v: a lookup
        let at = skipOptions(args, 0, wrapper);
        if (name === "env" || name === "sudo") {
          // env -C DIR / sudo -D DIR: the program runs in another folder.
          for (let k = 0; k < at; k++) {
            const a = args[k]!;
            const dir = (name === "env" ? /^(-C|--chdir)$/ : /^(-D|--chdir)$/).test(a)
              ? args[k + 1]
              : /^(--chdir=|-C(?=.)|-D(?=.))/.test(a)
                ? a.replace(/^(--chdir=|-C|-D)/, "")
                : undefined;
            if (dir !== undefined) cwd = joinPath(cwd, dir);
          }
        }
        if (name === "env") {
          const split = args.findIndex((a, k) => k < at && /^(-S|--split-string)/.test(a));
          if (split !== -1) {
            const s = args[split]!;
            const str = s.startsWith("--split-string=")
              ? s.slice("--split-string=".length)
              : s.length > 2 && s.startsWith("-S")
                ? s.slice(2)
                : args[split + 1];
            const inner = parseShell(str ?? "").commands[0]?.words ?? [];
            rest = [...inner, ...rest.slice(1 + at)];
            via.push(name);
            continue;
          }
        }
        if (name === "env" || name === "cross-env" || name === "sudo" || name === "doas")
          while (at < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[at]!)) {
            const eq = args[at]!.indexOf("=");
            assignments.push({ name: args[at]!.slice(0, eq), value: args[at]!.slice(eq + 1) });
            at++;
          }
        if (name === "flock" || name === "runuser" || name === "npx" || name === "screen") {
          // `flock FILE -c CODE`, `runuser -u x -c CODE`, `npx -c CODE`, `screen -dm …`.
          const c = args.findIndex((a) => a === "-c" || a === "--command" || a === "--call");
          if (c !== -1 && name !== "screen") {
            via.push(name);
            return [...extra, ...this.codeFor(args[c + 1] ?? "", depth, base, via, cwd, `${name} -c`)];
          }
        }
        at += wrapper.operands ?? 0;
        if (name === "taskset" && args.some((a, k) => k < at && /^-[a-z]*p/.test(a))) return extra;
        if (at < args.length) {
          via.push(name);
          rest = rest.slice(1 + at);
          if (name === "xargs" || name === "parallel") rest = this.fed(rest, args, base);
          continue;
        }
        if (name === "xargs") {
          // No command: xargs runs echo.
          via.push(name);
          rest = [{ value: "echo", raw: "echo" }];
          continue;
        }
      }
      const sub = RUNNER_SUBCOMMANDS[name];
      if (sub?.test(args[0] ?? "")) {
        const at = skipOptions(args, 1, { short: "pnc", long: ["package", "name", "with"] });
        if (at < args.length) {
          via.push(`${name} ${args[0]}`);
          rest = rest.slice(1 + at);
          continue;
        }
      }
      if (name === "parallel") {
        const { command, values } = this.parallelParts(args, base);
        via.push(name);
        if (command.length === 1 && /\s/.test(command[0]!))
          return [
            ...extra,
            ...this.codeFor(fill(command[0]!, values[0]!), depth, base, via, cwd, "parallel"),
          ];
        const filled = command.some((w) => w.includes("{}"))
          ? command.map((w) => fill(w, values[0]!))
          : [...command, ...values];
        rest = filled.map((value) => ({ value, raw: value }));
        if (rest.length === 0) return extra;
        continue;
      }
      const code = this.codeString(name, args);
      if (code !== undefined) {
        const label = name === "eval" || name === "trap" || name === "watch" ? name : `${name} -c`;
        const vars = name === "eval" || name === "trap" ? this.sameShellVars : undefined;
        return [...extra, ...this.codeFor(code, depth, base, via, cwd, label, vars)];
      }
      // A shell reading its program from a here-document or here-string, or from a pipe that
      // carries known text (`cat <<EOF | sh`, `echo … | sh`): that text is the code.
      if (SHELLS.has(name) && readsStdin(name, args)) {
        const text = base.stdin ?? this.pipedText(base);
        if (text !== undefined)
          return [...extra, ...this.codeFor(text, depth, { ...base }, via, cwd, `${name} <<`)];
      }
      // `source <(…)`, `bash <(…)`, `bash "$SCRIPT"`: the script is only known at run time,
      // unless what makes it prints known text (`bash <(echo …)`).
      const interpreter = runsScriptOperand(name, args);
      if ((SHELLS.has(name) || name === "source" || name === "." || interpreter) && !readsStdin(name, args)) {
        const script = args.find((a) => !a.startsWith("-"));
        if (script?.includes(UNKNOWN)) {
          const text = base.feeds.length === 1 ? knownOutput(base.feeds[0]!) : undefined;
          if (text !== undefined)
            return [...extra, ...this.codeFor(text, depth, base, via, cwd, `${name} <(…)`)];
          if (!base.feeds.some((f) => /^(curl|wget)$/.test(f.name)))
            extra.push(
              this.synthetic(
                { ...base, via: [...via], cwd },
                name,
                args.map((a) => a.replaceAll(UNKNOWN, "…")),
                {
                  opaque: [`${name} runs a script only known at run time`],
                },
              ),
            );
        }
      }
      const written = first.includes(UNKNOWN) ? rest[0]!.raw : normalizePath(first);
      // Words only known at run time are shown as written ($(…), "$X").
      const shown = rest.slice(1).map((w) => (w.value.includes(UNKNOWN) ? w.raw : w.value));
      const inv: Invocation = {
        ...base,
        via,
        cwd,
        assignments,
        redirects: base.redirects,
        name,
        written,
        args,
        text: [written, ...shown].join(" "),
        effects: [],
        opaque: [],
        risky: [],
        guessed,
      };
      if (name === "") inv.opaque.push("runs a program named only at run time");
      else if (/[*?[]/.test(first)) inv.opaque.push("runs a program named by a glob");
      const k: Knowledge & { cwd?: string } = knowledgeOf(name, args, base.stdin);
      const effectCwd = k.cwd !== undefined ? joinPath(cwd, k.cwd) : cwd;
      for (const e of k.effects)
        inv.effects.push({ ...e, path: joinPath(effectCwd === cwd ? "." : k.cwd!, e.path) });
      inv.opaque.push(...k.opaque);
      inv.risky.push(...k.risky);
      this.throughLinks(inv);
      for (const r of base.redirects)
        if (WRITE_OPS.test(r.op) && !(r.op === ">&" && /^([0-9]+|-)$/.test(r.target.value)))
          inv.effects.push({
            kind: "write",
            path: r.target.value,
            recursive: false,
            by: `redirection ${r.op}`,
          });
      const out = [...extra, inv];
      for (const a of assignments) {
        if (RISKY_VARS.test(a.name)) inv.risky.push(`${a.name}= for the program`);
        out.push(...this.assignment(a, depth, { ...base, via, cwd }));
      }
      const inline = inlineCodeKnowledge(name, args, base.stdin);
      if (inline) {
        inv.effects.push(...inline.effects);
        inv.opaque.push(...inline.opaque);
        inv.risky.push(...inline.risky);
        k.runs.push(...inline.runs);
      }
      for (const run of k.runs) out.push(...this.runOf(run, depth, base, via, effectCwd, guessed));
      if (!k.known && !WRAPPERS[name] && !SHELLS.has(name) && name !== "") {
        const at = args.findIndex((a) => DANGEROUS_HEADS.has(programName(a)));
        if (at !== -1) {
          const hidden = this.unwrap(
            rest.slice(1 + at),
            { ...base, via: [...via, `${name} (may run its arguments)`], redirects: [], feeds: [], cwd },
            depth + 1,
            true,
          );
          out.push(...hidden);
        }
      }
      return out;
    }
  }

  private runOf(
    run: Run,
    depth: number,
    base: Base,
    via: string[],
    cwd: string,
    guessed: boolean,
  ): Invocation[] {
    const outer = { ...base, via: [...via], cwd, redirects: [], feeds: [], guessed };
    delete (outer as Partial<Base>).stdin;
    delete (outer as Partial<Base>).pipeline;
    if ("code" in run) return this.code(run.code, depth, outer, run.label);
    if (depth >= MAX_DEPTH) return this.code(run.words.join(" "), depth, outer, run.label);
    const invs = this.unwrap(
      run.words.map((value) => ({ value, raw: value })),
      { ...outer, via: [...via, run.label], assignments: [] },
      depth + 1,
      guessed,
    );
    // find -exec rm {} runs rm on every file of the tree: as good as rm -r of the start.
    if (run.tree)
      for (const inv of invs) for (const e of inv.effects) if (e.kind !== "write") e.recursive = true;
    return invs;
  }

  private codeFor(
    code: string,
    depth: number,
    base: Base,
    via: string[],
    cwd: string,
    label: string,
    vars?: ReadonlyMap<string, string>,
  ): Invocation[] {
    const outer: Partial<Invocation> = { ...base, via: [...via], cwd, redirects: base.redirects };
    delete outer.stdin;
    return this.code(code, depth, outer, label, vars);
  }

  /** xargs/parallel: the command with its standard input's words added (or put in for -I). */
  private fed(cmd: ShellWord[], xargsArgs: string[], base: Base): ShellWord[] {
    const values = this.stdinWords(base);
    let replace: string | undefined;
    for (let i = 0; i < xargsArgs.length; i++) {
      const a = xargsArgs[i]!;
      if (a === "-I") replace = xargsArgs[i + 1];
      else if (a.startsWith("-I")) replace = a.slice(2);
      else if (a === "-i" || a === "--replace") replace = "{}";
      else if (a.startsWith("--replace=")) replace = a.slice("--replace=".length);
      if (!a.startsWith("-")) break;
    }
    if (replace)
      return cmd.map((w) => ({ value: w.value.replaceAll(replace!, values[0] ?? ""), raw: w.raw }));
    return [...cmd, ...values.map((value) => ({ value, raw: value === UNKNOWN ? "<stdin>" : value }))];
  }

  private parallelParts(args: string[], base: Base): { command: string[]; values: string[] } {
    const sep = args.findIndex((a) => a === ":::" || a === "::::" || a === ":::+" || a === "::::+");
    const head = sep === -1 ? args : args.slice(0, sep);
    const at = skipOptions(head, 0, {
      short: "jSIEaX",
      long: ["jobs", "sshlogin", "halt", "delay", "timeout"],
    });
    const command = head.slice(at);
    let values: string[];
    if (sep === -1) values = this.stdinWords(base);
    else if (args[sep]!.startsWith("::::")) values = [UNKNOWN];
    else values = args.slice(sep + 1).filter((a) => !a.startsWith(":::"));
    return { command, values: values.length ? values : [""] };
  }

  /** The code a shell runs from its arguments: `bash -c CODE`, `eval A B`, `su -c CODE`, `trap CODE SIG`… */
  private codeString(name: string, args: string[]): string | undefined {
    if (name === "eval") return args.length > 0 ? args.join(" ") : undefined;
    if (SHELLS.has(name)) {
      const end = skipOptions(args, 0, { short: "oO" });
      const flags = shortFlags(args, end);
      if (name === "fish" || name === "nu" || name === "xonsh" || name === "elvish") {
        const c = args.findIndex((a) => a === "-c" || a === "--command" || /^-[a-z]*c$/.test(a));
        if (c !== -1) return args[c + 1];
        const eq = args.find((a) => a.startsWith("--command="));
        return eq?.slice("--command=".length);
      }
      return flags.includes("c") ? args[end] : undefined;
    }
    if (name === "su" || name === "sg" || name === "script" || name === "nix-shell") {
      const k = args.findIndex((a) => a === "-c" || a === "--command" || a === "--run");
      if (k !== -1) return args[k + 1];
      const eq = args.find((a) => /^--(command|run)=/.test(a));
      if (eq) return eq.slice(eq.indexOf("=") + 1);
      const bundled = args.find((a) => /^-[a-zA-Z]*c$/.test(a));
      if (bundled) return args[args.indexOf(bundled) + 1];
      if (name === "sg" && args.length >= 2) return args.slice(1).join(" ");
      return undefined;
    }
    if (name === "trap") return args[0] && !args[0].startsWith("-") && args.length > 1 ? args[0] : undefined;
    if (name === "watch") {
      const at = skipOptions(args, 0, { short: "nqd", long: ["interval", "differences"] });
      return at < args.length ? args.slice(at).join(" ") : undefined;
    }
    if (name === "tmux") {
      const sub = args.findIndex((a) =>
        /^(new-session|new|new-window|neww|split-window|splitw|run-shell|run|respawn-pane|respawnp|send-keys|send)$/.test(
          a,
        ),
      );
      if (sub === -1) return undefined;
      const after = args.slice(sub + 1);
      const at = skipOptions(after, 0, { short: "sntcFxyeltTPbwC" });
      return at < after.length ? after.slice(at).join(" ") : undefined;
    }
    if (name === "nix" && args[0] === "develop") {
      const k = args.findIndex((a) => a === "-c" || a === "--command");
      return k !== -1 ? args.slice(k + 1).join(" ") : undefined;
    }
    return undefined;
  }
}

/** What echo, printf or cat of a here-document prints, when the line tells. */
function knownOutput(inv: Invocation): string | undefined {
  const ops = inv.args.filter((a) => !/^-[neE]+$/.test(a));
  if (ops.some((a) => a.includes(UNKNOWN))) return undefined;
  if (inv.name === "echo") return `${ops.join(" ")}\n`;
  if (inv.name === "printf" && ops.length === 1) return ops[0]!.replace(/\\n/g, "\n");
  if (inv.name === "cat" && inv.stdin !== undefined && ops.length === 0) return inv.stdin;
  return undefined;
}

function fill(word: string, value: string): string {
  return word.replace(/\{(\.|\/|\/\/|\/\.|#|%|\d+)?\}/g, value);
}

/** True when a shell reads its program from standard input (no -c, no script operand, or -s). */
function readsStdin(name: string, args: string[]): boolean {
  const end = skipOptions(args, 0, { short: "oO" });
  const flags = shortFlags(args, end);
  if (flags.includes("c")) return false;
  if (flags.includes("s")) return true;
  return end >= args.length || args[end] === "-" || name === "fish";
}

/** Parses a command line and says what it runs. */
export function understand(command: string, context: Context = {}): CommandMeaning {
  const u = new Understanding(context.cwd ?? ".");
  const invocations = u.line(command, 0);
  return {
    text: command.replace(/\s+/g, " ").trim(),
    invocations,
    functions: u.functions,
    parsed: u.parsed,
    cwd: joinPath(context.cwd ?? ".", u.endCwd),
    workspaces: context.workspaces ?? ["/workspace"],
  };
}
