#!/usr/bin/env node
// Runs the compiled tests (packages/*/dist/**/*.test.js, evals/*.test.mjs) with node's test runner.
// Files named *.heavy.test.* (cold image exports, whole language-server start-ups) are left to
// `npm run test:heavy` (`--heavy`), so the default suite stays short on CI's two cores.
// Extra arguments pass through (e.g. a package's dist folder to run just that one).
//
// A watchdog ends the run when it takes longer than HANDS_TEST_BUDGET_S (40 min by default):
// it prints the processes still running, so a hung test is named in CI's log instead of the
// job being killed silently at its own limit.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const defaults = [
  "packages/llm/dist",
  "packages/sandbox/dist",
  "packages/memory/dist",
  "packages/serve/dist",
  "packages/agent/dist",
  "packages/hands/dist",
  "packages/dashboard/dist",
  "packages/cli/dist",
  "evals",
];

const args = process.argv.slice(2);
const heavy = args.includes("--heavy");
const targets = args.filter((a) => a !== "--heavy");
const roots = targets.length ? targets : defaults.filter((p) => existsSync(p));

const isTest = (name) => /\.test\.(c|m)?js$/.test(name);
const isHeavy = (name) => /\.heavy\.test\.(c|m)?js$/.test(name);

function collect(path, out) {
  if (!statSync(path).isDirectory()) {
    out.push(path);
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const p = join(path, entry.name);
    if (entry.isDirectory()) collect(p, out);
    else if (isTest(entry.name) && isHeavy(entry.name) === heavy) out.push(p);
  }
}

const files = [];
for (const r of roots) collect(r, files);
files.sort();
if (files.length === 0) {
  console.error(`run-tests: no ${heavy ? "heavy " : ""}test files under ${roots.join(", ")}`);
  process.exit(1);
}

const budgetS = Number(process.env.HANDS_TEST_BUDGET_S ?? 2400);
const reporters = [
  "--test-reporter=tap",
  "--test-reporter-destination=stdout",
  `--test-reporter=${new URL("./file-times-reporter.mjs", import.meta.url).pathname}`,
  "--test-reporter-destination=stdout",
];
const child = spawn(process.execPath, ["--test", "--test-concurrency=2", ...reporters, ...files], {
  stdio: "inherit",
  detached: true,
});
const watchdog = setTimeout(() => {
  console.error(`\nrun-tests: the run took over ${budgetS} s; what is still running:`);
  // The run is a session of its own (detached): its test files and what they started.
  spawnSync("ps", ["--forest", "-o", "pid,ppid,etime,args", "-s", String(child.pid)], { stdio: "inherit" });
  spawnSync("docker", ["ps", "--format", "{{.ID}} {{.RunningFor}} {{.Command}}"], { stdio: "inherit" });
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
  process.exit(1);
}, budgetS * 1000);
for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => {
    try {
      process.kill(-child.pid, sig);
    } catch {}
  });
child.on("exit", (code, signal) => {
  clearTimeout(watchdog);
  process.exit(code ?? (signal ? 1 : 0));
});
