// The person's look at a plan before it runs: accept it, edit it (in their editor in a
// terminal, line by line in a pipe), or cancel it. Returns the accepted items, or undefined.

import { formatPlan, parseEditedPlan, planFileText } from "../plan.js";
import { editText } from "./editor.js";
import type { Input, View } from "./front.js";

export async function reviewPlan(
  proposed: string[],
  input: Input,
  view: View,
): Promise<string[] | undefined> {
  const s = view.style;
  let items = proposed;
  for (;;) {
    view.print(`${s.bold("Plan:")}\n${formatPlan(items)}`);
    const a = (await input.read(`${s.cyan("?")} [a]ccept, [e]dit, [c]ancel: `))?.trim().toLowerCase();
    if (a === undefined || a.startsWith("c")) {
      view.print(s.dim("Plan cancelled."));
      return undefined;
    }
    if (a === "" || a.startsWith("a") || a.startsWith("y")) return items;
    if (!a.startsWith("e")) continue;
    const edited = input.tty ? await editInEditor(items, input, view) : await typePlan(input, view);
    if (edited?.length === 0) {
      view.print(s.dim("The edited plan is empty: plan cancelled."));
      return undefined;
    }
    if (edited) items = edited;
  }
}

async function editInEditor(items: string[], input: Input, view: View): Promise<string[] | undefined> {
  view.breakLine();
  const r = await editText(planFileText(items), input, "plan.md");
  if ("error" in r) {
    view.print(view.style.red(`${r.error}; the plan is unchanged.`));
    return undefined;
  }
  return parseEditedPlan(r.text);
}

/** Without a terminal there is no editor to open: the plan is typed, one item a line. */
async function typePlan(input: Input, view: View): Promise<string[] | undefined> {
  view.print(view.style.dim("Type the plan, one item a line; an empty line ends it."));
  const typed: string[] = [];
  for (;;) {
    const line = await input.read(`${view.style.dim(`${typed.length + 1}.`)} `);
    if (line === null || !line.trim()) break;
    typed.push(line);
  }
  return typed.length ? parseEditedPlan(typed.join("\n")) : undefined;
}
