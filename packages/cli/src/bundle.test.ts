// The bin runs the bundle that `npm run build` makes (scripts/bundle.mjs): what it loads before
// the first model request leaves, and the files its rewritten `import.meta.url`s point at.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  assert.match(readFileSync(BIN, "utf8"), /^import "\.\.\/bundle\/hands\.js";$/m);
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
