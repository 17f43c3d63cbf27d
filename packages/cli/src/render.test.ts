import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent } from "@hands/agent";
import { SessionView } from "./interactive/ui.js";
import {
  COLOR,
  displayWidth,
  fitWidth,
  LiveView,
  PLAIN,
  resultSummary,
  shownOutput,
  toolOutcome,
} from "./render.js";

/** A tool_end as run_command reports it (see runInSandbox in @hands/agent). */
function commandEnd(callId: string, data: Record<string, unknown>, output: string): AgentEvent {
  return {
    type: "tool_end",
    time: 0,
    step: 1,
    callId,
    name: "run_command",
    isError: false,
    output,
    resultChars: output.length,
    truncated: false,
    durationMs: 5,
    data: { command: "x", signal: null, timedOut: false, aborted: false, truncated: false, ...data },
  };
}

const ENDS = [
  commandEnd("a", { exitCode: 0 }, "exit code: 0\n(no output)"),
  commandEnd("b", { exitCode: 1 }, "exit code: 1\n(no output)"),
  commandEnd("c", { exitCode: null, signal: "SIGKILL" }, "exit code: none — killed by signal SIGKILL"),
  commandEnd("d", { exitCode: null, timedOut: true }, "exit code: none — TIMED OUT after 1 s"),
  commandEnd("e", { exitCode: null, aborted: true }, "exit code: none — ABORTED"),
];

describe("tool marks", () => {
  it("a command's exit code, timeout or abort decides the outcome, not only isError", () => {
    assert.deepEqual(
      ENDS.map((e) => toolOutcome(e as Extract<AgentEvent, { type: "tool_end" }>)),
      ["ok", "error", "error", "timed out", "aborted"],
    );
    assert.equal(toolOutcome({ isError: true }), "error");
    assert.equal(toolOutcome({ isError: false, data: { path: "a.ts" } }), "ok");
  });

  it("the live view and the session view show ✓ only for success", () => {
    let live = "";
    const view = new LiveView((t) => {
      live += t;
    }, PLAIN);
    let session = "";
    const sessionView = new SessionView(
      (t) => {
        session += t;
      },
      PLAIN,
      false,
    );
    for (const e of ENDS) {
      view.onEvent(e);
      sessionView.onEvent(e);
    }
    const marks = (text: string) =>
      text
        .trim()
        .split("\n")
        .map((l) => l.trim()[0]);
    assert.deepEqual(marks(live), ["✓", "✗", "✗", "⏱", "⊘"]);
    assert.deepEqual(marks(session), ["✓", "✗", "✗", "⏱", "⊘"]);
  });
});

describe("fitWidth", () => {
  it("leaves text that fits alone and cuts the rest with … within the columns", () => {
    assert.equal(fitWidth("short", 10), "short");
    assert.equal(fitWidth("exactly 10", 10), "exactly 10");
    assert.equal(fitWidth("a longer line", 10), "a longer …");
  });

  it("escape sequences take no columns, and a cut line ends with a reset", () => {
    const styled = `${COLOR.green("✓")} ${COLOR.bold("run_command")} ${COLOR.dim("echo hello world")}`;
    assert.equal(fitWidth(styled, 40), styled);
    const cut = fitWidth(styled, 12);
    assert.equal(displayWidth(cut.replace(/\x1b\[[0-9;]*m/g, "")), 12);
    assert.ok(cut.endsWith("…\x1b[0m"));
  });

  it("wide characters count two columns", () => {
    assert.equal(displayWidth("写一个"), 6);
    assert.equal(fitWidth("写一个测试", 7), "写一个…");
  });
});

describe("shownOutput", () => {
  it("a clean run, sent to the model as its output alone, is shown with its exit code", () => {
    assert.equal(resultSummary(shownOutput("55", { exitCode: 0 })), "exit code: 0 · 55");
    assert.equal(shownOutput("(no output)", { exitCode: 0 }), "exit code: 0\n(no output)");
    // Framed results and other tools' outputs are shown as they are.
    const framed = "exit code: 0\nstdout:\nhi\nstderr:\nwarn";
    assert.equal(shownOutput(framed, { exitCode: 0 }), framed);
    assert.equal(shownOutput("exit code: 2\n(no output)", { exitCode: 2 }), "exit code: 2\n(no output)");
    assert.equal(shownOutput("a.txt", { path: "a.txt" }), "a.txt");
    assert.equal(shownOutput("x", undefined), "x");
  });
});
