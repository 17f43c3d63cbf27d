#!/usr/bin/env node
// LoCoMo evidence recall: feed every turn of each conversation into memory in order, then for
// each question (categories 1–4) ask for context within a token budget and count which
// evidence turns it covers (directly, or through a compressed item that points back to them).
// Beside AdaMEM, two baselines on the same run: the last turns that fit (sliding window) and
// plain BM25 top-k packed to the budget. No LLM calls.
//   npm run bench:locomo -- --data FILE --budget 1000 [--json]
import { readFileSync } from "node:fs";
import { estimateTokens, Memory } from "@hands/memory";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const dataPath = opt("--data", "../shared/data/locomo/locomo-dev.json");
const budgets = (opt("--budget", "500,1000,2000") ?? "").split(",").map(Number);
const asJson = argv.includes("--json");
const ITEM_OVERHEAD = 4; // the id label every item carries in a context

const data = JSON.parse(readFileSync(dataPath, "utf8"));

function turnsOf(conv) {
  const turns = [];
  const sessions = Object.keys(conv)
    .filter((k) => /^session_\d+$/.test(k))
    .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
  for (const s of sessions) {
    const date = conv[`${s}_date_time`] ?? "";
    for (const t of conv[s]) turns.push({ dia: t.dia_id, speaker: t.speaker, text: t.text, date });
  }
  return turns;
}

const methods = ["adamem", "sliding_window", "bm25_topk"];
const totals = {};
for (const b of budgets) {
  totals[b] = {};
  for (const m of methods) totals[b][m] = { covered: 0, evidence: 0, perCat: {}, questions: 0, tokens: 0 };
}

let memoryMs = 0;
let queries = 0;
for (const [ci, item] of data.entries()) {
  const turns = turnsOf(item.conversation);
  const memory = new Memory({ scope: `locomo-${ci}` });
  const diaOf = new Map();
  for (const [i, t] of turns.entries()) {
    memory.step = i;
    const c = await memory.add({
      type: "user_input",
      content: `${t.speaker}: ${t.text}`,
      meta: { dia: t.dia, date: t.date },
    });
    diaOf.set(c.id, t.dia);
  }
  const tokensOf = turns.map((t) => estimateTokens(`${t.speaker}: ${t.text}`) + ITEM_OVERHEAD);
  // Every chunk an item points to (itself, or a summary's originals) covers its turn.
  const coveredBy = (ids) => {
    const out = new Set();
    for (const id of ids) {
      const d = diaOf.get(id);
      if (d) out.add(d);
      else {
        const r = memory.recall(id);
        for (const o of r?.originals ?? []) if (diaOf.get(o.id)) out.add(diaOf.get(o.id));
      }
    }
    return out;
  };
  for (const qa of item.qa) {
    if (qa.category < 1 || qa.category > 4) continue;
    const evidence = (qa.evidence ?? [])
      .flatMap((e) => e.split(/[;,]\s*/))
      .filter((e) => /^D\d+:\d+$/.test(e));
    if (evidence.length === 0) continue;
    for (const b of budgets) {
      const t0 = performance.now();
      const r = await memory.retrieve(qa.question, { budget: b, touch: false });
      memoryMs += performance.now() - t0;
      queries++;
      const results = {
        adamem: {
          covered: coveredBy(r.items.map((i) => i.chunk.id)),
          full: coveredBy(r.items.filter((i) => i.form === "full").map((i) => i.chunk.id)),
          tokens: r.tokens,
        },
        sliding_window: slidingWindow(turns, tokensOf, b),
        bm25_topk: bm25TopK(memory, qa.question, diaOf, b),
      };
      for (const m of methods) {
        const acc = totals[b][m];
        const hit = evidence.filter((e) => results[m].covered.has(e)).length;
        acc.covered += hit;
        if (results[m].full)
          acc.coveredFull = (acc.coveredFull ?? 0) + evidence.filter((e) => results[m].full.has(e)).length;
        acc.evidence += evidence.length;
        acc.questions++;
        acc.tokens += results[m].tokens;
        acc.perCat[qa.category] ??= { covered: 0, evidence: 0 };
        const pc = acc.perCat[qa.category];
        pc.covered += hit;
        pc.evidence += evidence.length;
      }
    }
  }
  memory.close();
}

function slidingWindow(turns, tokensOf, budget) {
  const covered = new Set();
  let used = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    if (used + tokensOf[i] > budget) break;
    used += tokensOf[i];
    covered.add(turns[i].dia);
  }
  return { covered, tokens: used };
}

function bm25TopK(memory, query, diaOf, budget) {
  const covered = new Set();
  let used = 0;
  for (const h of memory.store.searchText(query, { scope: memory.scope }, 200)) {
    const c = memory.store.get(h.id);
    const t = c.tokens + ITEM_OVERHEAD;
    if (used + t > budget) continue;
    used += t;
    covered.add(diaOf.get(h.id));
  }
  return { covered, tokens: used };
}

const round = (x) => Math.round(x * 1000) / 1000;
const report = { data: dataPath, budgets: {}, retrievalMsMean: round(memoryMs / Math.max(1, queries)) };
for (const b of budgets) {
  report.budgets[b] = {};
  for (const m of methods) {
    const a = totals[b][m];
    const perCategory = {};
    for (const [cat, pc] of Object.entries(a.perCat)) perCategory[cat] = round(pc.covered / pc.evidence);
    report.budgets[b][m] = {
      recall: round(a.covered / a.evidence),
      ...(a.coveredFull !== undefined ? { recallFullTextOnly: round(a.coveredFull / a.evidence) } : {}),
      perCategory,
      meanTokens: Math.round(a.tokens / a.questions),
      questions: a.questions,
    };
  }
}
if (asJson) console.log(JSON.stringify(report, null, 2));
else {
  console.log(`LoCoMo evidence recall (${dataPath})`);
  console.log("budget  method          recall  cat1   cat2   cat3   cat4   mean tokens");
  for (const b of budgets)
    for (const m of methods) {
      const r = report.budgets[b][m];
      const cat = (k) => String(r.perCategory[k] ?? "-").padEnd(6);
      console.log(
        `${String(b).padEnd(7)} ${m.padEnd(15)} ${String(r.recall).padEnd(7)} ${cat(1)} ${cat(2)} ${cat(3)} ${cat(4)} ${r.meanTokens}`,
      );
    }
}
