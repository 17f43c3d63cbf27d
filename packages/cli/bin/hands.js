#!/bin/sh
":" //; [ -z "${NODE_EXTRA_CA_CERTS-}" ] || case " ${NODE_OPTIONS-} " in *openssl-ca*|*system-ca*) ;; *) export HANDS_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS;; esac; exec node "$0" "$@"
// Both a shell script and a CommonJS module (bin/package.json says so). Run as a program
// (`hands`, or the symlink npm puts in node_modules/.bin) the shell runs line 2 — `:` (a
// builtin: no process is started), then `exec node` — so node can be given flags and an
// environment here without `env -S` (which busybox, older coreutils and some BSDs lack) and
// without starting node twice; for node the same line is a string and a comment (`node
// bin/hands.js` works too). It passes no flag: any V8 flag makes node compile its built-in
// modules without their code cache (~15 ms at each start). It moves NODE_EXTRA_CA_CERTS aside,
// which node would read and parse before the first line of JavaScript at every start, TLS or
// not (a sixth of the time to the first request); ./extra-ca.js puts it back at once and
// trusts its certificates from the first TLS use on. Not when NODE_OPTIONS picks other default
// roots (--use-openssl-ca, --use-system-ca): node's own handling stays then.
//
// It runs the bundle (../bundle/, made by scripts/bundle.mjs), whose chunks are CommonJS
// function bodies: each is compiled here with node:vm, with the code V8 made for it at an
// earlier start when there is one. Compiling the start-up chunks from source was a third of the
// time to the first model request. The code is saved once the first request has left (the CLI
// changes V8's settings after that, and code saved under other settings would be refused), or
// at exit when no request was made. HANDS_NO_CODE_CACHE=1 reads and writes none.
//
// V8 checks only a source's length before running the code saved for it, and the install may
// sit inside a workspace a sandboxed command can write (`npm i -D @hands/cli`, Hands working on
// Hands): the code is kept in the user's private data folder (~/.local/share/hands/v8-cache/,
// one folder per build; $XDG_DATA_HOME, never HANDS_DATA_DIR's: it is the account's), which
// other users cannot enter and sandboxes cannot write (packages/hands/src/sandbox-setup.ts), and
// each file there carries a MAC (GMAC: AES-256-GCM over no plaintext, ~7 GB/s, a fourth of the
// time HMAC-SHA-256 takes on the 1 MB checked at start-up) over the exact source it was made
// for and the code, under a key kept 0600 beside it. Anything that fails (planted, made for
// other source, another user's, damaged, not a regular file of the user's that only the user
// can write) is compiled from source and saved again.
"use strict";
const movedCa = process.env.HANDS_EXTRA_CA_CERTS;
let extraCa;
if (movedCa !== undefined) {
  delete process.env.HANDS_EXTRA_CA_CERTS;
  extraCa = require("./extra-ca.js");
  extraCa.restore(movedCa, process.argv[2]);
}
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
const uid = process.getuid?.();

let entrySource;
try {
  entrySource = fs.readFileSync(path.join(__dirname, ENTRY));
} catch (error) {
  if (error?.code !== "ENOENT") throw error;
  console.error(`hands: ${BUNDLE} is missing; run \`npm run build\` first`);
  process.exit(1);
}

/**
 * The user's private data folder, which holds the code and its key: $XDG_DATA_HOME/hands or
 * ~/.local/share/hands (packages/hands/src/paths.ts, codeCacheDir); undefined when only a
 * relative path is known (that would be the working directory, a workspace that may be hostile).
 */
function privateFolder() {
  const xdg = process.env.XDG_DATA_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(require("node:os").homedir(), ".local", "share");
  return path.isAbsolute(base) ? path.join(base, "hands") : undefined;
}
const PRIVATE = privateFolder();

/** Where the code is kept: one folder per build, named by a hash of the entry chunk (which names every other chunk by a hash of its content). */
function buildFolderOf() {
  if (process.env.HANDS_NO_CODE_CACHE || !PRIVATE) return undefined;
  const build = require("node:crypto").createHash("sha256").update(entrySource).digest("hex").slice(0, 16);
  return path.join(PRIVATE, "v8-cache", build);
}

/** The user's own, and writable by no one else (a symlink is not followed). */
function owned(stat) {
  return (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0;
}

/** A folder code may be read from and written to. */
function trusted(folder) {
  try {
    const stat = fs.lstatSync(folder);
    return stat.isDirectory() && owned(stat);
  } catch {
    return false;
  }
}

const { O_RDONLY, O_NOFOLLOW = 0, O_NONBLOCK = 0 } = fs.constants;

/**
 * A file's bytes, when it is a regular file of the user's that no one else can write: opened
 * once and checked by its descriptor (no swap between a check and the read), never through a
 * symlink, never waiting on a FIFO.
 */
function readOwnFile(file, isOk) {
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || !owned(stat) || !isOk(stat)) return undefined;
    const bytes = Buffer.allocUnsafe(stat.size);
    let at = 0;
    for (let n = 1; at < bytes.length && n > 0; at += n)
      n = fs.readSync(fd, bytes, at, bytes.length - at, at);
    return at === bytes.length ? bytes : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

// The key: 32 random bytes, 0600, in the user's private data folder.
const KEY_FILE = PRIVATE && path.join(PRIVATE, "code-cache.key");
const KEY_BYTES = 32;
const isKey = (stat) => stat.size === KEY_BYTES && (stat.mode & 0o077) === 0;
/** The key once looked for (null: there is none); `made`: a new one was tried. */
let key;
let made = false;

/** The key, or undefined; `make`: a new one replaces a missing or unfit one (say, readable by others). */
function codeKey(make) {
  if (key === undefined) key = (KEY_FILE && trusted(PRIVATE) && readOwnFile(KEY_FILE, isKey)) || null;
  if (key === null && make && !made) {
    made = true;
    key = (KEY_FILE && makeKey()) || null;
  }
  return key ?? undefined;
}

function makeKey() {
  try {
    fs.mkdirSync(PRIVATE, { recursive: true, mode: 0o700 });
    if (!trusted(PRIVATE)) return undefined;
    fs.rmSync(KEY_FILE, { force: true });
    // Made whole under another name, then linked: a reader never sees half a key, and of two
    // starts making one at once, the second takes the first's.
    const temporary = `${KEY_FILE}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, require("node:crypto").randomBytes(KEY_BYTES), { flag: "wx", mode: 0o600 });
    try {
      fs.linkSync(temporary, KEY_FILE);
    } catch (error) {
      if (error?.code !== "EEXIST") throw error;
    } finally {
      fs.unlinkSync(temporary);
    }
    return readOwnFile(KEY_FILE, isKey);
  } catch {
    return undefined;
  }
}

// A cache file: MAGIC, a nonce (new for each file), the MAC, then V8's code. The MAC covers the
// file's name, V8's tag, the wrapper and the exact source compiled, and the code.
const MAGIC = Buffer.from("hands-v8-cache-1");
const NONCE = 12;
const MAC = 16;
const HEAD = MAGIC.length + NONCE + MAC;
// Far above any chunk's code (the largest is ~0.2 MB): a huge (sparse) file planted at a
// cache's name is not read into memory.
const MAX_FILE = 64 * 1024 * 1024;
// The wrapper has a line of its own, so positions in stack traces are the file's.
const WRAP_START = "(function (exports, require, module, __filename, __dirname, __handsImport) {\n";
const WRAP_END = "\n})";

function macInput(mac, name, nonce, source, code) {
  mac.setAAD(MAGIC);
  mac.setAAD(nonce);
  mac.setAAD(Buffer.from(`${name}${cacheSuffix}\0${WRAP_START}\0${WRAP_END}\0${source.length}\0`));
  mac.setAAD(source);
  mac.setAAD(code);
}

/** V8's code in a cache file, when its MAC holds for this source. */
function verifiedCode(file, name, source) {
  const bytes = readOwnFile(file, (stat) => stat.size > HEAD && stat.size <= MAX_FILE);
  if (!bytes?.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const secret = codeKey(false);
  if (!secret) return undefined;
  const nonce = bytes.subarray(MAGIC.length, MAGIC.length + NONCE);
  const code = bytes.subarray(HEAD);
  try {
    const check = require("node:crypto").createDecipheriv("aes-256-gcm", secret, nonce);
    check.setAuthTag(bytes.subarray(MAGIC.length + NONCE, HEAD));
    macInput(check, name, nonce, source, code);
    check.final();
    return code;
  } catch {
    return undefined;
  }
}

/** A cache file's bytes for this code, or undefined without a key. */
function sealedCode(name, source, code) {
  const secret = codeKey(true);
  if (!secret) return undefined;
  const crypto = require("node:crypto");
  const nonce = crypto.randomBytes(NONCE);
  const mac = crypto.createCipheriv("aes-256-gcm", secret, nonce);
  macInput(mac, name, nonce, source, code);
  mac.final();
  return Buffer.concat([MAGIC, nonce, mac.getAuthTag(), code]);
}

const codeFolder = buildFolderOf();
/** The code cache's folder once it is known to be the user's alone. */
let cacheFolder = codeFolder && trusted(codeFolder) ? codeFolder : undefined;

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
  if (id.startsWith("./")) return new Promise((resolve) => resolve(loadChunk(id.slice(2))));
  extraCa?.beforeImport(id);
  return import(id);
}

function loadChunk(name, bytes) {
  const loaded = chunks.get(name);
  if (loaded) return loaded.exports;
  if (name.includes("/") || name.includes("\\")) throw new Error(`hands: not a bundle chunk: ${name}`);
  const file = path.join(BUNDLE, name);
  const module = { exports: {} };
  chunks.set(name, module);
  const source = bytes ?? fs.readFileSync(file);
  const cachedData = cacheFolder
    ? verifiedCode(path.join(cacheFolder, name + cacheSuffix), name, source)
    : undefined;
  const script = new Script(`${WRAP_START}${source.toString("utf8")}${WRAP_END}`, {
    filename: file,
    lineOffset: -1,
    cachedData,
  });
  if (codeFolder && (cachedData === undefined || script.cachedDataRejected))
    unsaved.push({ script, name, source });
  script.runInThisContext()(module.exports, chunkRequire, module, file, BUNDLE, chunkImport);
  return module.exports;
}

/** The folder to save code in, made (private) if it is missing. */
function folderToWrite() {
  if (cacheFolder || !codeFolder) return cacheFolder;
  try {
    fs.mkdirSync(codeFolder, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  if (!trusted(codeFolder)) return undefined;
  try {
    removeOtherBuilds(codeFolder);
  } catch {}
  cacheFolder = codeFolder;
  return codeFolder;
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
  for (const { script, name, source } of unsaved.splice(0)) {
    const sealed = folder && sealedCode(name, source, script.createCachedData());
    if (!sealed) break;
    // A new file renamed over the old one: no reader sees half a file, and a symlink or FIFO
    // planted at the cache's name is replaced, not followed.
    const file = path.join(folder, name + cacheSuffix);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, sealed, { flag: "wx", mode: 0o600 });
      fs.renameSync(temporary, file);
    } catch {
      try {
        fs.unlinkSync(temporary);
      } catch {}
    }
  }
}

if (codeFolder) {
  const channels = require("node:diagnostics_channel");
  const onRequest = (message) => {
    channels.unsubscribe("http.client.request.start", onRequest);
    message.request.once("finish", saveCode);
  };
  // Subscribed before the CLI's own V8 tuning, so this runs first on the same request.
  channels.subscribe("http.client.request.start", onRequest);
  process.once("exit", saveCode);
  // Code that changes V8's flags earlier (the outline's WebAssembly compile, e.g. for the first
  // request's repository map) saves first (packages/agent/src/outline/loader.ts).
  globalThis[Symbol.for("hands.saveCodeCache")] = saveCode;
}

loadChunk(path.basename(ENTRY), entrySource);
