// Asks once, at the start of a session in a terminal, whether to trust a folder whose .hands/
// settings would otherwise be partly ignored — showing exactly which ones.
import { createInterface } from "node:readline";
import type { Style } from "../render.js";

/** True when the person answers yes; anything else (or end of input) is no. */
export async function askTrust(
  workspace: string,
  ignored: string[],
  style: Style,
  out: (text: string) => void,
): Promise<boolean> {
  out(
    `${style.yellow("?")} ${style.bold(workspace)} is not a trusted folder. Its .hands/ settings include:\n` +
      ignored.map((i) => `    ${i}\n`).join("") +
      style.dim("  A repository you cloned, or a command run here, can write these files.\n"),
  );
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    const answer = await new Promise<string | null>((resolve) => {
      rl.once("close", () => resolve(null));
      rl.question(`${style.yellow("Trust this folder and apply them?")} [y/N] `, resolve);
    });
    return /^y(es)?$/i.test(answer?.trim() ?? "");
  } finally {
    rl.close();
  }
}
