// The bin's V8 code cache (bin/hands.js). V8 checks only a source's length before running the
// code saved for it, and the bin once kept that code beside the bundle, which may be inside a
// workspace a sandboxed command writes (`npm i -D @hands/cli`, Hands working on Hands). It is
// kept in the user's private data folder now, each file under a MAC; whatever is planted at a
// cache file's name anyway — real V8 code made for other source of the same length, a FIFO, a
// symlink, a file others can write, another user's file, a damaged one — must not run, must not
// hang the start, and is made again; `hands --help` works throughout.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { type BinCopy, buildFolder, copyOfBin } from "../testing/bin-copy.js";
import { cleanEnv } from "../testing/cli-process.js";

// The bin's wrapper around each chunk (checked against the bin's text below).
const WRAP_START = "(function (exports, require, module, __filename, __dirname, __handsImport) {\\n";
const WRAP_END = "\\n})";

interface HelpRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

let copy: BinCopy;
let folder: string;
/** The entry chunk's cache file. */
let entry: string;
let marker: string;
/** Cache files of other chunks `--help` loads, for attacks planted side by side in one run. */
let others: string[];
const chunkOf = (cacheFile: string) => basename(cacheFile).slice(0, basename(cacheFile).lastIndexOf("."));

function env(): NodeJS.ProcessEnv {
  return cleanEnv(copy.root, { XDG_CACHE_HOME: copy.userCache, XDG_DATA_HOME: copy.userData });
}

/** `hands --help` with the copy's bin; killed after 15 s (the old bin waited forever on a FIFO). */
function help(): Promise<HelpRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [copy.bin, "--help"], {
      env: env(),
      cwd: copy.root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, 15_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

async function helpWorks(): Promise<void> {
  const r = await help();
  assert.ok(!r.timedOut, "hands --help did not finish");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage: hands /);
  assert.ok(!existsSync(marker), `planted code ran: ${existsSync(marker) && readFileSync(marker, "utf8")}`);
}

/**
 * V8's code cache for other code, of exactly the length of `chunk` (default: the entry chunk),
 * made in a node with the bin's flags (none): V8 itself accepts it for that chunk. The code
 * writes `marker`.
 */
function plantedV8Code(chunk = "hands.js"): Buffer {
  const source = readFileSync(join(copy.root, "bundle", chunk), "utf8");
  const script = `
    const vm = require("node:vm");
    let body = ${JSON.stringify(`require("node:fs").writeFileSync(${JSON.stringify(marker)}, "planted code ran");`)};
    body += "//" + "x".repeat(${source.length} - body.length - 2);
    const wrapped = "${WRAP_START}" + body + "${WRAP_END}";
    process.stdout.write(new vm.Script(wrapped, { filename: "hands.js", lineOffset: -1 }).createCachedData());
  `;
  return execFileSync(process.execPath, ["-e", script], { env: env() });
}

/** The (device, inode) of a path: a remade file is a new one. */
const identity = (path: string): string => {
  const st = lstatSync(path);
  return `${st.dev}:${st.ino}`;
};

/** The cache file was refused and made again: a new regular file of ours, 0600, in the bin's format. */
function assertRemade(path: string, before: string): void {
  const st = lstatSync(path);
  assert.ok(st.isFile(), `${path} is a regular file again`);
  assert.notEqual(identity(path), before, `${path} was made again`);
  assert.equal(st.mode & 0o777, 0o600);
  if (typeof process.getuid === "function") assert.equal(st.uid, process.getuid());
  assert.equal(readFileSync(path).subarray(0, 16).toString(), "hands-v8-cache-1");
}

describe("the bin's V8 code cache is never trusted for where it is", () => {
  before(async () => {
    copy = copyOfBin();
    marker = join(copy.root, "planted-code-ran");
    const bin = readFileSync(copy.bin, "utf8");
    assert.ok(bin.includes(WRAP_START) && bin.includes(WRAP_END), "the bin's wrapper");
    await helpWorks();
    folder = buildFolder(copy.cache);
    const name = readdirSync(folder).find((f) => f.startsWith("hands.js."));
    assert.ok(name, `the entry chunk's code is saved: ${readdirSync(folder)}`);
    entry = join(folder, name);
    others = readdirSync(folder)
      .filter((f) => f !== name)
      .map((f) => join(folder, f));
    assert.ok(others.length >= 4, `the chunks --help loads: ${readdirSync(folder)}`);
  });
  after(() => rmSync(copy.root, { recursive: true, force: true }));
  // Each test on its own, from a cache the bin made afresh (what one test planted, the old bin kept).
  beforeEach(async () => {
    rmSync(marker, { force: true });
    rmSync(folder, { recursive: true, force: true });
    await helpWorks();
    assert.ok(existsSync(entry) && others.every((f) => existsSync(f)), "the cache is made again");
  });

  test("V8's code for other source of the same length, planted at the entry's name, does not run", async () => {
    const planted = plantedV8Code();
    writeFileSync(entry, planted);
    const plantedAt = identity(entry);
    await helpWorks();
    assertRemade(entry, plantedAt);

    // The same kind of code behind a header of the bin's format: a random MAC, and the MAC of
    // the genuine file (two other chunks, one run).
    const [a, b] = [others[0]!, others[1]!];
    const genuine = readFileSync(a);
    writeFileSync(
      a,
      Buffer.concat([genuine.subarray(0, 16), Buffer.alloc(28, 7), plantedV8Code(chunkOf(a))]),
    );
    writeFileSync(b, Buffer.concat([readFileSync(b).subarray(0, 44), plantedV8Code(chunkOf(b))]));
    const at = [identity(a), identity(b)];
    await helpWorks();
    assertRemade(a, at[0]!);
    assertRemade(b, at[1]!);
  });

  test("code saved for a chunk's earlier source is not used once the source changed (same length)", async () => {
    // Not the entry chunk: its hash names the build's folder. Another chunk `--help` loads.
    const name = readdirSync(folder)
      .map((f) => f.slice(0, f.lastIndexOf(".")))
      .find((f) => f !== "hands.js")!;
    const file = join(copy.root, "bundle", name);
    const original = readFileSync(file);
    await helpWorks(); // the cache holds the original's code
    const text = original.toString("utf8");
    let body = `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "new source ran");`;
    body += `//${"x".repeat(text.length - body.length - 2)}`;
    writeFileSync(file, body);
    try {
      await help();
      assert.ok(existsSync(marker), `the source on disk (${name}) ran, not the code saved for the old one`);
    } finally {
      writeFileSync(file, original);
      rmSync(marker, { force: true });
    }
    await helpWorks();
  });

  test("a FIFO at a cache file's name does not block the start and is replaced", async () => {
    rmSync(entry);
    execFileSync("mkfifo", [entry]);
    const at = identity(entry);
    await helpWorks();
    assertRemade(entry, at);
  });

  test("a symlink at a cache file's name is not followed; it is replaced and its target left alone", async () => {
    const target = join(copy.root, "planted-elsewhere");
    writeFileSync(target, plantedV8Code());
    const targetBytes = readFileSync(target);
    rmSync(entry);
    symlinkSync(target, entry);
    const at = identity(entry);
    await helpWorks();
    assertRemade(entry, at);
    assert.deepEqual(readFileSync(target), targetBytes, "the symlink's target is untouched");

    // Nor a symlink to a genuine file of the user's elsewhere.
    const genuine = join(copy.root, "genuine-elsewhere");
    const other = others[2]!;
    copyFileSync(other, genuine);
    rmSync(other);
    symlinkSync(genuine, other);
    const again = identity(other);
    await helpWorks();
    assertRemade(other, again);
  });

  test("a genuine file that group or others can write is refused and made again", async () => {
    const files = [entry, others[0]!];
    chmodSync(files[0]!, 0o620);
    chmodSync(files[1]!, 0o602);
    const at = files.map(identity);
    await helpWorks();
    for (const [i, f] of files.entries()) assertRemade(f, at[i]!);
  });

  test("a genuine file owned by another user is refused and made again", {
    skip: process.getuid?.() !== 0 && "needs root (chown)",
  }, async () => {
    chownSync(entry, 65534, 65534);
    const at = identity(entry);
    await helpWorks();
    assertRemade(entry, at);
  });

  test("a truncated file, garbage and a huge sparse file are refused and made again", async () => {
    const files = [entry, others[0]!, others[1]!, others[2]!];
    const genuine = files.map((f) => readFileSync(f));
    writeFileSync(files[0]!, genuine[0]!.subarray(0, 60));
    writeFileSync(files[1]!, Buffer.alloc(genuine[1]!.length, 0x5a));
    writeFileSync(files[2]!, genuine[2]!.subarray(0, 16));
    // A genuine start followed by a hole: 200 MB the bin does not read.
    truncateSync(files[3]!, 200 * 1024 * 1024);
    const at = files.map(identity);
    await helpWorks();
    for (const [i, f] of files.entries()) assertRemade(f, at[i]!);
  });

  test("accepted code is used as it is; the key is 0600 in the private data folder, and one others can read is replaced", async () => {
    await helpWorks();
    const files = readdirSync(folder).map((f) => join(folder, f));
    const before = new Map(files.map((f) => [f, identity(f)]));
    await helpWorks();
    for (const f of files) assert.equal(identity(f), before.get(f), `${f} is used, not made again`);

    const keyFile = join(copy.userData, "hands", "code-cache.key");
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(statSync(keyFile).size, 32);
    assert.equal(statSync(join(copy.userData, "hands")).mode & 0o777, 0o700);
    const oldKey = readFileSync(keyFile);
    chmodSync(keyFile, 0o644);
    await helpWorks();
    assert.notDeepEqual(readFileSync(keyFile), oldKey, "a new key");
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    for (const f of files) assertRemade(f, before.get(f)!);
  });

  test("code planted where the bin kept it before (beside the bundle, ~/.cache) is not read", async () => {
    const build = basename(folder);
    const planted = plantedV8Code();
    for (const dir of [
      join(copy.root, "bundle", ".v8-cache", build),
      join(copy.userCache, "hands", "v8-cache", build),
    ]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, basename(entry)), planted, { mode: 0o600 });
    }
    // The private folder's own cache gone: the bin compiles from source, and still ignores those.
    rmSync(folder, { recursive: true });
    await helpWorks();
    assert.ok(existsSync(entry), "made in the private folder");
  });
});
