// Code of other languages given on the command line (`python3 -c`, `node -e`, `perl -e`,
// `ruby -e`, `php -r`, a here-document into python): the policy does not judge those languages,
// but it reads the calls that start programs (`os.system("…")`, `execSync("…")`, `system(…)`,
// backticks) — their string is judged as shell code or an argument list —, delete files
// (`shutil.rmtree("/")`) or open them for writing, and says when such a call's argument is not a
// literal, or the code evaluates more code from a string (opaque: the policy asks).
import type { Knowledge } from "./programs.js";
import { UNKNOWN } from "./shell-parse.js";

/** Inline interpreter code: the option that carries it, per interpreter family. */
const INLINE: [RegExp, RegExp][] = [
  [/^(python[0-9.]*|pypy[0-9.]*)$/, /^-[a-zA-Z]*c$/],
  [/^(node|nodejs|bun)$/, /^(-[a-zA-Z]*[ep]|--eval|--print)$/],
  [/^perl$/, /^-[a-zA-Z]*[eE]$/],
  [/^ruby$/, /^-[a-zA-Z]*e$/],
  [/^php$/, /^-[a-zA-Z]*r$/],
  [/^lua[0-9.]*$/, /^-e$/],
  [/^osascript$/, /^-e$/],
];
/** Calls in inline code that start programs (their string arguments are shell code or argv). */
const SPAWNS =
  /\b(os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|subprocess\.\w+|pty\.spawn|commands\.getoutput|child_process|execSync|execFileSync|execFile|spawnSync|spawn|exec|system|shell_exec|passthru|popen|proc_open|IO\.popen|Open3\.\w+|Kernel\.\w+|os\.execute|io\.popen|Deno\.Command|Deno\.run|Bun\.spawn|do shell script|qx)\b\s*(\(|\s)/g;
/** Calls in inline code that delete files or folders. */
const DELETES =
  /\b(shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|\.unlink|rmSync|rmdirSync|unlinkSync|fs\.rm|fs\.promises\.rm|rimraf|FileUtils\.rm\w*|File\.delete|Dir\.delete|unlink|rmdir|Deno\.remove|rmtree|remove_tree|rm_rf|rm_r|remove_dir_all|RemoveAll)\b\s*[(\s]/g;
/** Inline code that runs more code of its own language from a string (opaque). */
const EVALS =
  /\b(exec|eval|compile|__import__\(\s*['"]base64|Function|vm\.run\w*|instance_eval|class_eval)\s*\(/;
/** Inline code that opens a file for writing, with its path as a literal. */
const FILE_WRITES =
  /\bopen\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*,\s*['"][wax]|\b(?:writeFileSync|appendFileSync|writeFile|appendFile|File\.write|IO\.write)\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g;
const STRING_LIT = /"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'/;

/** The inline code an interpreter runs, when its options or a here-document give it. */
function inlineCodeOf(name: string, args: string[], stdin?: string): string | undefined {
  if (name === "deno" && args[0] === "eval") return args[1];
  for (const [prog, opt] of INLINE) {
    if (!prog.test(name)) continue;
    const k = args.findIndex((a) => opt.test(a));
    if (k !== -1) return args[k + 1];
    if (stdin !== undefined && !args.some((a) => !a.startsWith("-") && a !== "-")) return stdin;
  }
  return undefined;
}

/** True for an interpreter that runs a script file given as its operand (not -c/-e/-m code). */
export function runsScriptOperand(name: string, args: string[]): boolean {
  return (
    INLINE.some(([prog]) => prog.test(name)) &&
    !INLINE.some(([prog, opt]) => prog.test(name) && args.some((a) => opt.test(a) || a === "-m"))
  );
}

/** What inline code does that the policy can tell; undefined when there is no inline code. */
export function inlineCodeKnowledge(name: string, args: string[], stdin?: string): Knowledge | undefined {
  const code = inlineCodeOf(name, args, stdin);
  if (code === undefined) return undefined;
  const k: Knowledge = { effects: [], runs: [], opaque: [], risky: [], known: true };
  if (code.includes(UNKNOWN)) {
    k.opaque.push(`${name} runs code only known at run time`);
    return k;
  }
  const family = name.replace(/[0-9.]+$/, "");
  const spawns = [...code.matchAll(SPAWNS)].filter(
    (m) => !((family === "python" || family === "node") && m[1] === "exec"),
  );
  const deletes = [...code.matchAll(DELETES)];
  const backticks = family === "perl" || family === "ruby" ? [...code.matchAll(/`([^`]*)`/g)] : [];
  for (const m of code.matchAll(FILE_WRITES)) {
    const lit = STRING_LIT.exec(m[1] ?? m[2] ?? "");
    if (lit) k.effects.push({ kind: "write", path: unquote(lit), recursive: false, by: `${name} open()` });
  }
  if (EVALS.test(code)) {
    k.opaque.push(`${name} code evaluates more code from a string`);
    k.risky.push(`${name} code evaluates code`);
  }
  if (spawns.length === 0 && deletes.length === 0 && backticks.length === 0) return k;
  k.risky.push(`${name} code starts programs or deletes files`);
  let unread = false;
  for (const m of spawns) {
    const label = `${name} ${m[1]}`;
    const after = code.slice((m.index ?? 0) + m[0].length);
    const list = /^\s*\[([^\]]*)\]/.exec(after);
    if (list) {
      const words = [...list[1]!.matchAll(new RegExp(STRING_LIT, "g"))].map((w) => unquote(w));
      if (words.length) {
        k.runs.push({ words, label });
        continue;
      }
    }
    const lit = /^\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')\s*([,)]|$)/.exec(after);
    if (!lit) {
      unread = true;
      continue;
    }
    const s = unquote(lit);
    // spawn("rm", ["-rf", "/"]) and execFile take a program and its arguments, not shell code.
    const argv = /^\s*["'][^"']*["']\s*,\s*\[/.test(after) || /spawn|execFile/.test(m[1]!);
    k.runs.push(argv ? { words: [s, ...restStrings(after)], label } : { code: s, label });
  }
  for (const m of backticks) k.runs.push({ code: m[1]!, label: `${name} \`…\`` });
  for (const m of deletes) {
    const after = code.slice((m.index ?? 0) + m[0].length);
    const lit = STRING_LIT.exec(after);
    if (lit && /^\s*["']/.test(after))
      k.effects.push({ kind: "delete", path: unquote(lit), recursive: true, by: `${name} ${m[1]}` });
    else unread = true;
  }
  if (unread) k.opaque.push(`${name} code starts programs or deletes files the policy cannot read`);
  return k;
}

function unquote(m: RegExpExecArray | RegExpMatchArray): string {
  return (m[1] ?? m[2] ?? "").replace(/\\(.)/g, "$1");
}

function restStrings(after: string): string[] {
  const list = /\[([^\]]*)\]/.exec(after);
  return list ? [...list[1]!.matchAll(new RegExp(STRING_LIT, "g"))].map((w) => unquote(w)) : [];
}
