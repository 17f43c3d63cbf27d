#!/bin/sh
//bin/sh -c :; exec node --max-semi-space-size=2 "$0" "$@"
// Both a shell script and an ES module. Run as a program (`hands`, or the symlink npm puts in
// node_modules/.bin) the shell runs line 2 — a no-op, then `exec node` with node's flag — so
// the flag applies without `env -S` (which busybox, older coreutils and some BSDs lack) and
// without starting node twice; for node the same line is a comment (`node bin/hands.js` works
// too, without the flag). The small young generation keeps peak memory flat over long sessions
// (large request bodies are freed at each scavenge instead of piling up) at no cost in speed.
//
// It runs the bundle (scripts/bundle.mjs) with V8's code cache: Node 20 caches compiled code
// only for scripts, so the bundle is one CommonJS script, compiled here with the cache a
// previous run left (named by the bundle's content key, node's version and arch; V8 rejects it
// if its own version or flags differ): next to the bundle, or, where the installed package is
// not writable (a global install by root), in the user's cache folder (XDG_CACHE_HOME, else
// ~/.cache). Without a usable cache it compiles from source and, at exit, writes one (to a
// fresh file renamed into place: concurrent runs never read half a file, and a planted symlink
// is replaced, not followed); where neither is writable, there is only no cache. The cache is
// never looked for in a workspace.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

const file = fileURLToPath(new URL("../bundle/hands.cjs", import.meta.url));
const source = readFileSync(file, "utf8");
const key = /^\/\/hands-bundle ([0-9a-f]{32})\n/.exec(source)?.[1] ?? "unkeyed";
const cacheName = `hands.cjs.${key}-${process.version}-${process.arch}.cache`;
const userCache = () => join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "hands");
const places = [dirname(file), userCache];

function readCache() {
  for (const place of places)
    try {
      return readFileSync(join(typeof place === "string" ? place : place(), cacheName));
    } catch {
      // Not there (or unreadable): the next place, then compile from source.
    }
  return undefined;
}

function writeCache(data) {
  for (const place of places) {
    const dir = typeof place === "string" ? place : place();
    const fresh = join(dir, `${cacheName}.${process.pid}.${Date.now()}`);
    try {
      if (dir !== places[0]) mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(fresh, data, { flag: "wx", mode: 0o644 });
      renameSync(fresh, join(dir, cacheName));
      return;
    } catch {
      rmSync(fresh, { force: true });
    }
  }
}

const cachedData = readCache();
const script = new Script(
  `(function (exports, require, module, __filename, __dirname, __handsImport) {${source}\n})`,
  {
    filename: file,
    cachedData,
  },
);
// After the run, so the cache holds every function it compiled, not only the top level.
if (cachedData === undefined || script.cachedDataRejected)
  process.once("exit", () => writeCache(script.createCachedData()));
const module = { exports: {} };
script.runInThisContext()(
  module.exports,
  createRequire(file),
  module,
  file,
  dirname(file),
  (specifier) => import(specifier),
);
