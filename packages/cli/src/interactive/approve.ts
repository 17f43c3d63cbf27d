// Asks the person at the terminal about a write (showing its diff) or a command (showing it
// and where it runs). Answers: yes / no (then an optional reason the model sees) / always.
import type { ApprovalPrompt, UserAnswer } from "@hands/agent";
import { oneLine } from "../render.js";
import type { Input, View } from "./front.js";
import { capLines, colorDiff } from "./ui.js";

const MAX_DIFF_LINES = 60;

export function makeAsker(input: Input, view: View, sandbox = "local") {
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
    if (input.choose) {
      // A terminal: one key. "a" is offered only where an "always" may apply.
      const keys = p.settingsPath !== undefined ? ["y", "n"] : ["y", "n", "a"];
      const always = p.settingsPath !== undefined ? "" : ` / ${s.bold("a")}lways: ${alwaysScope(p)}`;
      const k = await input.choose(
        `${s.yellow("Allow?")} ${s.bold("y")}es / ${s.bold("n")}o (then a reason)${always} ${s.dim("· Esc stops")}`,
        keys,
      );
      if (k === null || p.signal.aborted) return { answer: "no", reason: "the user stopped the step" };
      if (k === "y") return { answer: "yes" };
      if (k === "a") return { answer: "always" };
      const reason = (
        (await input.read(s.dim("Reason for the model (optional; Enter to skip):"))) ?? ""
      ).trim();
      return { answer: "no", ...(reason ? { reason } : {}) };
    }
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

/** What an "always" answer would cover (the gate's rule: see alwaysKeys in @hands/agent). */
function alwaysScope(p: ApprovalPrompt): string {
  if (p.kind === "write") return "every file write this session";
  if (p.kind === "command" && p.name === "run_command" && p.command) {
    const words = p.command.trim().split(/\s+/).slice(0, 2).join(" ");
    return `"${oneLine(words, 30)}" commands like this one, this session`;
  }
  if (p.name === "web_fetch" && typeof p.args["url"] === "string") {
    const origin = URL.canParse(p.args["url"]) ? new URL(p.args["url"]).origin : p.args["url"];
    return `web_fetch to ${oneLine(origin, 60)} this session`;
  }
  if (p.name === "write_database") return `writes to ${oneLine(String(p.args["database"]), 40)} this session`;
  return `${p.name} this session`;
}
