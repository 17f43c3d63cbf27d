import assert from "node:assert/strict";
import { test } from "node:test";
import { Memory } from "./memory.js";
import { answerNoun } from "./question.js";
import { kindsOf } from "./wordnet.js";

test("the noun a question's answer is a kind of", () => {
  assert.equal(answerNoun("What is Ingrid's current job?"), "job");
  assert.equal(answerNoun("What is the name of Ingrid's dog?"), "dog");
  assert.equal(answerNoun("Which city did Aiko live in before moving?"), "city");
  assert.equal(answerNoun("What kind of painting did Caroline share?"), "painting");
  assert.equal(answerNoun("What instruments does Melanie play?"), "instruments");
  // A noun phrase: WordNet's compound, or its head word.
  assert.equal(answerNoun("What martial arts has John done?"), "martial arts");
  assert.equal(answerNoun("What European countries has Maria been to?"), "european countries");
  assert.equal(answerNoun("What musical artists/bands has Melanie seen?"), "musical artists");
  // A verb before a name is not a noun phrase.
  assert.equal(answerNoun("What sparked John's interest in education?"), "sparked");
  // No noun named: "did", "does" are not what the answer is.
  assert.equal(answerNoun("What did Caroline research?"), undefined);
  assert.equal(answerNoun("When did Melanie run a charity race?"), undefined);
  assert.equal(answerNoun("Why did Caroline choose the adoption agency?"), undefined);
});

test("kinds of a noun from WordNet: base form, synonyms, direct hyponyms, one word each", () => {
  const job = kindsOf("job");
  for (const w of ["occupation", "career", "position", "trade", "profession"]) assert.ok(job.includes(w), w);
  assert.ok(!job.includes("job"), "the word itself is already in the question");
  assert.ok(
    job.every((w) => /^[a-z'-]+$/.test(w)),
    "no multi-word lemmas",
  );
  // A compound WordNet knows, with its kinds; instances count as kinds.
  const arts = kindsOf("martial arts");
  for (const w of ["judo", "karate", "taekwondo"]) assert.ok(arts.includes(w), w);
  assert.ok(!arts.includes("art") && !arts.includes("martial"));
  const europe = kindsOf("european countries");
  for (const w of ["spain", "germany", "italy"]) assert.ok(europe.includes(w), w);
  assert.ok(europe.length <= 64, "a bounded number of searches");
  assert.deepEqual(kindsOf("sparked"), [], "not a noun");
  // A plural finds its singular.
  assert.ok(kindsOf("hobbies").includes("hobby"));
  assert.ok(kindsOf("Cities").includes("metropolis"));
  assert.deepEqual(kindsOf("xyzzyq"), []);
  assert.deepEqual(kindsOf("../../etc/passwd"), [], "only words are looked up");
  assert.deepEqual(kindsOf(""), []);
});

test("a question finds the turn that names a kind of what it asks for", async () => {
  const memory = new Memory();
  const turns: string[] = [];
  const remarks = [
    "if I'm honest",
    "but I'm fine",
    "which is typical",
    "and it made me laugh",
    "so that was my week",
  ];
  for (let i = 0; i < 8; i++)
    turns.push(
      `${i % 2 ? "Aiko" : "Ingrid"}: My job has its ups and downs, ${remarks[i % 5]}.`,
      `${i % 2 ? "Ingrid" : "Aiko"}: The weather was odd on day ${i}.`,
    );
  turns.push(
    "Aiko: The bakery closed.",
    "Ingrid: Big news: I left my old position and started as an electrician!",
  );
  turns.push("Aiko: The bakery reopened.");
  for (const [i, t] of turns.entries()) {
    memory.step = i;
    await memory.add({ type: "user_input", content: t, meta: { speaker: t.split(":")[0]! } });
  }
  const q = "What is Ingrid's current job?";
  const on = await memory.context(q, { budget: 120, touch: false });
  assert.match(on.text, /electrician/);
  const off = await memory.context(q, { budget: 120, touch: false, fusion: { kinds: 0 } });
  assert.doesNotMatch(off.text, /electrician/, "without the kinds, the word 'job' wins the budget");
  memory.close();
});
