// Does the repository map name the files a real commit changed? For each commit of a real
// history, the parent's tree is the workspace and the commit message the query; the map within
// 1,000 and 2,000 tokens is made, and its file recall (changed files it names / changed files
// that existed in the parent) is set against plain BM25 over the files' paths and contents,
// within the same budget: (a) BM25's ranked paths, one per line; (b) BM25's ranking rendered
// the way the map is (files with their definitions). Nobody wrote these commits for the test.
//   The parent trees are checked out in a temporary clone (`git clone --shared --no-checkout`:
// the source repository is only read), one after the other, so the index re-parses only the
// files a checkout changed, as it would in a session.
//   Then the build time of a 5,000-file tree (source files copied from node_modules): the first
// map without a saved index, the first map of a next session (index loaded from disk), and an
// edit with the real write_file tool followed by the next map (20 edits), and a map after a command.
//   node bench/repo-map.mjs [--repo /work/main] [--repo /work/.mirror/expressjs+express/repo]
//        [--commits 60] [--budgets 1000,2000] [--no-build | --no-history] [--build-files 5000] [--show]
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { languageForPath } from "../packages/agent/dist/outline/index.js";
import {
  buildRepoMap,
  MAP_FRESH_FOR_MS,
  markWorkspaceChanged,
  RepoIndex,
  renderMap,
  sharedIndex,
  tagsByFile,
} from "../packages/agent/dist/repo-map/index.js";
import { MAP_CHARS_PER_TOKEN } from "../packages/agent/dist/repo-map/render.js";
import { wordsIn } from "../packages/agent/dist/repo-map/words.js";
import { TASK_MAP_PARSE_SHARE, TASK_MAP_TIMEOUT_MS } from "../packages/agent/dist/task-map.js";
import { writeFileTool } from "../packages/agent/dist/tools/write-file.js";

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const repos = [];
for (let i = 0; i < args.length; i++) if (args[i] === "--repo") repos.push(args[++i]);
if (repos.length === 0) repos.push("/work/main", "/work/.mirror/expressjs+express/repo");
const commitsWanted = Number(opt("--commits", "60"));
const budgets = opt("--budgets", "1000,2000").split(",").map(Number);
const show = args.includes("--show");
const git = (dir, ...a) => execFileSync("git", ["-C", dir, ...a], { encoding: "utf8", maxBuffer: 256 << 20 });
const scratch = mkdtempSync(join(tmpdir(), "hands-repomap-bench-"));
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

// ---------------------------------------------------------------------------------------------
// BM25 over paths and contents (k1 1.2, b 0.75), the same words as the map (wordsIn).

const MAX_DOC_BYTES = 512 * 1024;
class Bm25 {
  docs = new Map(); // path -> { blob, tf: Map, len }
  cache = new Map(); // blob -> { tf, len }
  update(dir, tree) {
    this.docs.clear();
    for (const [path, blob] of tree) {
      let doc = this.cache.get(blob);
      if (!doc) {
        let text = "";
        try {
          const st = statSync(join(dir, path));
          if (st.isFile() && st.size <= MAX_DOC_BYTES) text = readFileSync(join(dir, path), "utf8");
        } catch {}
        if (text.slice(0, 8192).includes("\u0000")) text = "";
        const tf = new Map();
        const words = [...wordsIn(path), ...wordsIn(path), ...wordsIn(text)];
        for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
        doc = { tf, len: words.length };
        this.cache.set(blob, doc);
      }
      this.docs.set(path, doc);
    }
    this.df = new Map();
    let total = 0;
    for (const d of this.docs.values()) {
      total += d.len;
      for (const w of d.tf.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
    }
    this.avg = total / Math.max(1, this.docs.size);
  }
  rank(query) {
    const q = new Set(wordsIn(query));
    const n = this.docs.size;
    const scores = [];
    for (const [path, d] of this.docs) {
      let s = 0;
      for (const w of q) {
        const f = d.tf.get(w);
        if (!f) continue;
        const df = this.df.get(w);
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.len) / this.avg));
      }
      if (s > 0) scores.push({ path, s });
    }
    return scores.sort((a, b) => b.s - a.s || a.path.localeCompare(b.path)).map((x) => x.path);
  }
}

/** Paths one per line, best first, within `tokens`. */
function pathsWithin(paths, tokens) {
  const out = [];
  let used = 0;
  for (const p of paths) {
    if (used + p.length + 1 > tokens * MAP_CHARS_PER_TOKEN) break;
    used += p.length + 1;
    out.push(p);
  }
  return out;
}

/** BM25's order rendered like the map: each file's definitions, files in BM25 order. */
function bm25AsMap(order, index, tokens) {
  const tags = tagsByFile(index);
  const files = order.filter((f) => tags.has(f)).map((file, i) => ({ file, rank: 1 / (i + 1) }));
  const defs = [];
  for (const { file, rank } of files) {
    const list = tags.get(file).defs.filter((d) => d.depth === 0 || d.kind === "method");
    list.forEach((def, j) => {
      defs.push({ file, def, score: rank / (1 + j * 0.01) });
    });
  }
  defs.sort((a, b) => b.score - a.score);
  return renderMap({ files, defs }, tokens).files;
}

// ---------------------------------------------------------------------------------------------
// Recall on a history

function benchRepo(source) {
  const name = source.replace(/^\/work\/\.mirror\//, "").replace(/\/repo$/, "");
  const clone = join(scratch, name.replace(/[^\w.-]/g, "_"));
  execFileSync("git", ["clone", "--quiet", "--shared", "--no-checkout", source, clone]);
  const head = git(source, "rev-parse", "HEAD").trim();
  const commits = git(
    clone,
    "log",
    "--no-merges",
    "--first-parent",
    "--format=%H %P",
    "-n",
    String(commitsWanted),
    head,
  )
    .trim()
    .split("\n")
    .map((l) => l.split(" "))
    .filter((c) => c.length === 2)
    .reverse(); // oldest first: each checkout changes a little
  return { name, clone, commits };
}

async function recallOn({ name, clone, commits }) {
  const index = new RepoIndex({ workspace: clone });
  const bm25 = new Bm25();
  const sums = {};
  const add = (key, hit, total) => {
    sums[key] ??= { hit: 0, total: 0, commits: 0, recallSum: 0 };
    const s = sums[key];
    s.hit += hit;
    s.total += total;
    s.commits++;
    s.recallSum += hit / total;
  };
  let used = 0;
  let skippedNoSource = 0;
  const times = [];
  for (const [commit, parent] of commits) {
    const changed = git(clone, "diff", "--name-only", "--no-renames", "--diff-filter=MD", parent, commit)
      .trim()
      .split("\n")
      .filter(Boolean);
    const sources = changed.filter((f) => languageForPath(f));
    git(clone, "checkout", "--quiet", "--force", parent);
    git(clone, "clean", "-qfdx");
    const tree = git(clone, "ls-tree", "-r", parent)
      .trim()
      .split("\n")
      .map((l) => {
        const [meta, path] = l.split("\t");
        return [path, meta.split(" ")[2]];
      })
      .filter(([, blob]) => blob);
    bm25.update(clone, tree);
    if (changed.length === 0) continue;
    const message = git(clone, "log", "-1", "--format=%B", commit).trim();
    const t0 = performance.now();
    const maps = {};
    for (const b of budgets) maps[b] = await buildRepoMap(index, { text: message }, b);
    times.push({ ms: performance.now() - t0, parsed: maps[budgets[0]].refresh.parsed });
    const order = bm25.rank(message);
    if (sources.length === 0) skippedNoSource++;
    used++;
    for (const b of budgets) {
      const named = new Set(maps[b].files);
      const bmPaths = new Set(pathsWithin(order, b));
      const bmMap = new Set(bm25AsMap(order, index, b));
      const count = (set, list) => list.filter((f) => set.has(f)).length;
      if (sources.length > 0) {
        add(`map@${b} (source files)`, count(named, sources), sources.length);
        add(`bm25 paths@${b} (source files)`, count(bmPaths, sources), sources.length);
        add(`bm25 as map@${b} (source files)`, count(bmMap, sources), sources.length);
      }
      add(`map@${b} (all files)`, count(named, changed), changed.length);
      add(`bm25 paths@${b} (all files)`, count(bmPaths, changed), changed.length);
      if (show && b === budgets[0])
        console.log(
          `  ${commit.slice(0, 8)} ${message.split("\n")[0].slice(0, 70)}\n    changed: ${sources.join(" ")}\n    map: ${sources.filter((f) => named.has(f)).join(" ") || "-"} | bm25: ${sources.filter((f) => bmPaths.has(f)).join(" ") || "-"}`,
        );
    }
  }
  const p50 = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  console.log(
    `\n${name}: ${used} commits (${commits.length} looked at; ${skippedNoSource} changed no source file of a mapped language), index of the last parent: ${index.files.size} source files; load ${load()}`,
  );
  console.log("  recall (mean over commits; micro: changed files named / changed files)");
  for (const [k, s] of Object.entries(sums))
    console.log(
      `  ${k.padEnd(34)} ${(s.recallSum / s.commits).toFixed(3)}  (micro ${s.hit}/${s.total} = ${(s.hit / s.total).toFixed(3)}, ${s.commits} commits)`,
    );
  const incremental = times.slice(1).map((t) => t.ms);
  console.log(
    `  per commit, both maps (refresh of the checked-out parent + rank + render): p50 ${p50(incremental).toFixed(0)} ms, first ${times[0]?.ms.toFixed(0)} ms (${times[0]?.parsed} files parsed)`,
  );
}

// ---------------------------------------------------------------------------------------------
// Build time of a 5,000-file tree

async function buildTime(count) {
  const tree = join(scratch, "tree");
  const picked = [];
  const walk = (d) => {
    if (picked.length >= count) return;
    let entries = [];
    try {
      entries = readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    } catch {
      return;
    }
    for (const e of entries) {
      if (picked.length >= count) return;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && languageForPath(e.name) && statSync(p).size <= 512 * 1024) picked.push(p);
    }
  };
  walk(join(process.cwd(), "node_modules"));
  let bytes = 0;
  for (const p of picked) {
    const to = join(tree, "src", relative(join(process.cwd(), "node_modules"), p));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(p, to);
    bytes += statSync(p).size;
  }
  const cacheFile = join(scratch, "tree-index.json");
  console.log(
    `\nbuild: ${picked.length} source files (${(bytes / 1e6).toFixed(1)} MB) copied from node_modules; load ${load()}`,
  );
  const query = { text: "parse the request headers" };
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let t = performance.now();
  let c = cpu();
  const first = new RepoIndex({ workspace: tree, cacheFile });
  // As the first request's map does (task-map.ts): parse for a share of its 3 s wait, quick tags after.
  const cold = await buildRepoMap(first, query, 1000, undefined, TASK_MAP_TIMEOUT_MS * TASK_MAP_PARSE_SHARE);
  const coldMs = performance.now() - t;
  const coldCpu = cpu() - c;
  await first.whenParsed();
  const parsedMs = performance.now() - t;
  t = performance.now();
  const full = await buildRepoMap(first, query, 1000);
  const fullMs = performance.now() - t;
  const sameTop = cold.files.slice(0, 10).filter((f) => full.files.slice(0, 10).includes(f)).length;
  t = performance.now();
  first.save();
  const saveMs = performance.now() - t;
  t = performance.now();
  c = cpu();
  // The next session: its shared index (the one write_file reports to), loaded from disk.
  const next = sharedIndex({ workspace: tree, cacheFile });
  const loadMs = performance.now() - t;
  const warm = await buildRepoMap(next, query, 1000, { unlessFreshFor: MAP_FRESH_FOR_MS });
  const warmMs = performance.now() - t;
  const warmCpu = cpu() - c;
  // Edits through the real write_file tool, each followed by the next map (as repo_map makes it):
  // write_file reports the file, the index re-reads it, the map skips the walk and updates the graph.
  const ctx = {
    workspace: tree,
    readRoots: [],
    sandbox: () => Promise.reject(new Error("none")),
    signal: new AbortController().signal,
  };
  const edits = [];
  const sources = [...next.files.keys()].filter((f) => /\.(ts|js|mjs|cjs)$/.test(f)).sort();
  for (let k = 0; k < 20; k++) {
    const rel = sources[(k * 211) % sources.length];
    const before = readFileSync(join(tree, rel), "utf8");
    const name = `addedByTheBench${k}`;
    t = performance.now();
    c = cpu();
    const w = await writeFileTool.execute(
      { path: rel, content: `${before}\nexport function ${name}() {}\n` },
      ctx,
    );
    if (w.isError) throw new Error(w.output);
    const m = await buildRepoMap(next, { text: name }, 1000, { unlessFreshFor: MAP_FRESH_FOR_MS });
    edits.push({
      ms: performance.now() - t,
      cpu: cpu() - c,
      walked: m.refresh.walked,
      named: m.text.includes(name),
      rankMs: m.rankMs,
    });
  }
  const pct = (xs, q) => {
    const v = [...xs].sort((x, y) => x - y);
    return v[Math.min(v.length - 1, Math.floor(q * v.length))];
  };
  // A command ran (it may have changed anything): the next map walks the tree.
  const editedRel = sources[0];
  appendFileSync(join(tree, editedRel), "\nexport function addedAgainByTheBench() {}\n");
  markWorkspaceChanged(tree);
  t = performance.now();
  const walked = await buildRepoMap(next, { text: "addedAgainByTheBench" }, 1000, {
    unlessFreshFor: MAP_FRESH_FOR_MS,
  });
  const walkMs = performance.now() - t;
  console.log(
    `  first map, no saved index (parse for ${TASK_MAP_TIMEOUT_MS * TASK_MAP_PARSE_SHARE} ms, then quick tags): ${(coldMs / 1000).toFixed(2)} s, cpu ${(coldCpu / 1000).toFixed(2)} s (${cold.refresh.parsed} parsed, ${cold.refresh.quick} quick; refresh ${(cold.refresh.ms / 1000).toFixed(2)} s, rank+render ${cold.rankMs.toFixed(0)} ms)`,
  );
  console.log(
    `  every file parsed (background) ${(parsedMs / 1000).toFixed(1)} s after the start; the map then ${fullMs.toFixed(0)} ms; ${sameTop} of its top 10 files were in the quick map's top 10; saving the index ${saveMs.toFixed(0)} ms`,
  );
  console.log(
    `  first map of the next session (index loaded from disk in ${loadMs.toFixed(0)} ms): ${(warmMs / 1000).toFixed(2)} s, cpu ${(warmCpu / 1000).toFixed(2)} s (${warm.refresh.parsed} parsed; refresh ${warm.refresh.ms.toFixed(0)} ms, rank+render ${warm.rankMs.toFixed(0)} ms)`,
  );
  console.log(
    `  write_file of one file → the next map, ${edits.length} edits: p50 ${pct(
      edits.map((e) => e.ms),
      0.5,
    ).toFixed(1)} ms, p95 ${pct(
      edits.map((e) => e.ms),
      0.95,
    ).toFixed(1)} ms, max ${Math.max(...edits.map((e) => e.ms)).toFixed(1)} ms (cpu p50 ${pct(
      edits.map((e) => e.cpu),
      0.5,
    ).toFixed(1)} ms; rank+render p50 ${pct(
      edits.map((e) => e.rankMs),
      0.5,
    ).toFixed(
      1,
    )} ms); walked ${edits.filter((e) => e.walked).length}, named the new function ${edits.filter((e) => e.named).length} of ${edits.length}`,
  );
  console.log(
    `  a map after a command (the tree walked, lstat of every file): ${walkMs.toFixed(0)} ms (${walked.refresh.parsed} parsed; walked ${walked.refresh.walked}, rank+render ${walked.rankMs.toFixed(0)} ms)`,
  );
  console.log(`  load after: ${load()}`);
}

try {
  if (!args.includes("--no-history")) for (const source of repos) await recallOn(benchRepo(source));
  if (!args.includes("--no-build")) await buildTime(Number(opt("--build-files", "5000")));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
