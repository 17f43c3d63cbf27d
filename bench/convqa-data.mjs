// A second dataset for the answer-containment measure, generated: no real QA-over-long-
// conversation set ships in an npm or Debian package (the one npm hit, @mastra/longmemeval,
// carries a 3-question fixture and downloads the rest), and this machine reaches nothing else.
// Seeded, so every run has the same conversations; the gold answers are checkable by
// construction (each is a fact the generator planted, at a known turn).
//
// Each conversation: two people, 18–26 dated sessions of 12–24 turns. Most turns are small
// talk drawn from templates that reuse the facts' vocabulary (pets, trips, books, work,
// hobbies, family) so that a question's words also match many turns that do not answer it.
// Facts are planted in turns worded differently from the questions that ask about them, some
// are later updated (the question asks for the current value; both are in the conversation),
// and the answer is sometimes in the reply to a question rather than the turn that matches.
// Question categories follow LoCoMo's numbering: 1 multi-hop (a list gathered from several
// sessions), 2 temporal (the date of the session an event happened "today"), 4 single-hop.
// Never tune parameters on it: it exists to check that what LoCoMo's dev split shows holds
// on text the parameters never saw.

const NAMES = [
  "Priya",
  "Tomasz",
  "Aiko",
  "Marcus",
  "Lena",
  "Diego",
  "Fatima",
  "Owen",
  "Ingrid",
  "Kwame",
  "Rosa",
  "Hugo",
];
const PETS = [
  ["dog", "Biscuit"],
  ["cat", "Pepper"],
  ["parrot", "Mango"],
  ["rabbit", "Clover"],
  ["dog", "Juniper"],
  ["cat", "Waffles"],
];
const CITIES = [
  "Lisbon",
  "Osaka",
  "Tallinn",
  "Cusco",
  "Marrakesh",
  "Reykjavik",
  "Hanoi",
  "Valparaiso",
  "Dubrovnik",
  "Quebec",
];
const JOBS = [
  "nurse",
  "architect",
  "bus driver",
  "data analyst",
  "pastry chef",
  "physiotherapist",
  "translator",
  "electrician",
];
const HOBBIES = [
  "pottery",
  "rock climbing",
  "chess",
  "birdwatching",
  "salsa dancing",
  "woodworking",
  "kayaking",
  "calligraphy",
  "beekeeping",
];
const BOOKS = [
  "The Glass Orchard",
  "Salt and Lanterns",
  "A River of Clocks",
  "Northern Tides",
  "The Paper Astronomer",
  "Quiet Engines",
];
const EVENTS = [
  ["ran my first half marathon", "run a half marathon"],
  ["passed my driving test", "pass the driving test"],
  ["signed the lease on a new flat", "sign the lease on the new flat"],
  ["gave a talk at the library", "give the talk at the library"],
  ["adopted a second cat", "adopt another cat"],
  ["finished the mural at the community centre", "finish the mural"],
  ["started volunteering at the food bank", "start volunteering at the food bank"],
];
const SIBLINGS = ["Nadia", "Felix", "Yusuf", "Greta", "Ravi", "Clara"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

// Small talk is built from parts (an opener, a topic, a remark), so turns rarely repeat.
const OPENERS = ["Honestly,", "Ha,", "Well,", "You know,", "Oh,", "So,", "Anyway,", "To be fair,", ""];
const TOPICS = [
  "work has been busy",
  "my neighbour's dog barked half the night",
  "I keep meaning to read more books",
  "the commute this week was awful",
  "we should plan a trip together",
  "the weather has been all over the place",
  "I tried a new recipe for dinner",
  "my family keeps asking when I'll visit",
  "I saw a documentary about travelling in South America",
  "pets really make a home feel warmer",
  "my job has its ups and downs",
  "I've been thinking about a new hobby",
  "my sister sent me another book recommendation",
  "I bought new running shoes",
  "the match on Sunday was a mess",
  "the city feels different in autumn",
  "my phone died in the middle of a call",
  "the bakery near me closed",
  "I need a quiet weekend",
  "the kids next door started drum lessons",
];
const REMARKS = [
  "and I'm not sure what to make of it.",
  "but nothing dramatic.",
  "so that was my week.",
  "which is typical.",
  "and it made me laugh.",
  "but I'm fine.",
  "if I'm honest.",
  "and I keep thinking about it.",
];
const REPLIES = [
  "That sounds lovely, I'm glad for you!",
  "Same here, it's been a long month.",
  "Let me know how it goes!",
  "I'd love to hear more about it next time.",
  "I really admire how you keep at things.",
  "How is your family doing?",
  "How was your week?",
  "Ha, that's so typical.",
];

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Generates `count` conversations from `seed`, in the measure's format (see qa-measure.mjs). */
export function generateConversations(seed = 20261201, count = 6) {
  const rnd = rng(seed);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const shuffle = (xs) => {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  const out = [];
  const names = shuffle(NAMES);
  for (let ci = 0; ci < count; ci++) {
    const people = [names[2 * ci], names[2 * ci + 1]];
    const nSessions = 18 + Math.floor(rnd() * 9);
    // Session dates: from a random start, 3–20 days apart.
    let day = Date.UTC(2022 + Math.floor(rnd() * 2), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 27));
    const sessions = [];
    for (let s = 0; s < nSessions; s++) {
      day += (3 + Math.floor(rnd() * 18)) * 86400_000;
      const d = new Date(day);
      const hour = 9 + Math.floor(rnd() * 11);
      const date = `${hour > 12 ? hour - 12 : hour}:${String(Math.floor(rnd() * 60)).padStart(2, "0")} ${hour >= 12 ? "pm" : "am"} on ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}, ${d.getUTCFullYear()}`;
      const short = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
      sessions.push({ date, short, turns: [] });
    }
    // Facts, planted at random sessions: [session, speaker index, turn text, optional reply text].
    const plants = [];
    const questions = [];
    for (const [p, who] of people.entries()) {
      const [kind, petName] = pick(PETS);
      const city = pick(CITIES);
      const [job1, job2] = shuffle(JOBS);
      const hobbies = shuffle(HOBBIES).slice(0, 3);
      const book = pick(BOOKS);
      const sibling = pick(SIBLINGS);
      const event = pick(EVENTS);
      const at = () => Math.floor(rnd() * nSessions);
      const q = (category, question, answer, keys) => questions.push({ question, answer, category, keys });
      // The answer in the reply: the other asks, this one answers with the name.
      const asked =
        plants.push({
          s: at(),
          p: 1 - p,
          text: `${who}, what did you end up calling the ${kind} you got?`,
          key: null,
        }) - 1;
      // The reply: same session, right after the question.
      plants.push({
        s: plants[asked].s,
        after: asked,
        p,
        text: `We named ${kind === "dog" ? "him" : "her"} ${petName}, after a character from a cartoon I loved as a kid.`,
        key: `pet-${p}`,
      });
      q(4, `What is the name of ${who}'s ${kind}?`, petName, [`pet-${p}`]);
      plants.push({
        s: at(),
        p,
        text: `Before I came here I spent six years living in ${city}, and I still miss the food there.`,
        key: `city-${p}`,
      });
      q(4, `Which city did ${who} live in before moving?`, city, [`city-${p}`]);
      const s1 = Math.floor(rnd() * (nSessions / 2));
      const s2 = s1 + 1 + Math.floor(rnd() * (nSessions - s1 - 1));
      plants.push({
        s: s1,
        p,
        text: `I'm working as a ${job1} these days, the shifts are long but I like the people.`,
        key: `job1-${p}`,
      });
      plants.push({
        s: s2,
        p,
        text: `Big news: I left my old position and started as a ${job2} this month!`,
        key: `job2-${p}`,
      });
      q(4, `What is ${who}'s current job?`, job2, [`job2-${p}`]);
      plants.push({
        s: at(),
        p,
        text: `I finally read "${book}" — the ending completely surprised me.`,
        key: `book-${p}`,
      });
      q(4, `Which novel surprised ${who} with its ending?`, book, [`book-${p}`]);
      plants.push({
        s: at(),
        p,
        text: `My brother ${sibling} is visiting next week, he's bringing his kids.`,
        key: `sib-${p}`,
      });
      q(4, `What is the name of ${who}'s brother?`, sibling, [`sib-${p}`]);
      const hs = shuffle([...Array(nSessions).keys()]).slice(0, 3);
      const hobbyTurns = [
        (h) => `Guess what, I signed up for ${h} classes, the first one was great fun.`,
        (h) => `My new hobby is ${h}; I go every Thursday now.`,
        (h) => `I've taken up ${h}, of all things, and I'm hooked.`,
      ];
      for (const [k, h] of hobbies.entries())
        plants.push({ s: hs[k], p, text: hobbyTurns[k](h), key: `hobby${k}-${p}` });
      q(
        1,
        `What hobbies has ${who} taken up?`,
        hobbies.join(", "),
        hobbies.map((_, k) => `hobby${k}-${p}`),
      );
      const se = at();
      plants.push({ s: se, p, text: `Today I ${event[0]}! I can't stop smiling.`, key: `event-${p}` });
      q(2, `When did ${who} ${event[1]}?`, null, [`event-${p}`]);
      questions.at(-1).session = se;
      plants.push({
        s: at(),
        p: 1 - p,
        text: `I hope ${who} gets to ${event[1]} one day, I know it matters to them.`,
        key: null,
      });
    }
    // Fill each session with small talk, then put the planted turns in at random places (a
    // reply right after its question).
    for (const [s, sess] of sessions.entries()) {
      const n = 12 + Math.floor(rnd() * 13);
      for (let k = 0; k < n; k++) {
        const text =
          rnd() < 0.35 ? pick(REPLIES) : `${pick(OPENERS)} ${pick(TOPICS)}, ${pick(REMARKS)}`.trim();
        sess.turns.push({ p: k % 2, text: text[0].toUpperCase() + text.slice(1), key: null });
      }
      const here = plants.filter((x) => x.s === s && x.after === undefined);
      for (const x of here) {
        const at = Math.floor(rnd() * (sess.turns.length + 1));
        const block = [x, ...plants.filter((y) => y.after !== undefined && plants[y.after] === x)];
        sess.turns.splice(at, 0, ...block);
      }
    }
    const turns = [];
    const keyAt = new Map();
    for (const [s, sess] of sessions.entries())
      for (const [k, t] of sess.turns.entries()) {
        const key = `S${s + 1}:${k + 1}`;
        if (t.key) keyAt.set(t.key, key);
        turns.push({ key, speaker: people[t.p], text: t.text, date: sess.date });
      }
    out.push({
      id: `gen-${ci}`,
      turns,
      questions: questions.map((x) => ({
        question: x.question,
        answer: x.answer ?? sessions[x.session].short,
        category: x.category,
        evidence: x.keys.map((k) => keyAt.get(k)),
      })),
    });
  }
  return out;
}
