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
// earlier start when there is one. Compiling the start-up chunks from source was a third of the
// time to the first model request. The code is saved once the first request has left (the CLI
// changes V8's settings after that, and code saved under other settings would be refused), or
// at exit when no request was made; a cache V8 refuses (another node, other flags: the key is
// V8's own tag for them, or a damaged file) is made again. It is kept in ../bundle/.v8-cache/,
// or where that cannot be written (an install owned by root) in the user's cache folder, one
// folder per build. HANDS_NO_CODE_CACHE=1 reads and writes none.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { Script } = require("node:vm");
const { createRequire } = require("node:module");
const { cachedDataVersionTag } = require("node:v8");

/** The bundle's entry chunk, from this file. */
const ENTRY = "../bundle/hands.js";
const BUNDLE = path.dirname(path.join(__dirname, ENTRY));
const tag = cachedDataVersionTag();
const cacheSuffix = `.${process.arch}-${tag.toString(16)}`;

let entrySource;
try {
  entrySource = fs.readFileSync(path.join(__dirname, ENTRY), "utf8");
} catch (error) {
  if (error?.code !== "ENOENT") throw error;
  console.error(`hands: ${BUNDLE} is missing; run \`npm run build\` first`);
  process.exit(1);
}

/**
 * Where the code is kept, first choice first: beside the bundle, then in the user's cache
 * folder. One folder per build, named by a hash of the entry chunk (which names every other
 * chunk by a hash of its content): V8 checks only a source's length before using code made for it.
 */
function cacheFolders() {
  if (process.env.HANDS_NO_CODE_CACHE) return [];
  const build = require("node:crypto").createHash("sha256").update(entrySource).digest("hex").slice(0, 16);
  const folders = [path.join(BUNDLE, ".v8-cache", build)];
  const xdg = process.env.XDG_CACHE_HOME;
  const home = xdg && path.isAbsolute(xdg) ? xdg : path.join(require("node:os").homedir(), ".cache");
  // Never a relative path: that would be the working directory, a workspace that may be hostile.
  if (path.isAbsolute(home)) folders.push(path.join(home, "hands", "v8-cache", build));
  return folders;
}

/** A folder code may be read from and written to: the bundle's own, or a private one of the user's. */
function trusted(folder, index) {
  try {
    const stat = fs.lstatSync(folder);
    if (!stat.isDirectory()) return false;
    return index === 0 || ((stat.mode & 0o022) === 0 && stat.uid === (process.getuid?.() ?? stat.uid));
  } catch {
    return false;
  }
}

const folders = cacheFolders();
let cacheFolder = folders.find(trusted);

/** The chunks loaded so far, by file name. */
const chunks = new Map();
/** Chunks compiled without code V8 accepted: their code is saved once. */
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

function loadChunk(name, source) {
  const loaded = chunks.get(name);
  if (loaded) return loaded.exports;
  if (name.includes("/") || name.includes("\\")) throw new Error(`hands: not a bundle chunk: ${name}`);
  const file = path.join(BUNDLE, name);
  const module = { exports: {} };
  chunks.set(name, module);
  let cachedData;
  if (cacheFolder)
    try {
      cachedData = fs.readFileSync(path.join(cacheFolder, name + cacheSuffix));
    } catch {}
  // The wrapper has a line of its own, so positions in stack traces are the file's.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, __handsImport) {\n${source ?? fs.readFileSync(file, "utf8")}\n})`,
    { filename: file, lineOffset: -1, cachedData },
  );
  if (folders.length > 0 && (cachedData === undefined || script.cachedDataRejected))
    unsaved.push({ script, name });
  script.runInThisContext()(module.exports, chunkRequire, module, file, BUNDLE, chunkImport);
  return module.exports;
}

/** The folder to save code in: the one read from, else the first that can be made. */
function folderToWrite() {
  if (cacheFolder) return cacheFolder;
  for (const [index, folder] of folders.entries()) {
    try {
      fs.mkdirSync(folder, { recursive: true, mode: index === 0 ? 0o755 : 0o700 });
    } catch {
      continue;
    }
    if (!trusted(folder, index)) continue;
    try {
      removeOtherBuilds(folder);
    } catch {}
    cacheFolder = folder;
    return folder;
  }
  return undefined;
}

/** Keeps the three newest builds' folders beside a new one (a user may run more than one). */
function removeOtherBuilds(folder) {
  const parent = path.dirname(folder);
  const others = fs
    .readdirSync(parent, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^[0-9a-f]{16}$/.test(e.name) && e.name !== path.basename(folder))
    .map((e) => ({ dir: path.join(parent, e.name), at: fs.lstatSync(path.join(parent, e.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { dir } of others.slice(3)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Saves the code of the chunks compiled from source, while V8's settings are still the start's. */
function saveCode() {
  if (unsaved.length === 0 || cachedDataVersionTag() !== tag) return;
  const folder = folderToWrite();
  for (const { script, name } of unsaved.splice(0)) {
    if (!folder) break;
    // A new file renamed over the old one: no reader sees half a file, and a symlink planted
    // at the cache's name is replaced, not followed.
    const file = path.join(folder, name + cacheSuffix);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData(), { flag: "wx", mode: 0o644 });
      fs.renameSync(temporary, file);
    } catch {
      try {
        fs.unlinkSync(temporary);
      } catch {}
    }
  }
}

if (folders.length > 0) {
  const channels = require("node:diagnostics_channel");
  const onRequest = (message) => {
    channels.unsubscribe("http.client.request.start", onRequest);
    message.request.once("finish", saveCode);
  };
  // Subscribed before the CLI's own V8 tuning, so this runs first on the same request.
  channels.subscribe("http.client.request.start", onRequest);
  process.once("exit", saveCode);
}

loadChunk(path.basename(ENTRY), entrySource);
