// Plan mode: the model investigates with read-only tools and answers with a checklist; the
// accepted (possibly edited) checklist then becomes the request, worked through with the todo tool.

export const PLAN_INSTRUCTIONS = [
  "PLAN MODE: you can only look (read-only tools). Do not try to change anything yet.",
  "Investigate what you need, then reply with the plan as a Markdown checklist, one step a line:",
  "- [ ] first step",
  "- [ ] second step",
  'Mark a step "(independent)" at its end when it neither needs nor touches what the other steps do:',
  "independent steps are worked on at the same time, each by a helper that sees only that line, so",
  "such a line must say everything needed (paths, names, what to check).",
  "Keep it short (3 to 8 concrete, verifiable steps). Nothing else after the checklist.",
].join("\n");

const INDEPENDENT = /\s*\(independent\)\s*$/i;

/** Whether the plan marks this item as independent of the others. */
export function isIndependent(item: string): boolean {
  return INDEPENDENT.test(item);
}

/** The item without its "(independent)" mark. */
export function itemText(item: string): string {
  return item.replace(INDEPENDENT, "").trim();
}

/** The request that asks for a plan (sent with read-only tools and PLAN_INSTRUCTIONS). */
export function planRequest(task: string): string {
  return `Make a plan for this request (do not change anything yet): ${task}`;
}

const LIST_MARK = /^\s*(?:[-*]\s*(?:\[[ xX~]\]\s*)?|\d+[.)]\s+(?:\[[ xX~]\]\s*)?)(.+)$/;

/** The checklist items of a plan reply (`- [ ] x`, `* x`, `1. x`). */
export function extractPlan(text: string): string[] {
  const items: string[] = [];
  for (const raw of text.split("\n")) {
    const m = LIST_MARK.exec(raw);
    if (m?.[1]?.trim()) items.push(m[1].trim());
  }
  return items;
}

/** A plan the person wrote: every line is an item (list marks optional), `#` lines are comments. */
export function parseEditedPlan(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => l.trim() && !l.trimStart().startsWith("#"))
    .map((l) => (LIST_MARK.exec(l)?.[1] ?? l).trim())
    .filter(Boolean);
}

/** The file a person edits the plan in. */
export function planFileText(items: string[]): string {
  return [
    "# Edit the plan: one step a line. Lines starting with # are ignored.",
    "# Save and quit to use it; an empty plan cancels it.",
    ...items.map((t) => `- [ ] ${t}`),
    "",
  ].join("\n");
}

export function formatPlan(items: string[]): string {
  return items.map((t, i) => `  ${i + 1}. [ ] ${t}`).join("\n");
}

/** What the sub-agents of the independent items reported (item index → report). */
export type ItemReports = Map<number, { output: string; isError: boolean }>;

export function planExecutionRequest(items: string[], reports: ItemReports = new Map()): string {
  const done = [...reports.entries()];
  return [
    "The plan is accepted. Execute it item by item, in order:",
    ...items.map(
      (t, i) => `${i + 1}. ${itemText(t)}${reports.has(i) ? " (done by a sub-agent: see below)" : ""}`,
    ),
    "",
    ...(done.length
      ? [
          "The independent items were worked on in parallel by sub-agents. Their reports:",
          ...done.map(
            ([i, r]) => `- item ${i + 1}${r.isError ? " (FAILED: do it yourself)" : ""}: ${r.output}`,
          ),
          "Check their work where it matters, then do the remaining items.",
          "",
        ]
      : []),
    "Use the todo tool to keep the checklist current: send the whole list with the item you start as in_progress,",
    "and mark each item done when it is finished and verified. Then give a short final summary.",
  ].join("\n");
}
