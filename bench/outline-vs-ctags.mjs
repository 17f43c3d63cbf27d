// How many of the functions Universal Ctags lists in a real JavaScript project the outline
// (code_outline) finds too. The project is the `express` package's lib/ from npm, installed into
// a temporary folder; ctags is Debian's `universal-ctags`. A function counts as found when the
// outline has a symbol whose name ends with ctags' name (`app.listen` for `listen`) starting on
// the same line. Prints the misses, so a figure can be checked against the raw output.
//   node bench/outline-vs-ctags.mjs [--package express@5.1.0] [--keep]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseOutline } from "../packages/agent/dist/outline/index.js";

const args = process.argv.slice(2);
const pkg = args.includes("--package") ? args[args.indexOf("--package") + 1] : "express@5.1.0";
const name = pkg.replace(/@[^@/]*$/, "");
const dir = mkdtempSync(join(tmpdir(), "hands-outline-bench-"));
try {
  execFileSync(
    "npm",
    ["install", "--prefix", dir, "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", pkg],
    {
      stdio: "ignore",
    },
  );
  const lib = join(dir, "node_modules", name, "lib");
  const ctagsVersion = execFileSync("ctags", ["--version"], { encoding: "utf8" }).split("\n")[0];
  const raw = execFileSync(
    "ctags",
    ["-R", "--languages=JavaScript", "-x", "--_xformat=%K\t%N\t%n\t%F", lib],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  // ctags may tag one function twice (with and without its scope, or under the name it is
  // assigned to and its own name): one function per line, found if any of its names matches.
  const wanted = new Map();
  const kinds = new Map();
  for (const line of raw.trim().split("\n")) {
    const [kind, tag, lineNo, file] = line.split("\t");
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (!["function", "method", "generator"].includes(kind) || tag.startsWith("AnonymousFunction")) continue;
    const key = `${relative(lib, file)}:${lineNo}`;
    const w = wanted.get(key) ?? { file: relative(lib, file), line: Number(lineNo), names: new Set() };
    w.names.add(tag);
    wanted.set(key, w);
  }

  const ours = new Map(); // file -> [{name, line}]
  const walk = (d) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".js")) ours.set(relative(lib, p), p);
    }
  };
  walk(lib);
  const symbols = new Map();
  let ourTotal = 0;
  for (const [rel, abs] of ours) {
    const out = [];
    const flat = (list) => {
      for (const s of list) {
        out.push({ name: s.name, line: s.startLine, kind: s.kind });
        if (s.children) flat(s.children);
      }
    };
    flat((await parseOutline(readFileSync(abs, "utf8"), "javascript")).symbols);
    ourTotal += out.length;
    symbols.set(rel, out);
  }
  const lastPart = (n) => n.split(".").at(-1);
  const misses = [];
  let hit = 0;
  for (const w of wanted.values()) {
    const found = (symbols.get(w.file) ?? []).some((s) => s.line === w.line && w.names.has(lastPart(s.name)));
    if (found) hit++;
    else misses.push(w);
  }
  console.log(`${pkg} lib/: ${ours.size} files; ${ctagsVersion}`);
  console.log(`ctags tags by kind: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  console.log(
    `functions ctags lists (function/method/generator, named, one per line): ${wanted.size}; the outline finds ${hit} = ${((100 * hit) / wanted.size).toFixed(1)} %`,
  );
  console.log(`outline symbols in all: ${ourTotal}`);
  for (const m of misses) console.log(`  missed: ${m.file}:${m.line} ${[...m.names].join(" / ")}`);
} finally {
  if (!args.includes("--keep")) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}
