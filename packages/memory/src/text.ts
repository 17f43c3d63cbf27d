// Text utilities shared by scoring, search and compression. Token counts are estimated
// (about 4 characters a token), which is what a budget needs: fast and stable.

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const STOP = new Set(
  (
    "a an the and or but if then else of to in on at by for with from into onto as is are was were be been " +
    "being am do does did doing have has had having i me my mine we us our you your yours he him his she her " +
    "it its they them their this that these those there here what which who whom whose when where why how " +
    "all any both each few more most other some such no nor not only own same so than too very can will just " +
    "should would could may might must shall s t don now about above after again against below between " +
    "during over under up down out off once further also yeah yes oh ok okay hey hi really so much many " +
    "thanks thank like get got go going gonna lot lots things thing well too let know think feel"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}_][\p{L}\p{N}_./-]*[\p{L}\p{N}_]|[\p{L}\p{N}]/gu;
/**
 * WORD for text with no character outside ASCII, where a letter is A–Z or a–z and a digit 0–9:
 * the same matches. V8 builds a Unicode property class from ICU data at its first use (~1 ms
 * of CPU, on the path to a second run's first request, whose recall splits the task into words).
 */
const ASCII_WORD = /[A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_]|[A-Za-z0-9]/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** Lower-case word tokens (letters, digits, and identifier characters kept together). */
export function words(text: string): string[] {
  const lower = text.toLowerCase();
  return lower.match(NON_ASCII.test(lower) ? WORD : ASCII_WORD) ?? [];
}

/** The longest stop word's length: a longer word needs no look-up. */
export const LONGEST_STOPWORD = Math.max(...[...STOP].map((w) => w.length));

export function isStopword(w: string): boolean {
  return STOP.has(w);
}

/** Content words: not stop words, not single characters. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => w.length > 1 && !STOP.has(w));
}

const PATH =
  /(?:^|[\s"'`(])(?:\.{0,2}\/)?[\w.-]+\/[\w./-]+|\b[\w-]+\.(?:ts|js|mjs|json|py|go|rs|md|txt|yml|yaml|toml|sh|c|h|cpp|java)\b/g;
const NUMBER = /\b\d+(?:[.,:]\d+)*\b/g;
const IDENT = /\b[a-z]+[A-Z]\w*\b|\b\w+_\w+\b/g;
const ENTITY = /(?<![.!?]\s)\b[A-Z][a-z]{2,}\b/g;
const SIGNAL =
  /\b(error|errors|fail(?:ed|ure)?|goal|must|never|always|important|constraint|required?|todo|fix(?:ed)?|bug|remember|decided?|note)\b/gi;

export interface Density {
  paths: number;
  numbers: number;
  identifiers: number;
  entities: number;
  signals: number;
  /** 0..1: how much checkable information the text carries per token. */
  score: number;
}

export function density(text: string): Density {
  // Counted with test() (it advances lastIndex), without building an array of the matches.
  const count = (re: RegExp) => {
    re.lastIndex = 0;
    let n = 0;
    while (re.test(text)) n++;
    return n;
  };
  const d = {
    paths: count(PATH),
    numbers: count(NUMBER),
    identifiers: count(IDENT),
    entities: count(ENTITY),
    signals: count(SIGNAL),
  };
  const tokens = Math.max(8, estimateTokens(text));
  const raw = (d.paths * 2 + d.numbers + d.identifiers + d.entities + d.signals * 3) / tokens;
  return { ...d, score: 1 - Math.exp(-4 * raw) };
}

/** Splits into sentences or lines, whichever is finer for the text at hand. */
export function sentences(text: string): string[] {
  const parts = text.split(/(?<=[.!?])\s+|\n+/);
  return parts.map((s) => s.trim()).filter((s) => s.length > 0);
}

/**
 * Extractive compression: keep the sentences that carry the most information, in their
 * original order, within `maxTokens`. Long single lines are cut to their content words.
 */
export function extractiveSummary(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text;
  const sents = sentences(text);
  const scored = sents.map((s, i) => {
    const d = density(s);
    // The first and last lines of tool output (command, status) usually matter most.
    const edge = i === 0 || i === sents.length - 1 ? 0.3 : 0;
    return { i, s, score: d.score + edge + (d.signals > 0 ? 0.3 : 0) };
  });
  const chosen: { i: number; s: string }[] = [];
  let used = 0;
  for (const c of [...scored].sort((a, b) => b.score - a.score || a.i - b.i)) {
    let s = c.s;
    // A line too long to keep whole keeps its head, cut at a word: still readable text.
    if (estimateTokens(s) > maxTokens / 2) s = clipWords(s, Math.max(8, Math.floor(maxTokens / 2)));
    const t = estimateTokens(s) + 1;
    if (used + t > maxTokens) continue;
    chosen.push({ i: c.i, s });
    used += t;
  }
  chosen.sort((a, b) => a.i - b.i);
  return chosen.map((c) => c.s).join(" … ");
}

/** The head of `s` within about `maxTokens`, cut at a word boundary, marked with "…". */
export function clipWords(s: string, maxTokens: number): string {
  const cut = s.slice(0, maxTokens * 4);
  const at = cut.lastIndexOf(" ");
  return `${at > cut.length / 2 ? cut.slice(0, at) : cut}…`;
}
