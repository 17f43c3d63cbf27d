// What a model would see, measured: for each question of a long conversation, the context
// each method assembles within a token budget, and whether it contains the gold answer
// (≥ 80 % of the answer's content words present, stop words dropped) — plus evidence recall
// counted in full text only (an evidence turn counts when its whole text is in the context).
// Methods: AdaMEM (Memory.context), plain BM25 over full turns packed to the budget (the same
// FTS5 index), and the sliding window (the last turns that fit). All three are rendered the
// same way (renderItems: in order, date headers), and the budget counts the rendered text.
// Shared by bench/locomo.mjs and bench/convqa.mjs; no LLM calls.
import { estimateTokens, isStopword, Memory, renderItems, resolveRelativeDates } from "@hands/memory";

export const METHODS = ["adamem", "bm25_full_turns", "sliding_window"];
/**
 * With `datedBaseline`: BM25 again, each turn followed by its relative dates resolved the way
 * memory stores them (see relative-dates.ts) — how much of AdaMEM's margin that alone explains.
 */
const DATED = "bm25_dated_turns";

const wordsOf = (s) =>
  String(s)
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** The answer's content words (stop words dropped), without repeats. */
export function answerWords(answer) {
  return [...new Set(wordsOf(answer).filter((w) => !isStopword(w)))];
}

/** Does `context` contain the answer: ≥ 80 % of its content words present? */
export function containsAnswer(context, answer) {
  const want = answerWords(answer);
  if (want.length === 0) return false;
  const have = new Set(wordsOf(context));
  return want.filter((w) => have.has(w)).length >= 0.8 * want.length;
}

/**
 * conversations: [{ id, turns: [{ key, speaker, text, date }], questions: [{ question, answer,
 * category, evidence: [key] }] }]. Returns the report; `show` prints the raw contexts of the
 * first `show` questions (a figure that looks too good is a bug until the contexts are read).
 */
export async function measure({
  name,
  conversations,
  budgets,
  categories,
  show = 0,
  log = console.log,
  retrieve = {},
  datedBaseline = false,
}) {
  const methods = datedBaseline ? [...METHODS, DATED] : METHODS;
  const totals = {};
  for (const b of budgets) {
    totals[b] = {};
    for (const m of methods)
      totals[b][m] = { contained: 0, questions: 0, evidence: 0, full: 0, tokens: 0, perCat: {} };
  }
  let shown = 0;
  let ms = 0;
  let queries = 0;
  let skipped = 0;
  for (const conv of conversations) {
    const memory = new Memory({ scope: `qa-${conv.id}` });
    const keyOf = new Map();
    const byKey = new Map();
    for (const [i, t] of conv.turns.entries()) {
      memory.step = i;
      const c = await memory.add({
        type: "user_input",
        content: `${t.speaker}: ${t.text}`,
        meta: { key: t.key, speaker: t.speaker, ...(t.date ? { date: t.date } : {}) },
      });
      keyOf.set(c.id, t.key);
      byKey.set(t.key, { id: c.id, text: c.content, step: i, date: t.date });
    }
    const piece = (t, id) => ({
      id,
      text: t.text,
      form: "full",
      step: t.step,
      ...(t.date ? { date: t.date } : {}),
    });
    const datedPiece = (t, id) => {
      const when = t.date ? resolveRelativeDates(t.text, t.date) : "";
      return { ...piece(t, id), text: when ? `${t.text} [${when}]` : t.text };
    };
    for (const qa of conv.questions) {
      if (!categories.includes(qa.category)) continue;
      if (answerWords(qa.answer).length === 0) {
        skipped++;
        continue;
      }
      for (const b of budgets) {
        const t0 = performance.now();
        const ctx = await memory.context(qa.question, { budget: b, touch: false, ...retrieve });
        ms += performance.now() - t0;
        queries++;
        const bm25Keys = memory.store
          .searchText(qa.question, { scope: memory.scope }, 300)
          .map((h) => keyOf.get(h.id));
        const results = {
          adamem: {
            text: ctx.text,
            full: new Set(ctx.items.filter((i) => i.form === "full").map((i) => keyOf.get(i.chunk.id))),
            tokens: ctx.tokens,
          },
          bm25_full_turns: pack(bm25Keys, byKey, piece, b),
          ...(datedBaseline ? { [DATED]: pack(bm25Keys, byKey, datedPiece, b) } : {}),
          sliding_window: pack(
            [...conv.turns].reverse().map((t) => t.key),
            byKey,
            piece,
            b,
            true,
          ),
        };
        for (const m of methods) {
          const r = results[m];
          const acc = totals[b][m];
          const hit = containsAnswer(r.text, qa.answer) ? 1 : 0;
          acc.contained += hit;
          acc.questions++;
          acc.evidence += qa.evidence.length;
          acc.full += qa.evidence.filter((e) => r.full.has(e)).length;
          acc.tokens += r.tokens;
          acc.perCat[qa.category] ??= { contained: 0, questions: 0 };
          acc.perCat[qa.category].contained += hit;
          acc.perCat[qa.category].questions++;
        }
        if (shown < show && b === budgets[Math.floor(budgets.length / 2)]) {
          log(`\n=== ${name} q: ${qa.question}  gold: ${qa.answer}  (budget ${b})`);
          for (const m of METHODS)
            log(
              `--- ${m}: contains=${containsAnswer(results[m].text, qa.answer)} tokens=${results[m].tokens}\n${results[m].text}`,
            );
        }
      }
      shown++;
    }
    memory.close();
  }
  const round = (x) => Math.round(x * 1000) / 1000;
  const report = {
    dataset: name,
    categories,
    skippedNoContentWords: skipped,
    retrievalMsMean: round(ms / Math.max(1, queries)),
    budgets: {},
  };
  for (const b of budgets) {
    report.budgets[b] = {};
    for (const m of methods) {
      const a = totals[b][m];
      const perCategory = {};
      for (const [c, pc] of Object.entries(a.perCat)) perCategory[c] = round(pc.contained / pc.questions);
      report.budgets[b][m] = {
        answerContainment: round(a.contained / a.questions),
        evidenceRecallFullText: round(a.full / Math.max(1, a.evidence)),
        perCategory,
        meanTokens: Math.round(a.tokens / a.questions),
        questions: a.questions,
      };
    }
  }
  return report;
}

/** Full turns in the given order, each kept if the rendered context still fits the budget. */
function pack(keys, byKey, piece, budget, stopAtFirstMiss = false) {
  const chosen = [];
  let tokens = 0;
  for (const k of keys) {
    const t = byKey.get(k);
    if (!t) continue;
    const next = [...chosen, piece(t, t.id)];
    const cost = estimateTokens(renderItems(next));
    if (cost > budget) {
      if (stopAtFirstMiss) break;
      continue;
    }
    chosen.push(next.at(-1));
    tokens = cost;
  }
  const keyById = new Map([...byKey].map(([k, t]) => [t.id, k]));
  return { text: renderItems(chosen), full: new Set(chosen.map((c) => keyById.get(c.id))), tokens };
}

export function printReport(report, log = console.log) {
  log(
    `\n${report.dataset}: answer containment (categories ${report.categories.join(", ")}) and evidence recall in full text only`,
  );
  log("budget  method            contain  evid.full  per category                 mean tokens");
  for (const [b, ms] of Object.entries(report.budgets))
    for (const [m, r] of Object.entries(ms))
      log(
        `${String(b).padEnd(7)} ${m.padEnd(17)} ${String(r.answerContainment).padEnd(8)} ${String(r.evidenceRecallFullText).padEnd(10)} ${JSON.stringify(r.perCategory).padEnd(28)} ${r.meanTokens}`,
      );
}
