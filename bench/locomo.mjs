#!/usr/bin/env node
// LoCoMo: does the context memory assembles for a question contain its gold answer? Every turn
// of each conversation goes into a fresh memory in order (speaker, text, session date); each
// question of categories 1, 2 and 4 (single-hop, temporal, multi-hop: those with an answer
// in the conversation and not open-domain) asks for a context within the budget. See
// qa-measure.mjs for the measure and the baselines. No LLM calls.
//   npm run bench:locomo -- [--data FILE] [--budget 500,1000,2000] [--show N] [--dated-baseline] [--json]
import { existsSync, readFileSync } from "node:fs";
import { measure, printReport } from "./qa-measure.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
// shared/ sits beside the clone (../shared), or two levels up from a worktree.
const dataPath = opt(
  "--data",
  ["../shared", "../../shared"].map((d) => `${d}/data/locomo/locomo-dev.json`).find(existsSync) ??
    "../shared/data/locomo/locomo-dev.json",
);
const budgets = opt("--budget", "500,1000,2000").split(",").map(Number);
const show = Number(opt("--show", "0"));
const asJson = argv.includes("--json");
// --dated-baseline: also BM25 with each turn's relative dates resolved as memory stores them.
const datedBaseline = argv.includes("--dated-baseline");
// --retrieve JSON: retrieval options to try (exploration only; the defaults are what is reported).
const retrieve = JSON.parse(opt("--retrieve", "{}"));

/** LoCoMo's format → the measure's: turns with their session's date, questions with evidence keys. */
export function fromLocomo(data) {
  return data.map((item, ci) => {
    const conv = item.conversation;
    const turns = [];
    const sessions = Object.keys(conv)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
    for (const s of sessions) {
      const date = conv[`${s}_date_time`] ?? "";
      for (const t of conv[s]) turns.push({ key: t.dia_id, speaker: t.speaker, text: t.text, date });
    }
    const questions = item.qa
      .filter((q) => q.answer !== undefined)
      .map((q) => ({
        question: q.question,
        answer: String(q.answer),
        category: q.category,
        evidence: (q.evidence ?? []).flatMap((e) => e.split(/[;,]\s*/)).filter((e) => /^D\d+:\d+$/.test(e)),
      }));
    return { id: item.sample_id ?? String(ci), turns, questions };
  });
}

const conversations = fromLocomo(JSON.parse(readFileSync(dataPath, "utf8")));
const report = await measure({
  name: `LoCoMo (${dataPath})`,
  conversations,
  budgets,
  categories: [1, 2, 4],
  show,
  retrieve,
  datedBaseline,
  log: asJson ? (s) => process.stderr.write(`${s}\n`) : console.log,
});
if (asJson) console.log(JSON.stringify(report, null, 2));
else printReport(report);
