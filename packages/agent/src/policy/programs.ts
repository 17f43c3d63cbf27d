// What known programs do beyond their name: the files they delete, write or re-permission,
// the commands their options run (`find -exec`, `git -c core.pager=…`, `tar --to-command`,
// `awk 'BEGIN{system("…")}'`, `sed '1e id'`, `make SHELL=…`), code they run that cannot be read
// from the line (`awk '{system($0)}'`, `make --eval`, `git --exec-path`: "opaque", the policy
// asks), and the options that make a form no longer the plain one an allow rule meant
// ("risky": `find -delete`, `sed -i`, `git -c`). shell-meaning.ts turns the commands run into
// invocations of their own; the built-in rules judge the effects by where their paths reach.

import { git } from "./git-options.js";
import { flag, operandsOf, valueAt } from "./program-args.js";

/** A file-system change: deleting, writing or changing the mode/owner of a path. */
export interface Effect {
  /** "link": a symbolic link to `path` is made (later paths through it reach there). */
  kind: "delete" | "write" | "mode" | "link";
  path: string;
  recursive: boolean;
  /** What does it, for messages: "rm -r", "find -delete", "redirection", "git log --output". */
  by: string;
}

/** A command an option makes the program run: a word list or a line of shell code. */
export type Run =
  | {
      words: string[];
      label: string;
      cwd?: string /** run once per file of a tree (find -exec) */;
      tree?: boolean;
    }
  | { code: string; label: string };

export interface Knowledge {
  effects: Effect[];
  runs: Run[];
  opaque: string[];
  risky: string[];
  /** Set when the program is one this module knows (no argument scan for hidden commands). */
  known: boolean;
}

type Analyzer = (args: string[], k: Knowledge) => void;

const del = (k: Knowledge, paths: string[], recursive: boolean, by: string) => {
  for (const path of paths) k.effects.push({ kind: "delete", path, recursive, by });
};
const write = (k: Knowledge, paths: string[], by: string, recursive = false) => {
  for (const path of paths) k.effects.push({ kind: "write", path, recursive, by });
};

/** cp/mv/install/ln: the destination is `-t DIR` or the last operand. */
function destination(args: string[], withValue: string[]): { dest?: string; sources: string[] } {
  for (let i = 0; i < args.length; i++) {
    const v = valueAt(args, i, ["t"], ["target-directory"]);
    if (v) return { dest: v[0], sources: operandsOf(args, withValue, ["target-directory"]) };
  }
  const ops = operandsOf(args, withValue);
  return ops.length >= 2 ? { dest: ops.at(-1)!, sources: ops.slice(0, -1) } : { sources: ops };
}

// ---- find ---------------------------------------------------------------------------------

function find(args: string[], k: Knowledge): void {
  let i = 0;
  while (/^-[HLPO]/.test(args[i] ?? "") || /^-D$/.test(args[i] ?? "")) i += args[i] === "-D" ? 2 : 1;
  const starts: string[] = [];
  while (i < args.length && !/^[-(!,)]/.test(args[i]!)) starts.push(args[i++]!);
  if (starts.length === 0) starts.push(".");
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (/^-(exec|execdir|ok|okdir)$/.test(a)) {
      const words: string[] = [];
      let j = i + 1;
      while (j < args.length && args[j] !== ";" && args[j] !== "+") words.push(args[j++]!);
      i = j;
      k.risky.push(`find ${a}`);
      for (const s of starts.slice(0, 4))
        if (words.length)
          k.runs.push({ words: words.map((w) => w.replaceAll("{}", s)), label: `find ${a}`, tree: true });
    } else if (a === "-delete") {
      k.risky.push("find -delete");
      del(k, starts, true, "find -delete");
    } else if (/^-(fprint0?|fprintf|fls)$/.test(a)) {
      k.risky.push(`find ${a}`);
      if (args[i + 1] !== undefined) write(k, [args[i + 1]!], `find ${a}`);
      i += a === "-fprintf" ? 2 : 1;
    }
  }
}

// ---- awk, sed -------------------------------------------------------------------------------

/** A command line that runs a shell or an interpreter reading its program from standard input. */
const CODE_READER =
  /^\s*(\S*\/)?(sh|bash|dash|zsh|ksh|ash|fish|python[0-9.]*|perl|ruby|node|php)(\s+-[a-zA-Z]*s?)?\s*$/;

const AWK_STRING = /"((?:[^"\\\n]|\\.)*)"/g;
const unAwk = (s: string) => s.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));

/** Reads an awk program for the commands it runs and the files it writes. */
function awkProgram(prog: string, k: Knowledge, by: string): void {
  // Strings and /regex/ literals hide | and > that are not pipes or redirections.
  const strings: string[] = [];
  let code = prog.replace(AWK_STRING, (_, s: string) => `"${strings.push(unAwk(s)) - 1}"`);
  code = code.replace(/(^|[(,~!{};&|\n]\s*)\/(?:[^/\\\n]|\\.)*\//g, "$1R");
  const lit = (m: string | undefined) => (m === undefined ? undefined : strings[Number(m)]);
  let opaque = false;
  for (const m of code.matchAll(/\bsystem\s*\(([^)]*)\)/g)) {
    const s = /^\s*"(\d+)"\s*$/.exec(m[1]!);
    if (s) k.runs.push({ code: lit(s[1])!, label: `${by} system()` });
    else opaque = true;
  }
  for (const m of code.matchAll(/(?:("(\d+)")|([A-Za-z_$][\w$]*|\)))\s*\|&?\s*getline/g)) {
    if (m[2] !== undefined) k.runs.push({ code: lit(m[2])!, label: `${by} | getline` });
    else opaque = true;
  }
  // print/printf statements: `| cmd` and `> file` there are a pipe and a redirection.
  for (const m of code.matchAll(/\bprintf?\b([^;}\n]*)/g)) {
    const stmt = m[1]!.replace(/\([^()]*\)/g, "P");
    const pipe = /(?:^|[^|])\|&?\s*(?!\|)("(\d+)"|\S)/.exec(stmt);
    if (pipe) {
      const target = pipe[2] !== undefined ? lit(pipe[2])! : undefined;
      // Printing into a shell or an interpreter runs what is printed: not readable here.
      if (target !== undefined && !CODE_READER.test(target))
        k.runs.push({ code: target, label: `${by} print |` });
      else opaque = true;
    }
    const out = />>?\s*("(\d+)"|\S)/.exec(stmt);
    if (out) {
      if (out[2] !== undefined) write(k, [lit(out[2])!], `${by} print >`);
      else opaque = true;
    }
  }
  if (opaque) k.opaque.push(`${by} runs a command or writes a file named only at run time`);
  if (k.runs.length || k.effects.length || opaque) k.risky.push(`${by} runs commands or writes files`);
}

function awk(args: string[], k: Knowledge): void {
  let prog: string | undefined;
  let fromFile = false;
  let inplace = false;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const f = valueAt(args, i, ["f", "E"], ["file", "exec"]);
    if (f) {
      fromFile = true;
      i += f[1] - 1;
      continue;
    }
    const e = valueAt(args, i, ["e"], ["source"]);
    if (e) {
      prog = (prog ?? "") + e[0];
      i += e[1] - 1;
      continue;
    }
    const inc = valueAt(args, i, ["i", "l"], ["include", "load"]);
    if (inc) {
      if (inc[0] === "inplace") inplace = true;
      else k.risky.push("awk loads an extension");
      i += inc[1] - 1;
      continue;
    }
    const v = valueAt(args, i, ["F", "v"], ["field-separator", "assign"]);
    if (v) {
      i += v[1] - 1;
      continue;
    }
    if (a === "--") {
      rest.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("-") && a !== "-") continue;
    rest.push(a);
  }
  if (prog === undefined && !fromFile) prog = rest.shift();
  if (fromFile) k.risky.push("awk -f runs a program from a file");
  if (prog !== undefined) awkProgram(prog, k, "awk");
  if (inplace) {
    k.risky.push("awk -i inplace");
    write(k, rest, "awk -i inplace");
  }
}

/** Reads a sed script for `e` (runs commands), `w`/`W` and `s///w` (write files), `s///e`. */
export function sedScript(script: string, k: Knowledge, by = "sed"): void {
  let i = 0;
  const n = script.length;
  const restOfLine = () => {
    const end = script.indexOf("\n", i);
    const text = script.slice(i, end === -1 ? n : end);
    i = end === -1 ? n : end + 1;
    return text.trim();
  };
  const skipDelimited = (d: string) => {
    while (i < n && script[i] !== d) i += script[i] === "\\" ? 2 : 1;
    i++;
  };
  while (i < n) {
    const c = script[i]!;
    if (/[\s;{}!,0-9$~+]/.test(c)) {
      i++;
      continue;
    }
    if (c === "/" || c === "\\") {
      // an address: /re/ or \cREc
      const d = c === "\\" ? script[i + 1]! : "/";
      i += c === "\\" ? 2 : 1;
      skipDelimited(d);
      while (/[IM]/.test(script[i] ?? "")) i++;
      continue;
    }
    i++;
    if (c === "e") {
      const cmd = restOfLine().replace(/;.*$/, "");
      if (cmd) k.runs.push({ code: cmd, label: `${by} e` });
      else k.opaque.push(`${by}'s e command runs the text it edits as a command`);
      k.risky.push(`${by} e`);
    } else if (c === "w" || c === "W") {
      write(k, [restOfLine()], `${by} ${c}`);
      k.risky.push(`${by} ${c}`);
    } else if (c === "s" || c === "y") {
      const d = script[i]!;
      i++;
      skipDelimited(d);
      skipDelimited(d);
      if (c === "s") {
        let flags = "";
        while (i < n && /[gpeimIM0-9w]/.test(script[i]!)) {
          flags += script[i];
          i++;
          if (flags.endsWith("w")) break;
        }
        if (flags.includes("e")) {
          k.opaque.push(`${by}'s s///e runs the replaced text as a command`);
          k.risky.push(`${by} s///e`);
        }
        if (flags.endsWith("w")) {
          write(k, [restOfLine()], `${by} s///w`);
          k.risky.push(`${by} s///w`);
        }
      }
    } else if (/[aicrRbtTqQlL:v#]/.test(c)) restOfLine();
  }
}

function sed(args: string[], k: Knowledge): void {
  const scripts: string[] = [];
  let inplace = false;
  let sandbox = false;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const e = valueAt(args, i, ["e"], ["expression"]);
    if (e) {
      scripts.push(e[0]);
      i += e[1] - 1;
      continue;
    }
    const f = valueAt(args, i, ["f"], ["file"]);
    if (f) {
      k.risky.push("sed -f runs a script from a file");
      i += f[1] - 1;
      continue;
    }
    const l = valueAt(args, i, ["l"], ["line-length"]);
    if (l) {
      i += l[1] - 1;
      continue;
    }
    if (a === "--sandbox") sandbox = true;
    if (/^--in-place(=|$)/.test(a) || /^-[nrEsuz]*i/.test(a)) inplace = true;
    if (a === "--") {
      rest.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("-") && a !== "-") continue;
    rest.push(a);
  }
  if (scripts.length === 0 && rest.length) scripts.push(rest.shift()!);
  if (!sandbox) for (const s of scripts) sedScript(s, k);
  if (inplace) {
    k.risky.push("sed -i");
    write(k, rest, "sed -i");
  }
}

// ---- make, tar, rsync, ssh, curl, wget ------------------------------------------------------

function make(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const f = valueAt(args, i, ["f"], ["file", "makefile"]);
    if (f) {
      k.risky.push("make -f");
      if (f[0] === "-" || f[0].startsWith("/dev/") || f[0].startsWith("/proc/"))
        k.opaque.push("make -f reads its recipes from standard input or a device");
      i += f[1] - 1;
      continue;
    }
    const C = valueAt(args, i, ["C"], ["directory"]);
    if (C) {
      k.risky.push("make -C");
      i += C[1] - 1;
      continue;
    }
    const ev = valueAt(args, i, ["E"], ["eval"]);
    if (ev) {
      k.risky.push("make --eval");
      k.opaque.push("make --eval adds recipes the policy cannot judge");
      i += ev[1] - 1;
      continue;
    }
    const m = /^([A-Za-z_.][A-Za-z0-9_.]*)\s*[:+?!]?=(.*)$/s.exec(a);
    if (m) {
      const [, name, value] = m as unknown as [string, string, string];
      if (/^(SHELL|MAKESHELL|\.SHELLFLAGS|MAKEFLAGS|MFLAGS)$/.test(name)) {
        k.risky.push(`make ${name}=`);
        if (name !== ".SHELLFLAGS" && !name.endsWith("FLAGS"))
          k.runs.push({ code: value, label: `make ${name}=` });
        else k.opaque.push(`make ${name}= changes how every recipe runs`);
      } else if (/[\s;|&$`<>()]/.test(value)) k.risky.push(`make ${name}= with shell syntax`);
    }
  }
}

function tar(args: string[], k: Knowledge): void {
  let mode = "";
  let file: string | undefined;
  let dir = ".";
  let i = 0;
  // Old style: `tar xzf FILE`, the letters' values follow in order.
  if (args[0] && !args[0].startsWith("-")) {
    const letters = args[0];
    mode += letters;
    i = 1;
    for (const l of letters)
      if (/[fCTXgbHIFKLNV]/.test(l)) {
        const v = args[i++];
        if (l === "f") file = v;
        if (l === "C" && v) dir = v;
        if ((l === "I" || l === "F") && v) k.runs.push({ code: v, label: `tar -${l}` });
      }
  }
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (/^-[a-zA-Z]+$/.test(a)) mode += a.slice(1);
    if (/^--(extract|get)$/.test(a)) mode += "x";
    if (/^--(create|append|update|catenate|concatenate)$/.test(a)) mode += "c";
    if (a === "--absolute-names") mode += "P";
    const cmd = valueAt(
      args,
      i,
      ["I", "F"],
      [
        "to-command",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
      ],
    );
    if (cmd) {
      k.risky.push(`tar ${a.split("=")[0]}`);
      k.runs.push({ code: cmd[0], label: `tar ${a.split("=")[0]}` });
      i += cmd[1] - 1;
      continue;
    }
    const cp = valueAt(args, i, [], ["checkpoint-action"]);
    if (cp) {
      const exec = /^exec=(.*)$/s.exec(cp[0]);
      k.risky.push("tar --checkpoint-action");
      if (exec) k.runs.push({ code: exec[1]!, label: "tar --checkpoint-action=exec" });
      i += cp[1] - 1;
      continue;
    }
    if (/^-[a-zA-Z]*f$/.test(a) || a === "--file") {
      file = args[i + 1];
      i++;
      continue;
    }
    if (/^-f./.test(a) || a.startsWith("--file=")) file = a.replace(/^(-f|--file=)/, "");
    const C = valueAt(args, i, ["C"], ["directory"]);
    if (C) {
      dir = C[0];
      i += C[1] - 1;
    }
  }
  if (/[cruA]/.test(mode) && file && file !== "-") write(k, [file], "tar -c -f");
  if (/x/.test(mode)) {
    write(k, [dir], "tar -x", true);
    if (/P/.test(mode)) k.opaque.push("tar -P extracts to the absolute paths the archive names");
  }
}

function rsync(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const e = valueAt(args, i, ["e"], ["rsh", "rsync-path"]);
    if (e) {
      k.risky.push(`rsync ${args[i]!.split("=")[0]}`);
      k.runs.push({ code: e[0], label: `rsync ${args[i]!.split("=")[0]}` });
      i += e[1] - 1;
      continue;
    }
    const log = valueAt(args, i, [], ["log-file", "write-batch", "only-write-batch"]);
    if (log) write(k, [log[0]], "rsync --log-file");
  }
  const ops = operandsOf(
    args,
    ["e", "f", "T"],
    ["rsh", "rsync-path", "log-file", "exclude", "include", "filter"],
  );
  const local = (p: string) => !/^[^/]*:/.test(p) && !p.startsWith("rsync://");
  if (ops.length >= 2) {
    const dest = ops.at(-1)!;
    if (local(dest)) write(k, [dest], "rsync", true);
    if (local(dest) && flag(args, "", ["delete", "delete-before", "delete-after", "delete-during", "del"]))
      del(k, [dest], true, "rsync --delete");
    if (flag(args, "", ["remove-source-files"]))
      del(k, ops.slice(0, -1).filter(local), false, "rsync --remove-source-files");
  }
}

function ssh(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const o = valueAt(args, i, ["o"], []);
    if (o) {
      const m = /^(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[= ]\s*(.*)$/is.exec(o[0]);
      if (m && !/^RemoteCommand$/i.test(m[1]!)) {
        k.runs.push({ code: m[2]!, label: `ssh -o ${m[1]}` });
        k.risky.push(`ssh -o ${m[1]}`);
      }
      i += o[1] - 1;
    }
    if (args[i] === "-F") k.risky.push("ssh -F");
  }
}

function curl(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const o = valueAt(
      args,
      i,
      ["o", "D", "c"],
      [
        "output",
        "dump-header",
        "cookie-jar",
        "trace",
        "trace-ascii",
        "libcurl",
        "stderr",
        "etag-save",
        "hsts",
        "alt-svc",
        "output-dir",
      ],
    );
    if (o && !/^-[a-zA-Z]{2,}$/.test(args[i]!)) {
      write(k, [o[0]], "curl -o");
      i += o[1] - 1;
      continue;
    }
    if (valueAt(args, i, ["K"], ["config"])) k.risky.push("curl --config");
  }
}

function wget(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const o = valueAt(
      args,
      i,
      ["O", "o", "a", "P"],
      ["output-document", "output-file", "append-output", "directory-prefix"],
    );
    if (o) {
      if (o[0] !== "-") write(k, [o[0]], "wget -O");
      i += o[1] - 1;
      continue;
    }
    const e = valueAt(args, i, ["e"], ["execute", "config"]);
    if (e) {
      k.risky.push("wget --execute");
      if (
        /^(output_document|dir_prefix|logfile|post_file|use_askpass)/i.test(e[0]) ||
        /config/.test(args[i]!)
      )
        k.opaque.push("wget -e sets options the policy cannot judge");
      i += e[1] - 1;
    }
    const ask = valueAt(args, i, [], ["use-askpass"]);
    if (ask) k.runs.push({ code: ask[0], label: "wget --use-askpass" });
  }
}

// ---- pagers and editors with shell escapes ---------------------------------------------------

/** An editor or pager command given on the command line: `!cmd` runs cmd. */
function escapeCommand(cmd: string, k: Knowledge, by: string): void {
  if (/^\+?\d*$/.test(cmd) || /^[/?][^!]*$/.test(cmd) || /^[GFgq]$/.test(cmd)) return;
  k.risky.push(`${by} runs editor commands`);
  const bang = cmd.indexOf("!");
  if (bang !== -1 && cmd.slice(bang + 1).trim()) k.runs.push({ code: cmd.slice(bang + 1), label: `${by} !` });
  else if (
    /\b(system|systemlist|term|terminal|py|python3?|pyx|lua|perl|ruby|mzscheme|exe|execute|call|source|so|shell|sh|make|grep|diffpatch|w|write|saveas|wq|x|up|update)\b/.test(
      cmd,
    )
  )
    k.opaque.push(`${by} runs editor commands the policy cannot judge`);
}

function vim(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const c = valueAt(args, i, ["c"], ["cmd"]);
    if (c && (a === "-c" || a === "--cmd")) {
      escapeCommand(c[0].replace(/^:/, ""), k, "vim -c");
      i += 1;
      continue;
    }
    if (a.startsWith("+")) escapeCommand(a.slice(1).replace(/^:/, ""), k, "vim +");
    if (/^-[Ssu]$/.test(a) || a === "-W" || a === "-w") {
      k.risky.push(`vim ${a}`);
      i++;
    }
  }
}

function less(args: string[], k: Knowledge): void {
  for (const a of args) {
    if (a.startsWith("+")) escapeCommand(a.replace(/^\+\+?/, ""), k, "less +");
    if (/^--lesskey/.test(a) || a === "-k") k.risky.push(`less ${a}`);
  }
}

function man(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const p = valueAt(args, i, ["P", "H"], ["pager", "html"]);
    if (p) {
      k.risky.push(`man ${args[i]!.split("=")[0]}`);
      k.runs.push({ code: p[0], label: `man ${args[i]!.split("=")[0]}` });
      i += p[1] - 1;
    }
  }
}

// ---- deleting, writing, modes ----------------------------------------------------------------

function rm(args: string[], k: Knowledge, name: string): void {
  const recursive = name === "rm" ? flag(args, "rR", ["recursive"]) : name !== "unlink" && name !== "rmdir";
  del(k, operandsOf(args, name === "shred" ? ["n", "s"] : []), recursive, recursive ? `${name} -r` : name);
}

function copyLike(args: string[], k: Knowledge, name: string): void {
  const withValue = name === "install" ? ["m", "o", "g", "S"] : name === "ln" ? ["S"] : ["S"];
  const { dest, sources } = destination(args, withValue);
  if (dest !== undefined) write(k, [dest], name, name !== "ln");
  if (name === "ln" && flag(args, "s", ["symbolic"]))
    for (const target of dest === undefined ? sources : sources)
      k.effects.push({ kind: "link", path: target, recursive: false, by: "ln -s" });
  if (name === "mv") del(k, sources, true, "mv (its sources)");
}

function modeChange(args: string[], k: Knowledge, name: string): void {
  const ops = operandsOf(args, name === "setfacl" ? ["m", "x", "M", "X"] : []);
  const byReference = args.some((a) => a.startsWith("--reference"));
  const targets = name === "setfacl" || name === "chattr" || byReference ? ops : ops.slice(1);
  const recursive = flag(args, "R", ["recursive"]);
  for (const path of targets)
    k.effects.push({ kind: "mode", path, recursive, by: `${name}${recursive ? " -R" : ""}` });
}

function dd(args: string[], k: Knowledge): void {
  for (const a of args) if (a.startsWith("of=")) write(k, [a.slice(3)], "dd of=");
}

const writesOperands =
  (by: string, withValue: string[] = [], longValue: string[] = []): Analyzer =>
  (args, k) =>
    write(k, operandsOf(args, withValue, longValue), by);

function sortLike(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const o = valueAt(args, i, ["o"], ["output"]);
    if (o) write(k, [o[0]], "sort -o");
  }
}

function unzip(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const d = valueAt(args, i, ["d"], []);
    if (d) write(k, [d[0]], "unzip -d", true);
  }
}

function grep(args: string[], k: Knowledge): void {
  for (let i = 0; i < args.length; i++) {
    const p = valueAt(args, i, [], ["pre"]);
    if (p) {
      k.risky.push("--pre runs a program on every file");
      k.runs.push({ words: [...p[0].split(/\s+/).filter(Boolean), "FILE"], label: "--pre" });
      i += p[1] - 1;
    }
  }
}

/** ed's commands from its standard input: `!cmd` runs cmd, `w FILE` writes FILE. */
function edScript(text: string, k: Knowledge): void {
  for (const line of text.split("\n")) {
    const m = /^\s*[0-9,.$]*\s*(!|w|W|wq)\s*(.*)$/.exec(line);
    if (!m) continue;
    k.risky.push(`ed ${m[1]}`);
    if (m[1] === "!") k.runs.push({ code: m[2]!, label: "ed !" });
    else if (m[2]!.startsWith("!")) k.runs.push({ code: m[2]!.slice(1), label: "ed w !" });
    else if (m[2]) write(k, [m[2]], `ed ${m[1]}`);
  }
}

function scheduler(_args: string[], k: Knowledge, name: string): void {
  k.opaque.push(`${name} schedules commands to run later, outside this command`);
  k.risky.push(name);
}

function perlRubyInPlace(args: string[], k: Knowledge, name: string): void {
  if (!args.some((a) => /^-[a-zA-Z]*i/.test(a))) return;
  k.risky.push(`${name} -i`);
  const ops: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (/^-[a-zA-Z]*[eE]$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    ops.push(a);
  }
  // With -e the code is an option; without it, the first operand is the script.
  write(k, args.some((a) => /^-[a-zA-Z]*[eE]/.test(a)) ? ops : ops.slice(1), `${name} -i`);
}

const ANALYZERS: Record<string, (args: string[], k: Knowledge, name: string) => unknown> = {
  find,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  sed,
  gsed: sed,
  git,
  make,
  gmake: make,
  tar,
  bsdtar: tar,
  gtar: tar,
  rsync,
  ssh,
  scp: ssh,
  sftp: ssh,
  curl,
  wget,
  vim,
  vi: vim,
  nvim: vim,
  view: vim,
  ex: vim,
  vimdiff: vim,
  gvim: vim,
  less,
  more: less,
  most: less,
  man,
  rm,
  rmdir: rm,
  unlink: rm,
  shred: rm,
  rimraf: rm,
  del: rm,
  "del-cli": rm,
  trash: rm,
  "trash-put": rm,
  srm: rm,
  wipe: rm,
  cp: copyLike,
  mv: copyLike,
  install: copyLike,
  ln: copyLike,
  chmod: modeChange,
  chown: modeChange,
  chgrp: modeChange,
  chattr: modeChange,
  setfacl: modeChange,
  dd,
  tee: writesOperands("tee"),
  truncate: writesOperands("truncate", ["s", "r"], ["size", "reference"]),
  sponge: writesOperands("sponge"),
  fallocate: writesOperands("fallocate", ["l", "o"]),
  sort: sortLike,
  unzip,
  grep,
  egrep: grep,
  rg: grep,
  at: scheduler,
  batch: scheduler,
  crontab: (args, k, name) => {
    if (args.some((a) => a === "-l")) return;
    scheduler(args, k, name);
  },
  perl: perlRubyInPlace,
  ruby: perlRubyInPlace,
};

/** Programs that never run their arguments as a command (no scan for hidden commands). */
const INERT = new Set(
  "echo printf cat ls head tail wc sort uniq cut tr diff cmp file stat du df test [ [[ true false jq yq tree basename dirname realpath readlink date sleep seq column printenv hash type which whereis whatis apropos help info command_not_found_handle pwd mkdir touch npm pnpm yarn pip pip3 cargo go mvn gradle dotnet rustc gcc g++ clang javac tsc node python python3 pytest jest vitest mocha eslint prettier biome ruff black mypy grep rg egrep fgrep git gh export declare set shopt unset alias unalias history source . exit return break continue wait jobs fg bg cd pushd popd read local readonly typeset let shift".split(
    " ",
  ),
);

/** What a program does beyond its name (see the top of this file). */
export function knowledgeOf(name: string, args: string[], stdin?: string): Knowledge & { cwd?: string } {
  const k: Knowledge & { cwd?: string } = {
    effects: [],
    runs: [],
    opaque: [],
    risky: [],
    known: INERT.has(name),
  };
  if ((name === "ed" || name === "red") && stdin !== undefined) edScript(stdin, k);
  const analyze = ANALYZERS[name];
  if (analyze) {
    // ssh runs its remaining arguments on the other host: they are still looked at.
    k.known = name !== "ssh";
    const extra = analyze(args, k, name) as { cwd?: string } | undefined;
    if (extra?.cwd !== undefined) k.cwd = extra.cwd;
  }
  return k;
}

/** Programs whose appearance among another program's arguments means it probably runs them. */
export const DANGEROUS_HEADS = new Set(
  "rm rmdir shred unlink dd mkfs wipefs blkdiscard chmod chown chgrp kill killall killall5 pkill shutdown reboot halt poweroff truncate find xargs sudo su doas eval sh bash dash zsh ksh fish mv tee curl wget nc ncat".split(
    " ",
  ),
);
