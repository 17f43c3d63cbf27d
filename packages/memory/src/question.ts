// What a question asks for, read from its words: the noun naming the kind of thing its answer
// is ("What is Ingrid's current job?" → job; "Which city did…" → city; "What kind of painting…"
// → painting). Its answer is usually worded as a kind of that thing, not with the noun itself.

const AUX = new Set(
  "is are was were do does did has have had can could would will should might may am be been being the a an".split(
    " ",
  ),
);

/** The noun naming what the question's answer is, or undefined when the question does not name one. */
export function answerNoun(question: string): string | undefined {
  const q = question.trim();
  let m = /^(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\s+([a-z][a-z'-]+)/i.exec(q);
  if (m) return m[1]!.toLowerCase();
  m = /^(?:what|which)\s+([a-z][a-z'-]+)\b/i.exec(q);
  if (m && !AUX.has(m[1]!.toLowerCase())) return m[1]!.toLowerCase();
  // "What is the name of X's dog?", "What was her first car?": the last word of a short question.
  m =
    /^what\s+(?:is|was|are|were)\s+(?:the\s+name\s+of\s+)?(?:(?:the|a|an|his|her|their|its|my|your)\s+)?(?:\p{Lu}[\p{L}-]*'s\s+)?(?:[a-z]+\s+){0,2}([a-z][a-z-]+)\s*\?*$/iu.exec(
      q,
    );
  if (m && !AUX.has(m[1]!.toLowerCase())) return m[1]!.toLowerCase();
  return undefined;
}
