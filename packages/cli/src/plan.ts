// Plan mode: the model investigates with read-only tools and answers with a checklist; the
// accepted (possibly edited) checklist then becomes the request, worked through with the todo tool.

export const PLAN_INSTRUCTIONS = [
  "PLAN MODE: you can only look (read-only tools). Do not try to change anything yet.",
  "Investigate what you need, then reply with the plan as a Markdown checklist, one step a line:",
  "- [ ] first step",
  "- [ ] second step",
  "Keep it short (3 to 8 concrete, verifiable steps). Nothing else after the checklist.",
].join("\n");

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

export function planExecutionRequest(items: string[]): string {
  return [
    "The plan is accepted. Execute it item by item, in order:",
    ...items.map((t, i) => `${i + 1}. ${t}`),
    "",
    "Use the todo tool to keep the checklist current: send the whole list with the item you start as in_progress,",
    "and mark each item done when it is finished and verified. Then give a short final summary.",
  ].join("\n");
}
