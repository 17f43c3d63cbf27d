// Splitting text into the words the map matches on: a task or commit message, a file's path,
// a definition's name. `parseOutline`, `parse_outline` and `parse-outline.ts` all give `parse`
// and `outline`, so a task written in prose meets the code that implements it.

/** Words too common in tasks and code to say where anything lives. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "the and for with from that this into when then than not are was were has have had its use " +
    "used uses using all any can may one two new add adds added fix fixes fixed make makes made " +
    "get set run runs via per now each only also more most some such them they their there what " +
    "which while who why how out off own our you your but let var const function return true false " +
    "null undefined import export default class src lib dist test tests index main file files"
  ).split(" "),
);

/** Identifiers as written (`parseOutline`, `repo_map`), at least 3 characters. */
export function identifiersIn(text: string): string[] {
  return text.match(/[A-Za-z_$][\w$]{2,}/g) ?? [];
}

/** Lower-case sub-words of identifiers and paths, without stop words: `repoMap.ts` → repo, map. */
export function wordsIn(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(/[^A-Za-z0-9]+/)) {
    if (!part) continue;
    // camelCase and PascalCase boundaries, and runs of capitals (`HTTPServer` → HTTP, Server).
    for (const w of part.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)) {
      const lower = w.toLowerCase();
      if (lower.length >= 3 && !STOP_WORDS.has(lower) && !/^\d+$/.test(lower)) out.push(lower);
    }
  }
  return out;
}

/** Path-like tokens of a text (`src/tools/grep.ts`, `grep.ts`, `packages/agent/`). */
export function pathsIn(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/[\w.@-]*(?:\/[\w.@-]+)+\/?|[\w@-]+\.[a-z]{1,5}\b/g)) {
    const token = m[0].replace(/^\.\//, "").replace(/[.,:;]+$/, "");
    if (token.length >= 3) out.add(token);
  }
  return [...out];
}
