#!/usr/bin/env node
// Counts how many of the collected ReAct reply shapes (packages/llm/test-data/react-shapes.json)
// a build's react provider reads as expected, through the real OpenAI client over HTTP against
// the scripted server. The checks come from this tree; the provider from the build measured:
//   npm run bench:react-shapes                      # this tree's packages/llm/dist
//   npm run bench:react-shapes -- /tmp/main/packages/llm/dist --verbose
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const buildDir = path.resolve(args.find((a) => !a.startsWith("--")) ?? path.join(root, "packages/llm/dist"));

const { runShapeCases } = await import(
  pathToFileURL(path.join(root, "packages/llm/dist/react-shapes-check.js")).href
);
const build = await import(pathToFileURL(path.join(buildDir, "index.js")).href);
const data = JSON.parse(readFileSync(path.join(root, "packages/llm/test-data/react-shapes.json"), "utf8"));

console.log(`build: ${buildDir}`);
for (const honourStop of [false, true]) {
  const outcomes = await runShapeCases(build, data, { honourStop });
  const passed = outcomes.filter((o) => o.ok).length;
  // By what the case expects: the reply understood (a tool call or an answer), a false positive
  // look-alike read as its structure says (fp-*), or a correction for what is still refused.
  const groups = {};
  data.cases.forEach((c, i) => {
    const group = c.id.startsWith("fp-")
      ? "look-alikes"
      : "correction" in c.expect
        ? "corrected"
        : "understood";
    groups[group] ??= [0, 0];
    groups[group][0] += outcomes[i].ok ? 1 : 0;
    groups[group][1]++;
  });
  const held = data.cases.flatMap((c, i) => (c.heldOut ? [outcomes[i].ok] : []));
  if (held.length) groups["held out"] = [held.filter(Boolean).length, held.length];
  const split = Object.entries(groups)
    .map(([g, [ok, n]]) => `${g} ${ok}/${n}`)
    .join(", ");
  console.log(
    `server ${honourStop ? "honours" : "ignores"} stop: ${passed}/${outcomes.length} cases as expected (${split})`,
  );
  for (const o of outcomes)
    if (verbose || !o.ok) console.log(`  ${o.ok ? "ok  " : "FAIL"} ${o.id}: ${o.got}`);
}
