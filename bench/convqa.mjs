#!/usr/bin/env node
// The answer-containment measure of bench/locomo.mjs on a second, generated dataset (see
// convqa-data.mjs for what it is and why): same methods, same measure, same defaults.
//   npm run bench:convqa -- [--seed N] [--conversations 6] [--budget 500,1000,2000] [--show N] [--dated-baseline] [--retrieve JSON] [--json]
import { generateConversations } from "./convqa-data.mjs";
import { measure, printReport } from "./qa-measure.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const seed = Number(opt("--seed", "20261201"));
const count = Number(opt("--conversations", "6"));
const budgets = opt("--budget", "500,1000,2000").split(",").map(Number);
const show = Number(opt("--show", "0"));
const asJson = argv.includes("--json");
// --dated-baseline: also BM25 with each turn's relative dates resolved as memory stores them.
const datedBaseline = argv.includes("--dated-baseline");
// --retrieve JSON: retrieval options to try (exploration only; the defaults are what is reported).
const retrieve = JSON.parse(opt("--retrieve", "{}"));

const conversations = generateConversations(seed, count);
const report = await measure({
  name: `generated conversations (seed ${seed}, ${count} conversations, ${conversations.reduce((n, c) => n + c.turns.length, 0)} turns)`,
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
