#!/usr/bin/env node
// Durability: SIGKILL a writer in the middle of writes, reopen, check — repeated on one file
// (--kills, default 25, each after a random number of commits); then the property over
// random sessions (--sessions, default 300): every compressed chunk's originals are recallable.
//   npm run bench:memory-durability -- [--kills 25] [--sessions 300] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "@hands/memory";
import { checkRandomSession, killMidWrites } from "@hands/memory/durability";

const argv = process.argv.slice(2);
const opt = (name, d) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : d);
const KILLS = opt("--kills", 25);
const SESSIONS = opt("--sessions", 300);
const asJson = argv.includes("--json");
const dir = mkdtempSync(join(tmpdir(), "hands-durability-"));
const path = join(dir, "kill.db");

let seed = 5;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const all = [];
let corrupt = 0;
let lost = 0;
for (let k = 0; k < KILLS; k++) {
  const committed = await killMidWrites(path, 20 + Math.floor(rnd() * 1500));
  all.push(...committed);
  const store = new SqliteStore({ path, dimensions: 256 });
  const check = store.db.pragma("integrity_check")[0]?.integrity_check;
  if (check !== "ok") corrupt++;
  const found = new Set(store.getMany(all).map((c) => c.id));
  lost += all.filter((id) => !found.has(id)).length;
  store.close();
}

let failures = 0;
let summaries = 0;
const failed = [];
for (let s = 1; s <= SESSIONS; s++) {
  try {
    summaries += (await checkRandomSession(dir, 1000 + s)).summaries;
  } catch (err) {
    failures++;
    failed.push(String(err.message));
  }
}
rmSync(dir, { recursive: true, force: true });

const report = {
  kills: KILLS,
  committedChunks: all.length,
  corruptReopens: corrupt,
  lostCommitted: lost,
  sessions: SESSIONS,
  summariesChecked: summaries,
  sessionFailures: failures,
  ...(failed.length ? { failed: failed.slice(0, 5) } : {}),
};
if (asJson) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `SIGKILL ×${KILLS}: ${all.length} committed chunks, ${corrupt} corrupt reopens, ${lost} committed chunks lost`,
  );
  console.log(`random sessions ×${SESSIONS}: ${summaries} summaries expanded, ${failures} failures`);
}
process.exitCode = corrupt || lost || failures ? 1 : 0;
