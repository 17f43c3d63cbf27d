#!/usr/bin/env node
// Runs every compiled test (packages/*/dist/**/*.test.js, evals/*.test.mjs) with node's test runner.
// Extra arguments pass through (e.g. a package's dist folder to run just that one).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

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

const targets = process.argv.slice(2).length ? process.argv.slice(2) : defaults.filter((p) => existsSync(p));
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...targets], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
