#!/usr/bin/env node
// Diagnostics after edits, measured on seeded bugs in real files: TypeScript sources of packages
// under node_modules and Python modules under /usr/lib/python3/dist-packages, copied into a
// bench workspace. Each bug is made by a rule (below) and written with the real write_file tool,
// whose diagnostics come from the real servers in a bubblewrap sandbox (--sandbox local: a
// plain process). Then the edit is reverted (a clean edit: it must report nothing), and a
// comment line is inserted (another clean edit, which shifts every line below it).
// Reported: the fraction of bugs whose error the tool result names in the same step (an error on
// a line the edit changed), false reports on clean edits, and the time the check adds to an edit.
// Each file is first read with the real read_file tool, as an agent reads before it edits (the
// read hands the file to its server in the background); --no-read skips that.
//   node bench/diagnostics.mjs [--files 40] [--sandbox bwrap|docker|local] [--wait-ms MS (default: each server's own)] [--no-read]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { Diagnostics, readFileTool, writeFileTool } from "../packages/agent/dist/index.js";
import { BwrapSandbox, DockerSandbox, LocalSandbox } from "../packages/sandbox/dist/index.js";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "40" },
    sandbox: { type: "string", default: "bwrap" },
    // Default: each server's own budget (ServerSpec.waitMs: tsserver 1.5 s, pyright 5 s).
    "wait-ms": { type: "string" },
    "no-read": { type: "boolean", default: false },
  },
});
const FILES = Number(values.files);

/** A deterministic pick of `n` of `list` (hash order), so runs are comparable. */
function pick(list, n) {
  const h = (s) => [...s].reduce((a, c) => (Math.imul(a, 31) + c.charCodeAt(0)) >>> 0, 7);
  return [...list].sort((a, b) => h(a) - h(b)).slice(0, n);
}

function find(root, args) {
  try {
    return execFileSync("find", [root, ...args], { encoding: "utf8", maxBuffer: 64 << 20 })
      .split("\n")
      .filter(Boolean);
  } catch (e) {
    return String(e.stdout ?? "")
      .split("\n")
      .filter(Boolean);
  }
}

const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// --- The rules. Each returns the mutated text and the 0-based line it changed, or undefined. ---

/** Lines that are whole statements (a place to insert one at the same indentation). */
function statementLines(lines, re) {
  return lines.map((l, i) => [l, i]).filter(([l]) => re.test(l));
}

const TS = {
  "type error": (text, n) => {
    const lines = text.split("\n");
    const spots = statementLines(lines, /^\s*(const|let) \w+ = [^;]*;\s*$/);
    if (!spots.length) return undefined;
    const [line, i] = spots[n % spots.length];
    const indent = line.match(/^\s*/)[0];
    lines.splice(i + 1, 0, `${indent}const seeded${n}: number = "not a number";`);
    return { text: lines.join("\n"), line: i + 1 };
  },
  "undefined name": (text, n) => {
    const names = [...text.matchAll(/\bfunction (\w{3,})\s*\(/g)].map((m) => m[1]);
    for (const name of names.slice(n % Math.max(1, names.length)).concat(names)) {
      const call = new RegExp(`(?<![\\w.]|function )${reEscape(name)}\\(`, "g");
      const m = [...text.matchAll(call)].find(
        (x) => !/function\s+$/.test(text.slice(Math.max(0, x.index - 12), x.index)),
      );
      if (!m) continue;
      const out = `${text.slice(0, m.index)}${name}Missing(${text.slice(m.index + name.length + 1)}`;
      return { text: out, line: text.slice(0, m.index).split("\n").length - 1 };
    }
    return undefined;
  },
  "wrong arity": (text, n) => {
    // A local function without rest parameters or overloads, called with one argument too many.
    const decls = [...text.matchAll(/\bfunction (\w{3,})\s*(<[^>]*>)?\(([^)]*)\)/g)].filter(
      (m) =>
        !m[3].includes("...") &&
        [...text.matchAll(new RegExp(`\\bfunction ${reEscape(m[1])}\\b`, "g"))].length === 1,
    );
    for (const d of decls.slice(n % Math.max(1, decls.length)).concat(decls)) {
      const call = new RegExp(`(?<![\\w.])${reEscape(d[1])}\\(`, "g");
      const m = [...text.matchAll(call)].find(
        (x) =>
          x.index !== d.index + "function ".length &&
          !/function\s*$/.test(text.slice(Math.max(0, x.index - 10), x.index)),
      );
      if (!m) continue;
      const at = m.index + d[1].length + 1;
      const out = `${text.slice(0, at)}undefined as never, ${text.slice(at)}`;
      return { text: out, line: text.slice(0, m.index).split("\n").length - 1 };
    }
    return undefined;
  },
};

const PY = {
  "type error": (text, n) => {
    const lines = text.split("\n");
    const spots = statementLines(lines, /^\s*\w+ = [^\\([{]*$/);
    if (!spots.length) return undefined;
    const [line, i] = spots[n % spots.length];
    const indent = line.match(/^\s*/)[0];
    lines.splice(i + 1, 0, `${indent}seeded${n} = "text" + 1`);
    return { text: lines.join("\n"), line: i + 1 };
  },
  "undefined name": (text, n) => {
    const names = [...text.matchAll(/^def (\w{3,})\(/gm)].map((m) => m[1]);
    for (const name of names.slice(n % Math.max(1, names.length)).concat(names)) {
      const m = [...text.matchAll(new RegExp(`(?<![\\w.])${reEscape(name)}\\(`, "g"))].find(
        (x) => !/def\s+$/.test(text.slice(Math.max(0, x.index - 6), x.index)),
      );
      if (!m) continue;
      const out = `${text.slice(0, m.index)}${name}_missing(${text.slice(m.index + name.length + 1)}`;
      return { text: out, line: text.slice(0, m.index).split("\n").length - 1 };
    }
    return undefined;
  },
  "wrong arity": (text, n) => {
    // A module-level function with plain positional parameters (no defaults, *args, **kwargs).
    const decls = [...text.matchAll(/^def (\w{3,})\(([^)]*)\)/gm)].filter((m) => !/[=*]/.test(m[2]));
    for (const d of decls.slice(n % Math.max(1, decls.length)).concat(decls)) {
      const m = [...text.matchAll(new RegExp(`(?<![\\w.])${reEscape(d[1])}\\(`, "g"))].find(
        (x) => !/def\s+$/.test(text.slice(Math.max(0, x.index - 6), x.index)),
      );
      if (!m) continue;
      const at = m.index + d[1].length + 1;
      const out = `${text.slice(0, at)}None, ${text.slice(at)}`;
      return { text: out, line: text.slice(0, m.index).split("\n").length - 1 };
    }
    return undefined;
  },
};

/** A clean edit: a comment line after a statement line (shifts everything below). */
function commentEdit(text, comment) {
  const lines = text.split("\n");
  const i = lines.findIndex((l, j) => j > lines.length / 3 && l.trim() === "");
  const at = i === -1 ? 0 : i;
  lines.splice(at, 0, `${comment} reviewed`);
  return lines.join("\n");
}

// --- The corpus ---
const ws = realpathSync(mkdtempSync(join(tmpdir(), "hands-bench-diag-")));
mkdirSync(join(ws, "ts"));
mkdirSync(join(ws, "py"));
writeFileSync(
  join(ws, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, target: "es2022", module: "nodenext" },
  }),
);
const tsFiles = pick(
  find("node_modules", [
    "-path",
    "*/src/*",
    "-name",
    "*.ts",
    "!",
    "-name",
    "*.d.ts",
    "-size",
    "+2k",
    "-size",
    "-30k",
  ]),
  FILES * 3,
);
const pyFiles = pick(
  find("/usr/lib/python3/dist-packages", ["-name", "*.py", "-size", "+2k", "-size", "-30k"]),
  FILES * 3,
);

function corpus(files, rules, dir, ext) {
  const cases = [];
  let n = 0;
  for (const src of files) {
    if (cases.length >= FILES * 3) break;
    const text = readFileSync(src, "utf8");
    const rel = `${dir}/${String(n).padStart(3, "0")}_${basename(src, ext).replace(/[^\w.-]/g, "_")}${ext}`;
    const seeded = Object.entries(rules)
      .map(([rule, f]) => ({ rule, ...(f(text, n) ?? {}) }))
      .filter((c) => c.text);
    if (seeded.length === 0) continue;
    writeFileSync(join(ws, rel), text);
    for (const s of seeded) cases.push({ src, rel, original: text, ...s });
    n++;
  }
  return cases.slice(0, FILES * 3);
}
const cases = [...corpus(tsFiles, TS, "ts", ".ts"), ...corpus(pyFiles, PY, "py", ".py")];

// --- Run ---
const sandbox =
  values.sandbox === "local"
    ? new LocalSandbox({ workspace: ws })
    : values.sandbox === "docker"
      ? await DockerSandbox.create({ workspace: ws })
      : await BwrapSandbox.create({ workspace: ws });
const diagnostics = new Diagnostics({
  sandbox: async () => sandbox,
  startWaitMs: 120_000,
  ...(values["wait-ms"] ? { waitMs: Number(values["wait-ms"]) } : {}),
});
const ctx = {
  workspace: ws,
  readRoots: [],
  sandbox: async () => sandbox,
  signal: new AbortController().signal,
  diagnostics,
};
const write = async (path, content) => {
  const r = await writeFileTool.execute({ path, content }, ctx);
  return r.data?.diagnostics;
};

const loadStart = readFileSync("/proc/loadavg", "utf8").trim();
// The first edit per server starts it and loads the project: timed apart, not in the figures.
const cold = {};
for (const ext of ["ts", "py"]) {
  const c = cases.find((x) => x.rel.startsWith(ext));
  if (!c) continue;
  const t = performance.now();
  const d = await write(c.rel, `${c.original}\n`);
  await write(c.rel, c.original);
  cold[ext] = { ms: Math.round(performance.now() - t), status: d?.status };
}

const rows = [];
const read = new Set();
for (const c of cases) {
  if (!values["no-read"] && !read.has(c.rel)) {
    read.add(c.rel);
    await readFileTool.execute({ path: c.rel }, ctx);
  }
  const bug = await write(c.rel, c.text);
  const caught = bug?.status === "ok" && bug.errors.some((e) => Math.abs(e.line - 1 - c.line) <= 1);
  const revert = await write(c.rel, c.original);
  const comment = await write(c.rel, commentEdit(c.original, c.rel.endsWith(".py") ? "#" : "//"));
  await write(c.rel, c.original);
  rows.push({
    lang: c.rel.slice(0, 2),
    rule: c.rule,
    file: c.src,
    status: bug?.status,
    caught,
    reported: bug?.errors?.map((e) => `${e.line}: ${e.message}`).slice(0, 2),
    bugMs: bug?.durationMs,
    clean: [revert, comment].map((d) => ({
      status: d?.status,
      total: d?.total ?? 0,
      ms: d?.durationMs,
      first: d?.errors?.[0],
    })),
  });
}
await diagnostics.close();
await sandbox.destroy();
const loadEnd = readFileSync("/proc/loadavg", "utf8").trim();

const pct = (xs, p) => {
  const s = xs.filter((x) => typeof x === "number").sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : undefined;
};
const summary = {};
for (const lang of ["ts", "py", "all"]) {
  const r = rows.filter((x) => lang === "all" || x.lang === lang);
  const cleans = r.flatMap((x) => x.clean);
  summary[lang] = {
    bugs: r.length,
    caught: r.filter((x) => x.caught).length,
    pending: r.filter((x) => x.status === "pending").length,
    recall: r.length ? +(r.filter((x) => x.caught).length / r.length).toFixed(3) : null,
    cleanEdits: cleans.length,
    falseReports: cleans.filter((x) => x.total > 0).length,
    cleanPending: cleans.filter((x) => x.status !== "ok").length,
    msP50: pct([...r.map((x) => x.bugMs), ...cleans.map((x) => x.ms)], 50),
    msP95: pct([...r.map((x) => x.bugMs), ...cleans.map((x) => x.ms)], 95),
  };
}
const byRule = {};
for (const r of rows) {
  const k = `${r.lang} ${r.rule}`;
  byRule[k] ??= { bugs: 0, caught: 0 };
  byRule[k].bugs++;
  if (r.caught) byRule[k].caught++;
}
const out = {
  sandbox: values.sandbox,
  waitMs: values["wait-ms"] ? Number(values["wait-ms"]) : "per server (tsserver 1500, pyright 5000)",
  readFirst: !values["no-read"],
  load: { start: loadStart, end: loadEnd },
  cold,
  summary,
  byRule,
};
console.log(JSON.stringify(out, null, 2));
const missed = rows.filter((r) => !r.caught).slice(0, 8);
if (missed.length)
  console.log(
    "missed (first 8):",
    JSON.stringify(
      missed.map((m) => ({ rule: m.rule, file: m.file, status: m.status, reported: m.reported })),
      null,
      1,
    ),
  );
const falses = rows.filter((r) => r.clean.some((c) => c.total > 0)).slice(0, 5);
if (falses.length)
  console.log(
    "false reports (first 5):",
    JSON.stringify(
      falses.map((f) => ({ file: f.file, clean: f.clean })),
      null,
      1,
    ),
  );
rmSync(ws, { recursive: true, force: true });
