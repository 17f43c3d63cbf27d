#!/bin/sh
//bin/sh -c :; exec node "$0" "$@"
// Both a shell script and a CommonJS module (bin/package.json says so). Run as a program
// (`hands`, or the symlink npm puts in node_modules/.bin) the shell runs line 2 — a no-op, then
// `exec node` — so node can be given flags here without `env -S` (which busybox, older coreutils
// and some BSDs lack) and without starting node twice; for node the same line is a comment
// (`node bin/hands.js` works too). It passes none: any V8 flag makes node compile its built-in
// modules without their code cache (~15 ms at each start).
//
// It runs the bundle (../bundle/, made by scripts/bundle.mjs), whose chunks are CommonJS
// function bodies: each is compiled here with node:vm, with the code V8 made for it at an
// earlier start when there is one (../bundle/.v8-cache/). Compiling the start-up chunks from
// source was a third of the time to the first model request. The code is saved once the first
// request has left (the CLI changes V8's settings after that, and code saved under other
// settings would be refused), or at exit when no request was made; a cache V8 refuses (another
// node, other flags: the key is V8's own tag for them, or a damaged file) is made again.
// HANDS_NO_CODE_CACHE=1 reads and writes none.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { Script } = require("node:vm");
const { createRequire } = require("node:module");
const { cachedDataVersionTag } = require("node:v8");

/** The bundle's entry chunk, from this file. */
const ENTRY = "../bundle/hands.js";
const BUNDLE = path.dirname(path.join(__dirname, ENTRY));
const CACHE_DIR = path.join(BUNDLE, ".v8-cache");
const useCache = !process.env.HANDS_NO_CODE_CACHE;
const tag = cachedDataVersionTag();
const cacheSuffix = `.${process.arch}-${tag.toString(16)}`;

/** The chunks loaded so far, by file name. */
const chunks = new Map();
/** Chunks compiled without a cache V8 accepted, whose code is saved once. */
const unsaved = [];

let nodeRequire;
const bundleRequire = () => (nodeRequire ??= createRequire(path.join(__dirname, ENTRY)));
/** `require` of every chunk: another chunk by its path, anything else from the bundle's folder. */
function chunkRequire(id) {
  return id.startsWith("./") ? loadChunk(id.slice(2)) : bundleRequire()(id);
}
chunkRequire.resolve = (id, options) => bundleRequire().resolve(id, options);
/** `import()` of every chunk (renamed at build time): node's own for packages and built-ins. */
function chunkImport(id) {
  return id.startsWith("./") ? new Promise((resolve) => resolve(loadChunk(id.slice(2)))) : import(id);
}

function loadChunk(name) {
  const loaded = chunks.get(name);
  if (loaded) return loaded.exports;
  if (name.includes("/") || name.includes("\\")) throw new Error(`hands: not a bundle chunk: ${name}`);
  const file = path.join(BUNDLE, name);
  const module = { exports: {} };
  chunks.set(name, module);
  const cacheFile = path.join(CACHE_DIR, name + cacheSuffix);
  let cachedData;
  if (useCache)
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {}
  // The wrapper has a line of its own, so positions in stack traces are the file's.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, __handsImport) {\n${fs.readFileSync(file, "utf8")}\n})`,
    { filename: file, lineOffset: -1, cachedData },
  );
  if (useCache && (cachedData === undefined || script.cachedDataRejected))
    unsaved.push({ script, cacheFile });
  script.runInThisContext()(module.exports, chunkRequire, module, file, BUNDLE, chunkImport);
  return module.exports;
}

/** Saves the code of the chunks compiled from source, while V8's settings are still the start's. */
function saveCode() {
  if (unsaved.length === 0 || cachedDataVersionTag() !== tag) return;
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
  } catch {
    unsaved.length = 0;
    return;
  }
  for (const { script, cacheFile } of unsaved.splice(0)) {
    // A new file renamed over the old one: no reader sees half a file, and a symlink planted
    // at the cache's name is replaced, not followed.
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData(), { flag: "wx" });
      fs.renameSync(temporary, cacheFile);
    } catch {
      try {
        fs.unlinkSync(temporary);
      } catch {}
    }
  }
}

if (useCache) {
  const channels = require("node:diagnostics_channel");
  const onRequest = (message) => {
    channels.unsubscribe("http.client.request.start", onRequest);
    message.request.once("finish", saveCode);
  };
  // Subscribed before the CLI's own V8 tuning, so this runs first on the same request.
  channels.subscribe("http.client.request.start", onRequest);
  process.once("exit", saveCode);
}

try {
  loadChunk(path.basename(ENTRY));
} catch (error) {
  if (error?.code === "ENOENT" && error.path === path.join(__dirname, ENTRY)) {
    console.error(`hands: ${BUNDLE} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
  throw error;
}
