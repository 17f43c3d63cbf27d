// The bin runs the bundle that `npm run build` makes (scripts/bundle.mjs): what it loads before
// the first model request leaves, and the files its rewritten `import.meta.url`s point at.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "@hands/llm";
import { BIN, cleanEnv, runHands, scriptedRunArgs } from "./testing/cli-process.js";

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
  assert.match(readFileSync(BIN, "utf8"), /new URL\("\.\.\/bundle\/hands\.cjs", import\.meta\.url\)/);
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
  const require = createRequire(join(BUNDLE, "hands.cjs"));
  const calls = new Set<string>();
  for (const f of readdirSync(BUNDLE).filter((f) => /\.c?js$/.test(f)))
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

test("the bin's code cache: written after a run, then used; a corrupt or planted one is replaced", async () => {
  // A copy of the bin and bundle inside the package (so the bundle resolves the same
  // dependencies), with a cache folder of its own.
  const copy = mkdtempSync(join(BUNDLE, "..", ".cache-test-"));
  const scratch = mkdtempSync(join(tmpdir(), "hands-cache-"));
  mkdirSync(join(copy, "bin"));
  mkdirSync(join(copy, "bundle"));
  copyFileSync(BIN, join(copy, "bin", "hands.js"));
  copyFileSync(join(BUNDLE, "hands.cjs"), join(copy, "bundle", "hands.cjs"));
  const caches = () => readdirSync(join(copy, "bundle")).filter((f) => f.endsWith(".cache"));
  const model = await startScriptedServer(Array.from({ length: 4 }, () => ({ content: "done" })));
  const run = async () => {
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(copy, "bin", "hands.js"), ...scriptedRunArgs(model.url, scratch), "go"],
        {
          env: cleanEnv(scratch, { XDG_CACHE_HOME: join(scratch, "xdg-cache") }),
          cwd: scratch,
        },
      );
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.on("close", (code) => resolve({ code, out, err }));
    });
    assert.equal(r.code, 0, r.err);
    assert.equal(JSON.parse(r.out.trim().split("\n").at(-1)!).answer, "done");
    assert.equal(r.err, "", "nothing on stderr (no experimental-loader warning)");
  };
  try {
    await run();
    assert.equal(caches().length, 1, `one cache file after the first run: ${caches()}`);
    const cacheFile = join(copy, "bundle", caches()[0]!);
    const good = readFileSync(cacheFile);
    assert.ok(good.length > 100_000, `a cache of the run's code, ${good.length} bytes`);

    // Accepted: a rejected or missing cache is rewritten at exit, an accepted one is not.
    const before = statSync(cacheFile).mtimeMs;
    await run();
    assert.equal(statSync(cacheFile).mtimeMs, before, "the cache was used, not rewritten");

    // Corrupt (same length, so only V8's own checks can tell): rejected, the run is the same,
    // and a good cache replaces it.
    writeFileSync(cacheFile, Buffer.alloc(good.length, 0x5a));
    await run();
    assert.notDeepEqual(readFileSync(cacheFile).subarray(0, 64), Buffer.alloc(64, 0x5a));

    // A symlink planted where the cache goes: replaced, its target left alone.
    const target = join(scratch, "not-yours");
    writeFileSync(target, "keep");
    rmSync(cacheFile);
    symlinkSync(target, cacheFile);
    await run();
    assert.equal(readFileSync(target, "utf8"), "keep");
    assert.ok(!lstatSync(cacheFile).isSymbolicLink(), "the symlink was replaced by a real file");
    assert.deepEqual(
      readdirSync(join(copy, "bundle")).filter((f) => !f.endsWith(".cache") && f !== "hands.cjs"),
      [],
    );
  } finally {
    await model.close();
    rmSync(copy, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
});
