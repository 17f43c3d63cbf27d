// The bin runs the bundle that `npm run build` makes (scripts/bundle.mjs): what it loads before
// the first model request leaves, the files its rewritten `import.meta.url`s point at, and the
// V8 code cache it keeps for the chunks (bin/hands.js).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startScriptedServer } from "@hands/llm";
import { buildFolder, copyOfBin } from "./testing/bin-copy.js";
import { BIN, cleanEnv, runBin, runHands, scriptedRunArgs } from "./testing/cli-process.js";

const BUNDLE = fileURLToPath(new URL("../bundle/", import.meta.url));

// Preloaded into the bin: when the first HTTP request leaves, lists node's internal modules.
const PROBE = `import http from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { writeFileSync } from "node:fs";
const request = http.request;
let written = false;
http.request = function (...args) {
  if (!written) {
    written = true;
    writeFileSync(process.env.HANDS_TEST_LOADED, JSON.stringify(process.moduleLoadList));
  }
  return request.apply(this, args);
};
syncBuiltinESMExports();
`;

test("the bin runs the bundle; undici, https and tls are not loaded when the first request leaves", async () => {
  assert.match(readFileSync(BIN, "utf8"), /^const ENTRY = "\.\.\/bundle\/hands\.js";$/m);
  const scratch = mkdtempSync(join(tmpdir(), "hands-bundle-"));
  const probe = join(scratch, "probe.mjs");
  const loadedFile = join(scratch, "loaded.json");
  writeFileSync(probe, PROBE);
  const model = await startScriptedServer([{ content: "done" }]);
  try {
    const r = await runHands(
      [...scriptedRunArgs(model.url, scratch), "go"],
      cleanEnv(scratch, { NODE_OPTIONS: `--import=${probe}`, HANDS_TEST_LOADED: loadedFile }),
      scratch,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout.trim().split("\n").at(-1)!).answer, "done");
    const loaded = JSON.parse(readFileSync(loadedFile, "utf8")) as string[];
    assert.ok(loaded.includes("NativeModule http"), "the probe saw the request");
    const early = loaded.filter((m) => /undici|^NativeModule (https|tls|_tls_wrap)$/.test(m));
    assert.deepEqual(early, [], "loaded before the first request");
  } finally {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});

test("every rewritten import.meta.url in the bundle names the file it came from, inside its package", () => {
  const require = createRequire(join(BUNDLE, "hands.js"));
  const calls = new Set<string>();
  for (const f of readdirSync(BUNDLE).filter((f) => f.endsWith(".js")))
    for (const m of readFileSync(join(BUNDLE, f), "utf8").matchAll(
      /__handsFileUrl\(\s*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)"\s*\)/g,
    ))
      calls.add(JSON.stringify(m.slice(1)));
  // @hands/agent (grammar loader, shell parser, schema validator), @hands/memory (SQLite),
  // @hands/cli (its package.json for --version).
  assert.ok(calls.size >= 5, `found ${[...calls]}`);
  for (const call of calls) {
    const [pkg, main, file] = JSON.parse(call) as [string, string, string];
    const resolved = require.resolve(pkg);
    assert.ok(resolved.endsWith(main), `${pkg} resolves to ${resolved}, not …/${main}`);
    const path = resolved.slice(0, resolved.length - main.length) + file;
    assert.ok(existsSync(path), `${pkg}: ${file} does not exist (${path})`);
  }
});

const PY =
  "class Greeter:\n    def hello(self, name):\n        return f'hi {name}'\n\ndef main():\n    print(Greeter().hello('x'))\n";

/**
 * One task that calls code_outline on a Python file: its implementation and web-tree-sitter are
 * loaded with import() from inside the chunks, so a broken import() in cached code shows here.
 * Returns the outline the tool gave and the final answer.
 */
async function outlineRun(
  copy: { bin: string; userCache: string; userData: string },
  env: Record<string, string> = {},
  workspace: { prepare?: (ws: string) => void; check?: (ws: string) => void } = {},
): Promise<{ outline: string; answer: string }> {
  const ws = mkdtempSync(join(tmpdir(), "hands-cache-ws-"));
  writeFileSync(join(ws, "greet.py"), PY);
  workspace.prepare?.(ws);
  const model = await startScriptedServer([
    { content: "", toolCalls: [{ name: "code_outline", arguments: { path: "greet.py" } }] },
    { content: "done" },
  ]);
  try {
    const r = await runBin(
      copy.bin,
      [...scriptedRunArgs(model.url, ws), "outline greet.py"],
      cleanEnv(ws, { XDG_CACHE_HOME: copy.userCache, XDG_DATA_HOME: copy.userData, ...env }),
      ws,
    );
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const end = events.find((e) => e.type === "tool_end");
    assert.ok(end, r.stdout);
    workspace.check?.(ws);
    return { outline: String(end.output), answer: events.at(-1).answer };
  } finally {
    await model.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

function cacheFiles(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]));
}

test("code cache: made by the first run, used unchanged by the next, same results; damaged or planted files are remade", async () => {
  const copy = copyOfBin();
  try {
    const first = await outlineRun(copy);
    assert.match(first.outline, /class Greeter/);
    assert.match(first.outline, /def hello\(self, name\)/);
    assert.match(first.outline, /def main\(\)/);
    assert.equal(first.answer, "done");
    const folder = buildFolder(copy.cache);
    const made = cacheFiles(folder);
    const entry = [...made.keys()].find((f) => f.startsWith("hands.js."));
    assert.ok(entry, `the entry chunk's code is saved: ${[...made.keys()]}`);
    assert.ok(made.size >= 5, `the start-up chunks' code is saved: ${[...made.keys()]}`);
    for (const [f, bytes] of made) assert.ok(bytes.length > 100, `${f}: ${bytes.length} bytes`);
    assert.ok(![...made.keys()].some((f) => f.endsWith(".tmp")), "no temporary files left");

    // Accepted by V8: nothing is written again, and the run gives what the first gave.
    const second = await outlineRun(copy);
    assert.deepEqual(second, first);
    assert.deepEqual(cacheFiles(folder), made);

    // Garbage, a truncated file and a symlink to a file elsewhere, at three caches' names.
    const others = [...made.keys()].filter((f) => f !== entry);
    const [garbage, truncated, planted] = [entry, others[0] ?? "", others[1] ?? ""];
    writeFileSync(join(folder, garbage), Buffer.alloc(made.get(garbage)!.length, 0x5a));
    writeFileSync(join(folder, truncated), made.get(truncated)!.subarray(0, 10));
    const victim = join(copy.root, "victim.txt");
    writeFileSync(victim, "not a cache");
    rmSync(join(folder, planted));
    symlinkSync(victim, join(folder, planted));
    const third = await outlineRun(copy);
    assert.deepEqual(third, first);
    const remade = cacheFiles(folder);
    assert.ok(
      remade.get(garbage)!.length > 100 && remade.get(garbage)![0] !== 0x5a,
      "the garbage file is remade",
    );
    assert.ok(remade.get(truncated)!.length > 10, "the truncated file is remade");
    assert.ok(!lstatSync(join(folder, planted)).isSymbolicLink(), "the symlink is replaced");
    assert.ok(!existsSync(copy.userCache), "nothing in the user's cache folder");
    assert.ok(!existsSync(join(copy.root, "bundle", ".v8-cache")), "nothing beside the bundle");
    assert.equal(readFileSync(victim, "utf8"), "not a cache", "the symlink's target is untouched");
  } finally {
    rmSync(copy.root, { recursive: true, force: true });
  }
});

test("code cache: other V8 flags get files of their own; HANDS_NO_CODE_CACHE=1 saves none", async () => {
  const run = promisify(execFile);
  const tagOf = async (flags: string[]) =>
    (
      await run(process.execPath, [...flags, "-p", "require('node:v8').cachedDataVersionTag()"])
    ).stdout.trim();
  const flag = "--max-old-space-size=300";
  assert.notEqual(await tagOf([flag]), await tagOf([]), "the flag changes V8's tag");

  const copy = copyOfBin();
  try {
    const plain = await outlineRun(copy);
    const folder = buildFolder(copy.cache);
    const before = cacheFiles(folder);
    const flagged = await outlineRun(copy, { NODE_OPTIONS: flag });
    assert.deepEqual(flagged, plain);
    const after = cacheFiles(folder);
    for (const [f, bytes] of before) assert.deepEqual(after.get(f), bytes, `${f} is left as it was`);
    assert.ok(after.size >= before.size * 2, "the flagged run saved files of its own");

    rmSync(copy.cache, { recursive: true });
    assert.deepEqual(await outlineRun(copy, { HANDS_NO_CODE_CACHE: "1" }), plain);
    assert.ok(
      !existsSync(copy.cache) && !existsSync(copy.userCache),
      "nothing saved with HANDS_NO_CODE_CACHE=1",
    );
  } finally {
    rmSync(copy.root, { recursive: true, force: true });
  }
});

test("code cache: kept in the user's private data folder; one others can write, or a relative home's, is not used", async () => {
  const copy = copyOfBin();
  try {
    const first = await outlineRun(copy);
    assert.match(first.outline, /def main\(\)/);
    const base = copy.cache;
    const folder = buildFolder(base);
    assert.equal(lstatSync(folder).mode & 0o777, 0o700, "a private folder");
    const made = cacheFiles(folder);
    assert.ok(made.size >= 5, `saved: ${[...made.keys()]}`);
    assert.deepEqual(await outlineRun(copy), first);
    assert.deepEqual(cacheFiles(folder), made, "used, not made again");

    // A folder others can write to is neither read nor written.
    chmodSync(folder, 0o777);
    for (const f of made.keys()) writeFileSync(join(folder, f), "planted by someone else");
    assert.deepEqual(await outlineRun(copy), first);
    for (const f of made.keys())
      assert.equal(readFileSync(join(folder, f), "utf8"), "planted by someone else");

    // With a relative home (HOME=".", no XDG_DATA_HOME) the folder would be in the working
    // directory, a workspace that may be hostile: code planted there is not read, none is saved.
    chmodSync(folder, 0o700);
    const planted = join(".local", "share", "hands", "v8-cache", basename(folder));
    const noHome = { HOME: ".", XDG_DATA_HOME: "" };
    assert.deepEqual(
      await outlineRun(copy, noHome, {
        prepare: (ws) => {
          mkdirSync(join(ws, planted), { recursive: true, mode: 0o700 });
          for (const f of made.keys()) writeFileSync(join(ws, planted, f), "planted by the workspace");
        },
        check: (ws) => {
          assert.deepEqual(readdirSync(join(ws, planted)).sort(), [...made.keys()].sort());
          for (const f of made.keys())
            assert.equal(readFileSync(join(ws, planted, f), "utf8"), "planted by the workspace");
        },
      }),
      first,
    );
    await outlineRun(copy, noHome, {
      check: (ws) => assert.ok(!existsSync(join(ws, ".local")), "nothing saved in the workspace"),
    });

    // Old builds' folders beyond the three newest are removed when a new build's is made.
    rmSync(folder, { recursive: true });
    const old = ["0000000000000001", "0000000000000002", "0000000000000003", "0000000000000004"];
    for (const [i, b] of old.entries()) {
      mkdirSync(join(base, b), { recursive: true });
      utimesSync(join(base, b), 1000 + i, 1000 + i);
    }
    mkdirSync(join(base, "not-a-build"));
    await outlineRun(copy);
    assert.deepEqual(
      readdirSync(base).sort(),
      [...old.slice(1), basename(folder), "not-a-build"].sort(),
      "the oldest build's folder is gone, others are kept",
    );
  } finally {
    rmSync(copy.root, { recursive: true, force: true });
  }
});
