// Relative dates in a conversation turn, resolved against the date of its session: "I went
// there yesterday" said on 8 May 2023 happened on 7 May 2023. A turn keeps its words as they
// were said; the resolutions are kept beside them (`when`, shown after the turn), so a reader —
// model or person — sees the date the words mean without having to work it out from the header.
// Only expressions whose meaning is fixed by the session date are resolved (yesterday, N days
// ago, last Saturday, last month, N years ago, tomorrow, next week, …); a bare weekday or "a
// while ago" is left alone.

// English names (Intl's, fixed to "en" and UTC so they never follow the machine's locale),
// made on first use: Intl's first call loads ICU data (~10 ms), which a start-up that never
// resolves a date should not pay.
let names: { months: string[]; weekdays: string[] } | undefined;
const calendarNames = () =>
  (names ??= {
    months: Array.from({ length: 12 }, (_, m) =>
      new Date(Date.UTC(2000, m, 1)).toLocaleString("en", { month: "long", timeZone: "UTC" }),
    ),
    // 2 January 2000 was a Sunday.
    weekdays: Array.from({ length: 7 }, (_, d) =>
      new Date(Date.UTC(2000, 0, 2 + d)).toLocaleString("en", { weekday: "long", timeZone: "UTC" }),
    ),
  });
const DAY = 86_400_000;

const monthIndex = (name: string): number =>
  calendarNames().months.findIndex((m) => m.toLowerCase().startsWith(name.toLowerCase().slice(0, 3)));

/**
 * The calendar day of a session date as sources write it ("1:56 pm on 8 May, 2023",
 * "May 8, 2023", "2023-05-08"), as UTC midnight; undefined when there is no day in it.
 */
export function parseDay(date: string): number | undefined {
  const m3 = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?";
  let m = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+${m3},?\\s+(\\d{4})\\b`, "i").exec(date);
  if (m) return Date.UTC(Number(m[3]), monthIndex(m[2]!), Number(m[1]));
  m = new RegExp(`\\b${m3}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "i").exec(date);
  if (m) return Date.UTC(Number(m[3]), monthIndex(m[1]!), Number(m[2]));
  m = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(date);
  if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return undefined;
}

const dayText = (t: number): string => {
  const d = new Date(t);
  return `${d.getUTCDate()} ${calendarNames().months[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
};
const monthText = (t: number, delta: number): string => {
  const d = new Date(t);
  const m = d.getUTCFullYear() * 12 + d.getUTCMonth() + delta;
  return `${calendarNames().months[((m % 12) + 12) % 12]} ${Math.floor(m / 12)}`;
};
const yearOf = (t: number): number => new Date(t).getUTCFullYear();

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  "a couple of": 2,
  couple: 2,
};
const COUNT = "(\\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of)";
const countOf = (s: string): number => NUMBER_WORDS[s.toLowerCase()] ?? Number(s);
const WEEKDAY = "(sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat)(?:day|nesday|rsday|urday|sday)?\\.?";
const weekdayIndex = (s: string): number =>
  calendarNames().weekdays.findIndex((w) => w.toLowerCase().startsWith(s.slice(0, 3).toLowerCase()));

interface Rule {
  re: RegExp;
  resolve: (m: RegExpExecArray, day: number) => string | undefined;
}

// Order matters only for overlaps: a span resolved by an earlier rule is not resolved again.
const RULES: Rule[] = [
  { re: /\bthe day before yesterday\b/gi, resolve: (_m, d) => dayText(d - 2 * DAY) },
  { re: /\b(?:yesterday|last night)\b/gi, resolve: (_m, d) => dayText(d - DAY) },
  { re: /\btomorrow\b/gi, resolve: (_m, d) => dayText(d + DAY) },
  {
    re: new RegExp(`\\b${COUNT}\\s+days?\\s+ago\\b`, "gi"),
    resolve: (m, d) => dayText(d - countOf(m[1]!) * DAY),
  },
  {
    re: new RegExp(`\\b${COUNT}\\s+weeks?\\s+ago\\b`, "gi"),
    resolve: (m, d) => `about ${dayText(d - 7 * countOf(m[1]!) * DAY)}`,
  },
  {
    re: new RegExp(`\\b(last|this past|next|this coming)\\s+${WEEKDAY}(?!\\w)`, "gi"),
    resolve: (m, d) => {
      const want = weekdayIndex(m[2]!);
      if (want < 0) return undefined;
      const today = new Date(d).getUTCDay();
      const past = /^(last|this past)/i.test(m[1]!);
      const step = past ? (today - want + 7) % 7 || 7 : (want - today + 7) % 7 || 7;
      return `${calendarNames().weekdays[want]}, ${dayText(past ? d - step * DAY : d + step * DAY)}`;
    },
  },
  { re: /\blast weekend\b/gi, resolve: (_m, d) => `the weekend before ${dayText(d)}` },
  { re: /\bnext weekend\b/gi, resolve: (_m, d) => `the weekend after ${dayText(d)}` },
  { re: /\b(?:last week|a week ago)\b/gi, resolve: (_m, d) => `the week before ${dayText(d)}` },
  { re: /\bnext week\b/gi, resolve: (_m, d) => `the week after ${dayText(d)}` },
  { re: /\b(?:last month|a month ago)\b/gi, resolve: (_m, d) => monthText(d, -1) },
  { re: /\bnext month\b/gi, resolve: (_m, d) => monthText(d, 1) },
  {
    re: new RegExp(`\\b${COUNT}\\s+months?\\s+ago\\b`, "gi"),
    resolve: (m, d) => monthText(d, -countOf(m[1]!)),
  },
  { re: /\b(?:last year)\b/gi, resolve: (_m, d) => String(yearOf(d) - 1) },
  { re: /\bnext year\b/gi, resolve: (_m, d) => String(yearOf(d) + 1) },
  {
    re: new RegExp(`\\b${COUNT}\\s+years?\\s+ago\\b`, "gi"),
    resolve: (m, d) => (countOf(m[1]!) === 1 ? monthText(d, -12) : String(yearOf(d) - countOf(m[1]!))),
  },
  // "for 4 years", "4 years now": a duration up to the session, so a start year.
  {
    re: new RegExp(
      `\\b(?:for\\s+(?:the\\s+(?:last|past)\\s+)?${COUNT}\\s+years?|${COUNT}\\s+years?\\s+now)\\b`,
      "gi",
    ),
    resolve: (m, d) => `since ${yearOf(d) - countOf(m[1] ?? m[2]!)}`,
  },
];

/**
 * The relative dates of `text` resolved against `sessionDate`, each as "phrase = date"
 * ("yesterday = 7 May 2023"), in the order they occur, without repeats; "" when there are none
 * or the session date has no day.
 */
export function resolveRelativeDates(text: string, sessionDate: string): string {
  const day = parseDay(sessionDate);
  if (day === undefined) return "";
  const found: { at: number; end: number; text: string }[] = [];
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      const at = m.index;
      const end = at + m[0].length;
      if (found.some((f) => at < f.end && end > f.at)) continue;
      const value = rule.resolve(m, day);
      if (value) found.push({ at, end, text: `${m[0].toLowerCase()} = ${value}` });
    }
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.text))].join("; ");
}
