// No import cycles between files anywhere in the repository: every package's compiled ESM
// (static imports, re-exports and dynamic import() alike), the benches, evals, scripts and
// examples. madge builds the graph; a fixture with known cycles proves it sees each kind.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

interface MadgeResult {
  circular(): string[][];
  obj(): Record<string, string[]>;
}
type Madge = (paths: string[], config: Record<string, unknown>) => Promise<MadgeResult>;

async function graph(paths: string[]): Promise<MadgeResult> {
  // madge ships no type declarations.
  const { default: madge } = (await import("madge" as string)) as { default: Madge };
  return madge(paths, { fileExtensions: ["js", "mjs"], excludeRegExp: [/node_modules/] });
}

test("madge finds cycles through static imports, re-exports and dynamic import()", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hands-cycles-"));
  try {
    writeFileSync(join(dir, "a.js"), 'export async function f() { return import("./b.js"); }\n');
    writeFileSync(join(dir, "b.js"), 'import { f } from "./a.js";\nexport const g = f;\n');
    writeFileSync(join(dir, "c.mjs"), 'export { d } from "./d.mjs";\n');
    writeFileSync(join(dir, "d.mjs"), 'import "./c.mjs";\nexport const d = 1;\n');
    writeFileSync(join(dir, "e.js"), 'import "./a.js";\n');
    const cycles = (await graph([dir])).circular().map((c) => [...c].sort().join(" > "));
    assert.deepEqual(cycles.sort(), ["a.js > b.js", "c.mjs > d.mjs"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("no import cycles between files in the repository", async () => {
  const packages = readdirSync(join(ROOT, "packages"))
    .map((p) => join(ROOT, "packages", p, "dist"))
    .filter(existsSync);
  const others = ["bench", "evals", "scripts", "examples"].map((d) => join(ROOT, d)).filter(existsSync);
  assert.ok(packages.length >= 7, `compiled packages found: ${packages.join(", ")}`);
  const result = await graph([...packages, ...others]);
  const files = Object.keys(result.obj());
  // The graph really holds the code (a wrong path would find no cycle in nothing).
  assert.ok(files.length > 150, `only ${files.length} files in the graph`);
  assert.ok(files.some((f) => f.endsWith("cli/dist/run.js")));
  assert.deepEqual(result.circular(), []);
});
