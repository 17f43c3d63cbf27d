// Plan mode: the model investigates with read-only tools and answers with a checklist; the
// accepted checklist then becomes the request, worked through with the todo tool.

export const PLAN_INSTRUCTIONS = [
  "PLAN MODE: you can only look (read-only tools). Do not try to change anything yet.",
  "Investigate what you need, then reply with the plan as a Markdown checklist, one step a line:",
  "- [ ] first step",
  "- [ ] second step",
  "Keep it short (3 to 8 concrete, verifiable steps). Nothing else after the checklist.",
].join("\n");

/** The checklist items of a plan reply (`- [ ] x`, `* x`, `1. x`). */
export function extractPlan(text: string): string[] {
  const items: string[] = [];
  for (const raw of text.split("\n")) {
    const m = /^\s*(?:[-*]\s*(?:\[[ xX~]\]\s*)?|\d+[.)]\s+(?:\[[ xX~]\]\s*)?)(.+)$/.exec(raw);
    if (m?.[1]?.trim()) items.push(m[1].trim());
  }
  return items;
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
