// Asks the person at the terminal about a write (showing its diff) or a command (showing it
// and where it runs). Answers: yes / no (then an optional reason the model sees) / always.
import type { ApprovalPrompt, UserAnswer } from "@hands/agent";
import { oneLine } from "../render.js";
import type { LineInput } from "./input.js";
import { capLines, colorDiff, type SessionView } from "./ui.js";

const MAX_DIFF_LINES = 60;

export function makeAsker(input: LineInput, view: SessionView, sandbox = "local") {
  return async (p: ApprovalPrompt): Promise<UserAnswer> => {
    const s = view.style;
    view.breakLine();
    if (p.kind === "write" && p.preview) {
      view.print(
        `${s.yellow("?")} ${s.bold(p.name)} wants to ${p.preview.created ? "create" : "change"} ${s.bold(p.preview.path)}:`,
      );
      view.print(colorDiff(capLines(p.preview.diff, MAX_DIFF_LINES) || "(no change)", s));
    } else if (p.kind === "command" && p.command !== undefined) {
      const what = p.name === "execute_python" ? "run Python code" : "run a command";
      view.print(`${s.yellow("?")} ${s.bold(p.name)} wants to ${what} in the ${sandbox} sandbox:`);
      view.print(`  ${s.bold(p.name === "execute_python" ? p.command : `$ ${p.command}`)}`);
    } else {
      view.print(
        `${s.yellow("?")} ${s.bold(p.name)} wants to run with ${oneLine(JSON.stringify(p.args), 200)}`,
      );
    }
    if (p.policy?.action === "ask")
      view.print(
        s.yellow(`  policy: ${p.policy.rule?.name ?? ""}${p.policy.reason ? ` — ${p.policy.reason}` : ""}`),
      );
    if (p.settingsPath !== undefined)
      view.print(
        s.yellow(
          `  ${p.settingsPath} is Hands' own settings for this project: it would apply to your next runs here (asked every time)`,
        ),
      );
    const choices = p.settingsPath !== undefined ? "[y]es / [n]o" : "[y]es / [n]o / [a]lways this session";
    for (;;) {
      if (p.signal.aborted) return { answer: "no", reason: "the user stopped the step" };
      const a = await input.read(`${s.yellow("Allow?")} ${choices}: `);
      if (a === null || p.signal.aborted) return { answer: "no", reason: "the user stopped the step" };
      const t = a.trim().toLowerCase();
      if (t === "y" || t === "yes") return { answer: "yes" };
      if ((t === "a" || t === "always") && p.settingsPath === undefined) return { answer: "always" };
      if (t === "n" || t === "no" || t.startsWith("n ")) {
        let reason = t.startsWith("n ") ? a.trim().slice(2).trim() : "";
        if (!reason) reason = ((await input.read(s.dim("Reason for the model (optional): "))) ?? "").trim();
        return { answer: "no", ...(reason ? { reason } : {}) };
      }
    }
  };
}
