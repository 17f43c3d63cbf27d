// How many of the functions, classes and methods Universal Ctags lists in real JavaScript code
// the outline (code_outline) finds too, and which definitions the outline reports that ctags
// does not. The code bases are packages already on disk (node_modules of this repository), or
// any folder given with --dir; ctags is Debian's `universal-ctags`.
//   A ctags definition counts as found when the outline has a symbol starting on the same line
// whose name ends with ctags' name (`app.listen` for `listen`). An outline definition (function,
// class, method) that ctags has no tag for on its line is printed as "extra", with the source
// line, so each can be checked by hand; the rule that sorts them is in `extraReason`.
//   node bench/outline-vs-ctags.mjs [--dir node_modules/pg/lib ...] [--verbose]
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { parseOutline } from "../packages/agent/dist/outline/index.js";

const args = process.argv.slice(2);
const dirs = [];
for (let i = 0; i < args.length; i++) if (args[i] === "--dir") dirs.push(args[++i]);
const verbose = args.includes("--verbose");
const DEFAULT_DIRS = [
  "node_modules/express/lib",
  "node_modules/pg/lib",
  "node_modules/readable-stream/lib",
  "node_modules/protobufjs/src",
  "node_modules/semver",
  "node_modules/jszip/lib",
];
const JS = /\.(c|m)?jsx?$/;
const WANTED_KINDS = new Set(["function", "method", "generator", "class", "getter", "setter"]);
const OUR_KINDS = new Set(["function", "method", "class"]);
const ctagsVersion = execFileSync("ctags", ["--version"], { encoding: "utf8" }).split("\n")[0];

function jsFiles(root) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (e !== "node_modules") walk(p);
      } else if (JS.test(p)) out.push(p);
    }
  };
  walk(root);
  return out;
}

function ctagsOf(files) {
  const raw = execFileSync(
    "ctags",
    [
      "--languages=JavaScript",
      "--map-JavaScript=+.cjs",
      "--map-JavaScript=+.mjs",
      "-x",
      "--_xformat=%K\t%N\t%n\t%F",
      ...files,
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 << 20 },
  );
  return raw
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind, tag, line, file] = l.split("\t");
      return { kind, tag, line: Number(line), file };
    });
}

const lastPart = (n) =>
  n
    .split(".")
    .at(-1)
    .replace(/^\[|\]$/g, "")
    .replace(/^["']|["']$/g, "");

/** Why an outline definition ctags does not tag is still a definition (or "" when it is not sure). */
function extraReason(s, text) {
  const src = text.trim();
  if (/\bfunction\s*\*?\s*[\w$]+\s*\(/.test(src) && s.kind === "function")
    return "named function expression/declaration";
  if (/^(static\s+)?(async\s+)?(get |set )?\*?\s*[\w$#]+\s*\(.*\)\s*\{/.test(src)) return "method definition";
  if (/=\s*(async\s+)?(function\b|\(?[\w$,\s]*\)?\s*=>)/.test(src)) return "function assigned to a name";
  if (/:\s*(async\s+)?(function\b|\(?[\w$,\s]*\)?\s*=>)/.test(src)) return "function-valued property";
  if (/\bclass\b/.test(src)) return "class";
  return "";
}

/**
 * Why a ctags tag is not a function, class or method definition ("" when it is one): ctags'
 * JavaScript parser tags a call through a prototype (`Base.prototype.m.call(this)`) as a method,
 * an object literal (`var opts = {…}`) as a class, and a member set to null as a method.
 */
function notADefinition(t, text) {
  const line = text.trim();
  const name = t.tag.replace(/[$]/g, "\\$&");
  if (new RegExp(`\\b${name}\\s*\\.\\s*(call|apply|bind)\\s*\\(`).test(line))
    return "a call through the name";
  if (/\.(call|apply)\s*\(/.test(line) && !/\bfunction\b|=>|[^=!<>]=[^=]/.test(line))
    return "a call through a prototype";
  if (/^return\b/.test(line) && !/\bfunction\b|=>|\bclass\b/.test(line)) return "a return statement";
  if (/^case\b/.test(line)) return "a case label";
  if (t.kind === "class" && /\.prototype\s*=\s*(?!\{)/.test(line)) return "a prototype set to another object";
  if (!/[=:(]|\bclass\b|\bfunction\b/.test(line)) return "no assignment, property or declaration on the line";
  if (/^[\w$.]+\s*\(/.test(line) && !/\)\s*\{/.test(line)) return "a call statement";
  if (t.kind === "class" && /(=|:)\s*(\{|Object\.create\()/.test(line) && !/\bclass\b/.test(line))
    return "an object literal (ctags calls it a class)";
  if (/=\s*(null|undefined|true|false|\d+|["'`])\s*;?$/.test(line)) return "set to a literal, not a function";
  return "";
}

let allWanted = 0;
let allRaw = 0;
let allRawHit = 0;
let allHit = 0;
for (const dir of dirs.length > 0 ? dirs : DEFAULT_DIRS) {
  const files = jsFiles(dir);
  const tags = ctagsOf(files);
  const wanted = new Map();
  const excluded = new Map();
  const tagLines = new Set();
  const lines = new Map(files.map((f) => [f, readFileSync(f, "utf8").split("\n")]));
  for (const t of tags) {
    tagLines.add(`${t.file}:${t.line}`);
    if (!WANTED_KINDS.has(t.kind) || t.tag.startsWith("AnonymousFunction")) continue;
    const why = notADefinition(t, lines.get(t.file)?.[t.line - 1] ?? "");
    if (why) {
      excluded.set(`${t.file}:${t.line}`, { ...t, why });
      continue;
    }
    const key = `${t.file}:${t.line}`;
    const w = wanted.get(key) ?? { file: t.file, line: t.line, names: new Set(), kinds: new Set() };
    w.names.add(t.tag);
    w.kinds.add(t.kind);
    wanted.set(key, w);
  }
  const symbols = new Map();
  const sources = new Map();
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    sources.set(f, text.split("\n"));
    const out = [];
    const flat = (list) => {
      for (const s of list) {
        out.push(s);
        if (s.children) flat(s.children);
      }
    };
    flat((await parseOutline(text, "javascript")).symbols);
    symbols.set(f, out);
  }
  // ctags names a member with a computed or reserved-word key by its object (`app` for
  // `app[method] = function`, `res` for `res.get = function`): the outline's `app[method]`.
  const matches = (s, w) =>
    s.startLine === w.line &&
    [...w.names].some(
      (n) =>
        lastPart(s.name) === n ||
        s.name === n ||
        s.name.startsWith(`${n}.`) ||
        s.name.startsWith(`${n}[`) ||
        s.name.includes(`.${n}.`),
    );
  let hit = 0;
  const misses = [];
  for (const w of wanted.values()) {
    if ((symbols.get(w.file) ?? []).some((s) => matches(s, w))) hit++;
    else misses.push(w);
  }
  const rawTotal = wanted.size + [...excluded.keys()].filter((k) => !wanted.has(k)).length;
  let rawHit = hit;
  for (const [k, t] of excluded) {
    if (wanted.has(k)) continue;
    if ((symbols.get(t.file) ?? []).some((s) => matches(s, { line: t.line, names: new Set([t.tag]) })))
      rawHit++;
  }
  allRaw += rawTotal;
  allRawHit += rawHit;
  const extras = [];
  for (const [f, list] of symbols) {
    for (const s of list) {
      if (!OUR_KINDS.has(s.kind) || tagLines.has(`${f}:${s.startLine}`)) continue;
      const text = `${sources.get(f)[s.startLine - 1] ?? ""} ${s.signature}`;
      extras.push({ file: f, s, text, reason: extraReason(s, text) });
    }
  }
  allWanted += wanted.size;
  allHit += hit;
  const byKind = {};
  for (const w of wanted.values()) for (const k of w.kinds) byKind[k] = (byKind[k] ?? 0) + 1;
  console.log(`\n${dir}: ${files.length} files (${ctagsVersion})`);
  console.log(
    `  ctags definitions (${Object.entries(byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")}), one per line: ${wanted.size}`,
  );
  console.log(`  the outline finds ${hit} = ${((100 * hit) / wanted.size).toFixed(1)} %`);
  console.log(
    `  (ctags' tags that are not definitions, left out: ${rawTotal - wanted.size}; counting them: ${rawHit} / ${rawTotal} = ${((100 * rawHit) / rawTotal).toFixed(1)} %)`,
  );
  if (verbose)
    for (const t of excluded.values())
      console.log(
        `  not a definition: ${relative(dir, t.file)}:${t.line} ${t.kind} ${t.tag} [${t.why}]   | ${(lines.get(t.file)?.[t.line - 1] ?? "").trim().slice(0, 100)}`,
      );
  for (const m of misses) {
    const text = (sources.get(m.file)?.[m.line - 1] ?? "").trim().slice(0, 100);
    console.log(`  missed: ${relative(dir, m.file)}:${m.line} ${[...m.names].join(" / ")}   | ${text}`);
  }
  const unsure = extras.filter((e) => !e.reason);
  console.log(
    `  outline definitions ctags has no tag on that line: ${extras.length} (${unsure.length} not recognised by the rule)`,
  );
  for (const e of verbose ? extras : unsure)
    console.log(
      `  extra: ${relative(dir, e.file)}:${e.s.startLine} ${e.s.kind} ${e.s.name} [${e.reason || "?"}]   | ${e.text.trim().slice(0, 100)}`,
    );
}
console.log(
  `\nall: ${allHit} / ${allWanted} = ${((100 * allHit) / allWanted).toFixed(1)} % (with ctags' non-definitions: ${allRawHit} / ${allRaw} = ${((100 * allRawHit) / allRaw).toFixed(1)} %)`,
);
