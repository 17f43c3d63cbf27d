// A node:test reporter that prints, once the run ends, the test files that took longest (the
// sum of their top-level tests' durations), so a slow default suite shows where its time goes.
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type !== "test:pass" && event.type !== "test:fail") || event.data.nesting !== 0) continue;
    const file = event.data.file ?? "?";
    perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  yield `\n# slowest test files (sum of top-level tests; all files ${(total / 1000).toFixed(0)} s):\n`;
  for (const [file, ms] of rows.slice(0, 15))
    yield `#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(`${process.cwd()}/`, "")}\n`;
}
