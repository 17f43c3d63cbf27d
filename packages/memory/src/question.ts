// What a question asks for, read from its words: the noun naming the kind of thing its answer
// is ("What is Ingrid's current job?" → job; "Which city did…" → city; "What kind of painting…"
// → painting). Its answer is usually worded as a kind of that thing, not with the noun itself.

const AUX = new Set(
  "is are was were do does did has have had can could would will should might may am be been being the a an".split(
    " ",
  ),
);
/** Words that end the noun phrase after "what" / "which". */
const END = new Set([...AUX, ..."of in on at to for from with by about did that who which".split(" ")]);

/** The words of `text` up to the first that ends a noun phrase, at most three. */
function phrase(text: string): string | undefined {
  const out: string[] = [];
  for (const w of text.split(/\s+/)) {
    const word = /^[a-z][a-z'-]*/i.exec(w)?.[0]?.toLowerCase();
    // A possessive ("John's") starts the phrase's owner, not its noun.
    if (!word || END.has(word) || /'s$/.test(word) || out.length === 3) break;
    out.push(word);
    if (word !== w.toLowerCase()) break; // punctuation ends it ("artists/bands", "job?")
  }
  return out.length ? out.join(" ") : undefined;
}

/**
 * The noun phrase naming what the question's answer is ("martial arts", "city", "job"), or
 * undefined when the question does not name one.
 */
export function answerNoun(question: string): string | undefined {
  const q = question.trim();
  let m = /^(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\s+(.*)$/i.exec(q);
  if (m) return phrase(m[1]!);
  m = /^(?:what|which)\s+(.*)$/i.exec(q);
  const first = m ? phrase(m[1]!) : undefined;
  if (first) return first;
  // "What is the name of X's dog?", "What was her first car?": the last word of a short question.
  m =
    /^what\s+(?:is|was|are|were)\s+(?:the\s+name\s+of\s+)?(?:(?:the|a|an|his|her|their|its|my|your)\s+)?(?:\p{Lu}[\p{L}-]*'s\s+)?(?:[a-z]+\s+){0,2}([a-z][a-z-]+)\s*\?*$/iu.exec(
      q,
    );
  if (m && !AUX.has(m[1]!.toLowerCase())) return m[1]!.toLowerCase();
  return undefined;
}
