import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { ToolContext } from "../tools/types.js";
import { writeFileTool } from "../tools/write-file.js";
import { markWorkspaceChanged } from "./freshness.js";
import { FileGraph } from "./graph.js";
import { buildRepoMap, MAP_FRESH_FOR_MS, RepoIndex, rankDefinitions, sharedIndex } from "./index.js";
import { nthLargest } from "./rank.js";
import type { Definition, FileTags } from "./tags.js";

let root: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "hands-repomap-graph-")));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** A deterministic pseudo-random sequence (the same files and edits on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const NAMES = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? `parseThing${i}` : `n${i}`));

function randomTags(rand: () => number): FileTags {
  const defs: Definition[] = [];
  const refs: Record<string, number> = {};
  for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) {
    const name = NAMES[Math.floor(rand() * NAMES.length)]!;
    defs.push({
      name,
      kind: rand() < 0.3 ? "method" : "function",
      line: k + 1,
      signature: name,
      depth: rand() < 0.2 ? 1 : 0,
    });
  }
  for (let k = 0; k < Math.floor(rand() * 12); k++) {
    const name = NAMES[Math.floor(rand() * NAMES.length)]!;
    refs[name] = (refs[name] ?? 0) + 1 + Math.floor(rand() * 3);
  }
  return { defs, refs };
}

/** Every link of a graph as "from→to" → weight, and every file's total. */
function linksOf(g: FileGraph): { links: Map<string, number>; out: Map<string, number> } {
  const links = new Map<string, number>();
  const out = new Map<string, number>();
  for (let i = 0; i < g.slots; i++) {
    const from = g.list[i];
    if (from === undefined) continue;
    out.set(from, g.out[i]!);
    const l = g.linksOf(i);
    for (let k = 0; k < l.to.length; k++) links.set(`${from}→${g.list[l.to[k]!]}`, l.weight[k]!);
  }
  return { links, out };
}

function assertSameLinks(a: FileGraph, b: FileGraph, what: string): void {
  const x = linksOf(a);
  const y = linksOf(b);
  assert.deepEqual([...x.links.keys()].sort(), [...y.links.keys()].sort(), what);
  for (const [k, w] of x.links) assert.ok(Math.abs(w - y.links.get(k)!) < 1e-9, `${what}: ${k}`);
  for (const [f, o] of x.out) assert.ok(Math.abs(o - y.out.get(f)!) < 1e-9, `${what}: out ${f}`);
}

test("graph: updating file by file gives the links a full build gives (200 random edits)", () => {
  const rand = rng(7);
  const files = new Map<string, FileTags>();
  for (let i = 0; i < 80; i++) files.set(`src/f${i}.ts`, randomTags(rand));
  const live = FileGraph.of(files);
  for (let step = 0; step < 200; step++) {
    const changed: string[] = [];
    for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) {
      const rel = `src/f${Math.floor(rand() * 80)}.ts`;
      files.set(rel, randomTags(rand));
      changed.push(rel);
    }
    assert.equal(live.update(files, changed), true, "an update, not a rebuild");
    assertSameLinks(live, FileGraph.of(files), `step ${step}`);
  }
  // The ranking from the updated graph is the ranking from a fresh one.
  const query = { text: "parseThing3 n4" };
  const a = rankDefinitions(files, query, live);
  const b = rankDefinitions(files, query, FileGraph.of(files));
  assert.deepEqual(
    a.defs.slice(0, 20).map((d) => `${d.file}:${d.def.name}`),
    b.defs.slice(0, 20).map((d) => `${d.file}:${d.def.name}`),
  );
});

test("graph: a removed file leaves no links to it; a new one links; many changes rebuild it", () => {
  const files = new Map<string, FileTags>([
    [
      "a.ts",
      { defs: [{ name: "makeWidget", kind: "function", line: 1, signature: "", depth: 0 }], refs: {} },
    ],
    ["b.ts", { defs: [], refs: { makeWidget: 2 } }],
    ["c.ts", { defs: [], refs: { makeWidget: 1, otherThing: 1 } }],
  ]);
  for (let i = 0; i < 20; i++) files.set(`pad${i}.ts`, { defs: [], refs: {} });
  const g = FileGraph.of(files);
  assert.ok(linksOf(g).links.has("b.ts→a.ts"));
  files.delete("a.ts");
  assert.equal(g.update(files, ["a.ts"]), true);
  assert.equal(g.id.has("a.ts"), false);
  assert.equal(linksOf(g).links.size, 0);
  assert.equal(g.out[g.id.get("b.ts")!], 0);
  files.set("d.ts", {
    defs: [{ name: "otherThing", kind: "function", line: 3, signature: "", depth: 0 }],
    refs: {},
  });
  assert.equal(g.update(files, ["d.ts"]), true);
  assert.deepEqual([...linksOf(g).links.keys()], ["c.ts→d.ts"]);
  assert.equal(g.size, 23);
  // A tenth of the files at once: built again in full (rarity measured against the new count).
  const many = Array.from({ length: 12 }, (_, i) => `more${i}.ts`);
  for (const rel of many) files.set(rel, { defs: [], refs: { otherThing: 1 } });
  assert.equal(g.update(files, many), false);
  assertSameLinks(g, FileGraph.of(files), "after the rebuild");
});

test("nthLargest: the same as sorting, duplicates and all", () => {
  const rand = rng(3);
  for (let trial = 0; trial < 50; trial++) {
    const a = Float64Array.from({ length: 1 + Math.floor(rand() * 300) }, () => Math.floor(rand() * 40));
    const sorted = [...a].sort((x, y) => y - x);
    const n = 1 + Math.floor(rand() * a.length);
    assert.equal(nthLargest(a.slice(), n), sorted[n - 1]);
  }
});

function workspace(files: Record<string, string>): string {
  const ws = path.join(root, `ws${Math.random().toString(36).slice(2, 8)}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  return ws;
}

function ctxFor(ws: string): ToolContext {
  return {
    workspace: ws,
    readRoots: [],
    sandbox: () => Promise.reject(new Error("no sandbox in this test")),
    signal: new AbortController().signal,
  };
}

test("write_file tells the shared index what it wrote: the next map re-reads that file only, without a walk", async () => {
  const ws = workspace({
    "src/store.ts": "export class SessionStore {\n  renew() {}\n}\n",
    "src/use.ts": "import { SessionStore } from './store.js';\nnew SessionStore().renew();\n",
  });
  const index = sharedIndex({ workspace: ws });
  const first = await buildRepoMap(index, { text: "session" }, 512, { unlessFreshFor: MAP_FRESH_FOR_MS });
  assert.equal(first.refresh.walked, true);
  const written = await writeFileTool.execute(
    {
      path: "src/store.ts",
      content: "export class SessionStore {\n  renew() {}\n}\nexport function rotateSessionKeys() {}\n",
    },
    ctxFor(ws),
  );
  assert.equal(written.isError, undefined, written.output);
  const next = await buildRepoMap(index, { text: "rotateSessionKeys" }, 512, {
    unlessFreshFor: MAP_FRESH_FOR_MS,
  });
  assert.equal(next.refresh.walked, false, "told of the write: no walk");
  assert.match(next.text, /4│ export function rotateSessionKeys/);
  // A command ran (or a new task began): anything may have changed; the next map walks.
  writeFileSync(path.join(ws, "src/other.ts"), "export function madeByAShellCommand() {}\n");
  markWorkspaceChanged(ws);
  const walked = await buildRepoMap(index, { text: "madeByAShellCommand" }, 512, {
    unlessFreshFor: MAP_FRESH_FOR_MS,
  });
  assert.equal(walked.refresh.walked, true);
  assert.equal(walked.refresh.parsed, 1);
  assert.match(walked.text, /madeByAShellCommand/);
  // A file the tools create is new to the index: only a walk knows whether it is indexed.
  await writeFileTool.execute(
    { path: "src/fresh.ts", content: "export function brandNewThing() {}\n" },
    ctxFor(ws),
  );
  const created = await buildRepoMap(index, { text: "brandNewThing" }, 512, {
    unlessFreshFor: MAP_FRESH_FOR_MS,
  });
  assert.equal(created.refresh.walked, true);
  assert.match(created.text, /brandNewThing/);
  // Without the option every map walks (what a caller that knows nothing gets).
  assert.equal((await buildRepoMap(index, { text: "x" }, 128)).refresh.walked, true);
  // A private index (not the shared one) is not told: its map walks and still sees the edit.
  const own = new RepoIndex({ workspace: ws });
  await own.refresh();
  await writeFileTool.execute({ path: "src/use.ts", content: "export const usedNow = 1;\n" }, ctxFor(ws));
  const seen = await buildRepoMap(own, { text: "usedNow" }, 256);
  assert.equal(seen.refresh.walked, true);
  assert.match(seen.text, /usedNow/);
});
