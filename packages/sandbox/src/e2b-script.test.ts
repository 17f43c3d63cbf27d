// The parsers of what the e2b backend's helper programs print in the remote sandbox: that output
// is untrusted, so anything but the exact shape is refused (or, for one entry, skipped).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import type { Manifest, ManifestEntry } from "./e2b-script.js";
import { execScript, manifestCommand, parseExecOutput, parseManifest } from "./e2b-script.js";
import { diffManifests } from "./e2b-sync.js";

const listing = (raw: Buffer | string) => gzipSync(Buffer.from(raw)).toString("base64");

describe("parseManifest", () => {
  test("reads NUL-separated records: files, folders, links, other types", () => {
    const m = parseManifest(
      listing(
        "f\x003\x001.5\x00a b\nc\x00\x00d\x004096\x002.0\x00dir\x00\x00l\x001\x003.0\x00ln\x00a b\nc\x00p\x000\x004.0\x00fifo\x00\x00",
      ),
    );
    assert.deepEqual([...m.keys()], ["a b\nc", "dir", "ln", "fifo"]);
    assert.deepEqual(m.get("ln"), { type: "l", size: 1, mtime: "3.0", link: "a b\nc" });
    assert.equal(m.get("fifo")?.type, "o");
    assert.equal(parseManifest("").size, 0);
  });

  test("skips names that are not UTF-8, refuses malformed listings", () => {
    const bad = Buffer.concat([
      Buffer.from("f\x001\x001\x00"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from("\x00\x00"),
    ]);
    const ok = Buffer.from("f\x001\x001\x00good\x00\x00");
    assert.deepEqual([...parseManifest(listing(Buffer.concat([bad, ok]))).keys()], ["good"]);
    assert.throws(() => parseManifest("not base64!"), /malformed workspace listing/);
    assert.throws(
      () => parseManifest(Buffer.from("plain").toString("base64")),
      /malformed workspace listing/,
    );
    assert.throws(() => parseManifest(listing("f\x001\x001\x00")), /malformed/);
    assert.throws(() => parseManifest(listing("f\x00big\x001\x00x\x00\x00")), /malformed/);
    assert.throws(
      () => parseManifest(listing("f\x001\x001\x00x\x00")),
      /malformed/,
      "a field without its NUL",
    );
  });

  test("a gzip bomb is refused, not inflated", () => {
    const bomb = gzipSync(Buffer.alloc(80 << 20)).toString("base64");
    assert.throws(() => parseManifest(bomb), /malformed workspace listing/);
  });

  test("the listing command's own output parses (GNU find here)", (t) => {
    const dir = mkdtempSync(join(tmpdir(), "hands-manifest-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "x.txt"), "12345");
    const out = spawnSync("bash", ["-c", manifestCommand(dir)], { encoding: "utf8" });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(parseManifest(out.stdout).get("x.txt")?.size, 5);
  });
});

describe("parseExecOutput", () => {
  const tok = "__HANDS_abc__";
  test("whole streams, exit code and byte counts", () => {
    const r = parseExecOutput(`out\n\n${tok}\n\n${tok} 3 4 2\n`, `e\n\n${tok}\n`, tok, 100);
    assert.deepEqual(r, {
      stdout: "out\n",
      stderr: "e\n",
      exitCode: 3,
      stdoutBytes: 4,
      stderrBytes: 2,
      truncated: false,
    });
  });
  test("head and tail with the truncation marker", () => {
    const r = parseExecOutput(`HEAD\n${tok}\nTAIL\n${tok} 0 1000 0\n`, `\n${tok}\n`, tok, 8);
    assert.equal(r?.stdout, "HEAD\n[… 992 bytes of output truncated …]\nTAIL");
    assert.equal(r?.truncated, true);
  });
  test("anything else is not the wrapper's output", () => {
    assert.equal(parseExecOutput("plain", "", tok, 10), undefined);
    assert.equal(parseExecOutput(`x\n${tok} 0 1 0\n`, "", tok, 10), undefined);
    assert.equal(parseExecOutput(`x\n${tok}\n\n${tok} -1 1 0\n`, `\n${tok}\n`, tok, 10), undefined);
  });
  test("the wrapper run by bash here: caps, counts, exit code, cwd", (t) => {
    const dir = mkdtempSync(join(tmpdir(), "hands-wrap-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const script = execScript({
      token: tok,
      command: "head -c 5000 /dev/zero | tr '\\0' y; echo; pwd >&2; exit 4",
      dir: join(dir, "cap"),
      cwd: dir,
      headBytes: 100,
      tailBytes: 100,
      hasStdin: false,
      keepBackground: false,
    });
    const out = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    assert.equal(out.status, 0);
    const r = parseExecOutput(out.stdout, out.stderr, tok, 200);
    assert.equal(r?.exitCode, 4);
    assert.equal(r?.stdoutBytes, 5001);
    assert.equal(r?.stdout, `${"y".repeat(100)}\n[… 4801 bytes of output truncated …]\n${"y".repeat(99)}\n`);
    assert.equal(r?.stderr, `${dir}\n`);
  });
});

describe("diffManifests", () => {
  test("changes parents first, deletions children first, a type change is both", () => {
    const f = (size: number, mtime = "1") => ({ type: "f" as const, size, mtime });
    const d = { type: "d" as const, size: 0, mtime: "9" };
    const before: Manifest = new Map<string, ManifestEntry>([
      ["a", f(1)],
      ["dir", d],
      ["dir/x", f(1)],
      ["swap", f(1)],
    ]);
    const now: Manifest = new Map<string, ManifestEntry>([
      ["a", f(1, "2")],
      ["swap", { ...d, mtime: "5" }],
      ["swap/in", f(2)],
      ["new", { ...d, mtime: "7" }],
    ]);
    assert.deepEqual(diffManifests(before, now), {
      changed: ["a", "new", "swap", "swap/in"],
      deleted: ["swap", "dir/x", "dir"],
    });
    assert.deepEqual(diffManifests(now, now), { changed: [], deleted: [] });
  });
});

describe("loading", () => {
  test("the E2B SDK is imported only when an e2b sandbox starts", async () => {
    const { readFile } = await import("node:fs/promises");
    const here = new URL(".", import.meta.url);
    for (const file of ["index.js", "create.js", "e2b.js", "e2b-sync.js", "e2b-script.js", "e2b-errors.js"]) {
      const text = await readFile(new URL(file, here), "utf8");
      assert.doesNotMatch(
        text,
        /from\s+["']e2b["']|require\(["']e2b["']\)/,
        `${file} imports the SDK statically`,
      );
    }
    assert.match(await readFile(new URL("e2b.js", here), "utf8"), /import\("e2b"\)/);
  });
});
