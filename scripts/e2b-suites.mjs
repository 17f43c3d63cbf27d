#!/usr/bin/env node
// E2B's own JS SDK tests against a real `hands serve`, one file at a time, with a per-file
// pass/fail table. Nothing of E2B's is in this repository: extract its tests yourself, e.g.
//   git --git-dir=<E2B mirror> archive HEAD packages/js-sdk/tests packages/js-sdk/package.json | tar x -C /tmp/e2b
//   cd /tmp/e2b && npm i -D -E vite@8.3.8 vitest@4.1.12 msw@2.12.10 dotenv@16.4.5
// then
//   node scripts/e2b-suites.mjs /tmp/e2b/packages/js-sdk [--backend bwrap|docker|gvisor]
//     [--only sandbox/files/write.test.ts,…] [--timeout 120000] [--json out.json] [--verbose]
//     [--repo <checkout with packages/serve/dist>] [--public-traffic]
// With --suite code-interpreter the folder is code-interpreter's extracted js/ (its tests/, run
// against the `code-interpreter-v1` template; `../src` is the npm @e2b/code-interpreter package
// and so is `e2b`, which it re-exports — one module, so the SDK's error classes are the tests'): there
//   npm i -D -E vite@8.3.8 vitest@4.1.12 dotenv@16.4.5
// The tests import the SDK from `../src`; here every such import is the npm `e2b` package this
// repository depends on (a deep import of an SDK internal fails: those are E2B's unit tests,
// which do not talk to a server). Timeouts are longer than E2B's (a loaded, shared machine).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const flag = (name, d) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : d;
};
// --repo: another checkout's build (e.g. a copy of the code before a change, for a baseline).
const REPO = resolve(flag("repo", fileURLToPath(new URL("..", import.meta.url))));
const sdkDir = argv[0] && !argv[0].startsWith("--") ? resolve(argv[0]) : undefined;
if (!sdkDir || !existsSync(join(sdkDir, "tests"))) {
  console.error("usage: node scripts/e2b-suites.mjs <extracted packages/js-sdk folder> [--backend bwrap]");
  process.exit(2);
}
const BACKEND = flag("backend", "bwrap");
const SUITE = flag("suite", "js-sdk");
const INTERPRETER = SUITE === "code-interpreter";
if (SUITE !== "js-sdk" && !INTERPRETER) {
  console.error(`unknown suite ${SUITE}: js-sdk or code-interpreter`);
  process.exit(2);
}
const TIMEOUT = Number(flag("timeout", "120000"));
const only = flag("only", "").split(",").filter(Boolean);
const jsonOut = flag("json", undefined);
const vitestBin = join(sdkDir, "node_modules", ".bin", "vitest");
const vitestAlt = join(sdkDir, "..", "..", "node_modules", ".bin", "vitest");
const vitest = existsSync(vitestBin) ? vitestBin : vitestAlt;
if (!existsSync(vitest)) {
  console.error(`no vitest under ${sdkDir} or two folders up: npm i -D -E vite@8.3.8 vitest@4.1.12 there`);
  process.exit(2);
}

const BACKENDS = {
  bwrap: { backend: "bwrap" },
  docker: { backend: "docker" },
  gvisor: { backend: "docker", runtime: "runsc" },
};
const spec = BACKENDS[BACKEND];
if (!spec) {
  console.error(`unknown backend ${BACKEND}: bwrap, docker or gvisor`);
  process.exit(2);
}

function testFiles(dir) {
  const out = [];
  for (const n of readdirSync(dir).sort()) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...testFiles(p));
    else if (n.endsWith(".test.ts")) out.push(p);
  }
  return out;
}
const testsDir = join(sdkDir, "tests");
// (code-interpreter's tests/runtimes are Bun's and Deno's own test runners, not vitest.)
let files = (
  INTERPRETER
    ? testFiles(testsDir).filter((f) => !f.includes("/runtimes/"))
    : testFiles(join(testsDir, "sandbox"))
).map((f) => relative(testsDir, f));
if (only.length) files = files.filter((f) => only.some((o) => f === o || f.includes(o)));
// Tests that mock the SDK's transport or modules never reach a server: not run (--all runs them).
const mocked = (f) => /from ['"]msw|vi\.(do)?[mM]ock\(/.test(readFileSync(join(testsDir, f), "utf8"));
const notRun = argv.includes("--all") ? [] : files.filter(mocked);
files = files.filter((f) => !notRun.includes(f));

// The tests fetch `https://PORT-ID.<E2B_DOMAIN>` (getHost) themselves: with no wildcard DNS and
// TLS in front of the sandbox address here, such a fetch goes to E2B_SANDBOX_URL naming the
// sandbox and port in the headers the SDK uses for its own calls (the only change to what the
// tests send). Written outside the extracted tests.
const hostSetup = join(mkdtempSync(join(tmpdir(), "hs-e2bsuite-setup-")), "host-fetch.setup.mjs");
writeFileSync(
  hostSetup,
  `// written by hands' scripts/e2b-suites.mjs
const real = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const target = typeof input === "string" || input instanceof URL ? String(input) : input.url;
  const u = new URL(target);
  const m = /^(\\d+)-([a-z0-9]+)\\.localhost$/.exec(u.hostname);
  const to = process.env.E2B_SANDBOX_URL;
  if (!m || !to) return real(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set("e2b-sandbox-port", m[1]);
  headers.set("e2b-sandbox-id", m[2]);
  return real(new URL(u.pathname + u.search, to), { ...init, headers });
};
`,
);

// Every `../src…` import of the SDK's public surface becomes the npm package.
const e2bEntry = join(REPO, "node_modules", "e2b", "dist", "index.mjs");
const interpreterEntry = join(REPO, "node_modules", "@e2b", "code-interpreter", "dist", "index.mjs");
const aliases = INTERPRETER
  ? `[{ find: /^(\\.\\.\\/)+src(\\/index(\\.js)?)?$/, replacement: ${JSON.stringify(interpreterEntry)} }, { find: /^e2b$/, replacement: ${JSON.stringify(interpreterEntry)} }]`
  : `[{ find: /^(\\.\\.\\/)+src(\\/index(\\.js)?|\\/errors(\\.js)?)?$/, replacement: ${JSON.stringify(e2bEntry)} }]`;
// One per run: runs for several backends may share the extracted tests.
const configPath = join(sdkDir, `vitest.hands.${process.pid}.config.mjs`);
writeFileSync(
  configPath,
  `// written by hands' scripts/e2b-suites.mjs
export default {
  resolve: { alias: ${aliases} },
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: ${TIMEOUT},
    hookTimeout: ${TIMEOUT},
    isolate: true,
    environment: 'node',
    setupFiles: ${INTERPRETER ? `[${JSON.stringify(hostSetup)}]` : `['tests/globalFetchFallback.setup.ts', ${JSON.stringify(hostSetup)}]`},
  },
}
`,
);

const { startServe } = await import(join(REPO, "packages/serve/dist/index.js"));
const dataDir = mkdtempSync(join(tmpdir(), "hs-e2bsuite-"));
const base = { ...spec, cpus: 1, memoryMB: 512 };
const serve = await startServe({
  dataDir,
  warm: {},
  capacity: 40,
  // --public-traffic: E2B's default (a sandbox's ports open without its traffic token).
  publicTrafficByDefault: argv.includes("--public-traffic"),
  templates: {
    base,
    bwrap: { backend: "bwrap", cpus: 1, memoryMB: 512 },
    "code-interpreter-v1": { ...base, memoryMB: 1024 },
  },
});
const { key } = await serve.keys.create("e2b-suite", "k", {
  maxSandboxes: 100,
  maxCpus: 100,
  maxMemoryMB: 1e6,
});
const env = {
  ...process.env,
  E2B_API_KEY: key,
  E2B_API_URL: serve.apiUrl,
  E2B_SANDBOX_URL: serve.sandboxUrl,
  E2B_DOMAIN: "localhost",
};
delete env.E2B_DEBUG;

function runFile(file) {
  const out = join(dataDir, `result-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn(
      vitest,
      ["run", "--config", configPath, "--reporter=json", `--outputFile=${out}`, join("tests", file)],
      { cwd: sdkDir, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let log = "";
    child.stdout.on("data", (d) => {
      log += d;
    });
    child.stderr.on("data", (d) => {
      log += d;
    });
    child.on("close", () => {
      const row = {
        file,
        passed: 0,
        failed: 0,
        skipped: 0,
        seconds: (Date.now() - started) / 1000,
        failures: [],
      };
      try {
        const r = JSON.parse(readFileSync(out, "utf8"));
        for (const suite of r.testResults) {
          for (const a of suite.assertionResults) {
            if (a.status === "passed") row.passed++;
            else if (a.status === "failed") {
              row.failed++;
              row.failures.push({
                name: a.fullName,
                message: (a.failureMessages ?? []).join("\n").slice(0, 600),
              });
            } else row.skipped++;
          }
          if (suite.assertionResults.length === 0 && suite.status === "failed")
            row.error = (suite.message || "failed to load").slice(0, 600);
        }
      } catch {
        row.error = `no result: ${log.slice(-600)}`;
      }
      done(row);
    });
  });
}

const rows = [];
try {
  for (const f of files) {
    const row = await runFile(f);
    rows.push(row);
    const mark = row.error ? "ERROR" : row.failed ? "FAIL" : "ok";
    console.log(
      `${f.padEnd(48)} ${String(row.passed).padStart(4)} passed ${String(row.failed).padStart(3)} failed ${String(row.skipped).padStart(3)} skipped  ${mark}  (${row.seconds.toFixed(1)} s)`,
    );
    if (argv.includes("--verbose")) {
      for (const x of row.failures)
        console.log(`    ✗ ${x.name}\n      ${x.message.split("\n").slice(0, 3).join("\n      ")}`);
      if (row.error) console.log(`    ${row.error.split("\n").slice(0, 4).join("\n    ")}`);
    }
  }
} finally {
  await serve.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(configPath, { force: true });
  rmSync(join(hostSetup, ".."), { recursive: true, force: true });
}
if (notRun.length) console.log(`\nnot run (mocked transport, no server involved): ${notRun.join(", ")}`);
const sum = (k) => rows.reduce((a, r) => a + r[k], 0);
console.log(
  `\n${BACKEND}: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped; ${rows.filter((r) => r.error).length} files did not load`,
);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ backend: BACKEND, rows }, null, 2));
