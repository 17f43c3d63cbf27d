// The interactive session in a terminal, on pi-tui: the conversation (markdown answers, live
// tool calls), then what is queued, the question being asked, the editor and the status line.
// pi-tui redraws only the rows that changed. Requests typed while one runs are queued (shown,
// editable with Up, dropped by Esc or Ctrl-C, which also stop the run); a paste is one request.
import type { AgentEvent, TodoItem } from "@hands/agent";
import { formatCost } from "@hands/llm";
import {
  type Component,
  Container,
  Editor,
  type Focusable,
  matchesKey,
  ProcessTerminal,
  type SlashCommand,
  TUI,
  truncateToWidth,
  visibleWidth,
} from "@mariozechner/pi-tui";
import { formatMs, oneLine, type Style, shownOutput, thinkingLine, toolOutcome } from "../../render.js";
import type { Input, StatusInfo, ToolRecord, View } from "../front.js";
import { deniedLine, formatTokens, SessionView } from "../ui.js";
import { Block } from "./block.js";
import { atMentions, HandsAutocomplete, readAttachment, withAttachments } from "./files.js";
import type { PromptHistory } from "./history.js";
import { AnswerBlock } from "./markdown.js";
import { ToolBlock } from "./tool-block.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** The editor's border lines start with this (a no-op SGR), so the prompt box can find them. */
const BORDER = "\x1b[22m";
/**
 * While a request runs, one timer draws the stream, the spinner and the elapsed times, about 15
 * times a second. pi-tui draws a frame at most every 16 ms: each frame for the stream keeps a
 * key typed just after it waiting for the next slot, so they are kept few.
 */
const RUN_FRAME_MS = 66;
/** Lines of a request echoed into the conversation (a paste shows its first lines). */
const ECHO_LINES = 6;

export interface TuiOptions {
  style: Style;
  /** Render answers as markdown (colour); false: plain text (NO_COLOR). */
  markdown: boolean;
  workspace: string;
  history: PromptHistory;
  commands: SlashCommand[];
  /** The status line for a width. */
  status: (width: number) => string;
  /** A run or a wait for approval longer than this rings the terminal's bell. */
  notifyAfterMs: number;
}

/** A component drawn by a function. */
class Lines implements Component {
  constructor(private readonly draw: (width: number) => string[]) {}
  render(width: number): string[] {
    return this.draw(width);
  }
  invalidate(): void {}
}

/** The editor with a `›` in front, its border lines dropped (they are the status line's job). */
class PromptBox implements Component, Focusable {
  private isFocused = false;
  /** Ctrl-R: the query and the entry it found. */
  search: { query: string; found: { index: number; text: string } | undefined } | undefined;

  constructor(
    readonly editor: Editor,
    private readonly style: Style,
  ) {}

  get focused(): boolean {
    return this.isFocused;
  }
  set focused(v: boolean) {
    this.isFocused = v;
    this.editor.focused = v;
  }

  invalidate(): void {
    this.editor.invalidate();
  }

  handleInput(data: string): void {
    this.editor.handleInput(data);
  }

  render(width: number): string[] {
    const s = this.style;
    if (this.search) {
      const { query, found } = this.search;
      const label = found ? "reverse-i-search" : "failing reverse-i-search";
      return [
        truncateToWidth(`${s.dim(`(${label})`)} '${query}': ${oneLine(found?.text ?? "", 400)}`, width, "…"),
      ];
    }
    const inner = this.editor.render(Math.max(10, width - 2));
    const out: string[] = [];
    let borders = 0;
    for (const line of inner) {
      if (line.startsWith(BORDER)) {
        borders++;
        // A border only matters when it says there is more text above or below.
        if (line.includes("more")) out.push(truncateToWidth(`  ${line}`, width));
        continue;
      }
      const first = borders === 1 && out.filter((l) => !l.includes("more")).length === 0;
      // The editor pads its lines to the width: blanks a copy of the screen would carry. Its
      // paste marker reads as what it is, in the same number of columns (the cursor keeps its place).
      const shown = line
        .replace(/ +$/, "")
        .replace(/\[paste #(\d+) \+(\d+) lines\]/g, "[pasted $2 lines #$1]");
      out.push(`${borders === 1 ? (first ? s.cyan("› ") : "  ") : "  "}${shown}`);
    }
    return out;
  }
}

export class TuiFront implements View, Input {
  readonly tty = true;
  readonly style: Style;
  readonly tools: ToolRecord[] = [];
  readonly thoughts: string[] = [];
  todos: TodoItem[] = [];
  turnTokens = 0;
  contextTokens = 0;

  readonly tui: TUI;
  private readonly log = new Container();
  private readonly editor: Editor;
  private readonly prompt: PromptBox;
  private readonly plainView: SessionView;

  /** Requests typed while the session was busy, oldest first. */
  private readonly queue: string[] = [];
  private waitingRequest: ((text: string | null) => void) | undefined;
  private waitingRead: { prompt: string; resolve: (text: string | null) => void; draft: string } | undefined;
  private choice: { prompt: string; keys: string[]; resolve: (key: string | null) => void } | undefined;
  private closed = false;
  private isSuspended = false;
  private lastCtrlC = 0;

  /** Set while a request runs: what Esc and Ctrl-C call to stop it. */
  interrupt: (() => void) | undefined;
  private runStart = 0;
  private spin: { label: string; start: number } | undefined;
  private thinkingChars = 0;
  private frame = 0;
  private ticker: NodeJS.Timeout | undefined;
  private answer: { step: number; block: AnswerBlock } | undefined;
  private readonly toolBlocks = new Map<string, ToolBlock>();
  private lastToolBlock: ToolBlock | undefined;
  private notice: string | undefined;
  private readonly live = new Lines((w) => this.liveLines(w));
  private readonly footer = new Lines((w) => [truncateToWidth(this.options.status(w - 1), w - 1, "…")]);

  constructor(private readonly options: TuiOptions) {
    this.style = options.style;
    const s = this.style;
    this.plainView = new SessionView(() => {}, s, false);
    this.tui = new TUI(new ProcessTerminal());
    this.tui.setClearOnShrink(false);
    this.editor = new Editor(this.tui, {
      borderColor: (t) => `${BORDER}${s.dim(t)}`,
      selectList: {
        selectedPrefix: (t) => s.cyan(t),
        selectedText: (t) => s.bold(t),
        description: (t) => s.dim(t),
        scrollInfo: (t) => s.dim(t),
        noMatch: (t) => s.dim(t),
      },
    });
    this.editor.setAutocompleteProvider(new HandsAutocomplete(options.commands, options.workspace));
    for (const h of options.history.entries) this.editor.addToHistory(h);
    this.editor.onSubmit = (text) => this.submitted(text);
    this.prompt = new PromptBox(this.editor, s);

    this.tui.addChild(this.log);
    this.tui.addChild(this.live);
    this.tui.addChild(this.prompt);
    this.tui.addChild(this.footer);
    this.tui.setFocus(this.prompt);
    this.tui.addInputListener((data) => this.onKey(data));
  }

  /** Starts drawing; resolves once the first frame (an editable prompt) is on the terminal. */
  async start(): Promise<void> {
    this.tui.start();
    // The frame is drawn on a timer pi-tui sets now: let it run before the caller goes on to
    // synchronous work (opening the session reads files and probes the sandbox).
    await new Promise((r) => setTimeout(r, 2));
  }

  private render(): void {
    if (!this.closed) this.tui.requestRender();
  }

  // ---- output -------------------------------------------------------------------------------

  print(text: string): void {
    const block = new Block(text.replace(/\n$/, ""));
    // While tool calls run (an approval asks about one), what is said goes above their lines.
    const running = this.log.children.findIndex((c) => c instanceof ToolBlock && c.running);
    if (running >= 0) this.log.children.splice(running, 0, block);
    else this.log.addChild(block);
    this.render();
  }

  breakLine(): void {
    this.answer?.block.finish();
    this.answer = undefined;
    this.render();
  }

  startSpinner(label = "thinking"): void {
    this.spin = { label, start: this.spin?.start ?? performance.now() };
    this.tick(true);
  }

  stopSpinner(): void {
    this.spin = undefined;
    this.render();
  }

  /** Redraws while something shows elapsed time. */
  private tick(on: boolean): void {
    if (on && !this.ticker) {
      this.ticker = setInterval(() => {
        this.frame++;
        this.render();
      }, RUN_FRAME_MS);
      this.ticker.unref();
    } else if (!on && this.ticker && !this.spin && !this.interrupt) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  statusLine(info: StatusInfo): string {
    this.plainView.contextTokens = this.contextTokens;
    this.plainView.todos = this.todos;
    const { width, ...whole } = info;
    const full = this.plainView.statusLine(whole);
    if (width === undefined || visibleWidth(full) <= width) return full;
    // Narrow: the workspace and the sandbox go first, so model, context, cost and mode still show.
    const parts = [
      info.model,
      `ctx ${formatTokens(this.contextTokens)}${info.contextBudget ? `/${formatTokens(info.contextBudget)}` : ""}`,
      formatCost(info.usage.costUsd),
      info.approval,
    ];
    return this.style.dim(truncateToWidth(`── ${parts.join(" · ")} ──`, width, "…"));
  }

  /** The rows between the conversation and the editor: spinner, queue, question. */
  private liveLines(width: number): string[] {
    const s = this.style;
    const out: string[] = [];
    const toolRunning = [...this.toolBlocks.values()].some((b) => b.running);
    if (this.spin && !toolRunning && !this.choice) {
      const f = FRAMES[this.frame % FRAMES.length] ?? "";
      const thinking = this.thinkingChars ? ` · thinking (${formatTokens(this.thinkingChars)} chars)` : "";
      out.push(
        truncateToWidth(
          `${s.cyan(f)} ${s.dim(`${this.spin.label}${thinking} · ${formatMs(performance.now() - this.spin.start)} · ${formatTokens(this.turnTokens)} tokens · Esc to stop`)}`,
          width,
          "…",
        ),
      );
    }
    for (const q of this.queue)
      out.push(truncateToWidth(`${s.dim("  queued ›")} ${oneLine(q, 500)}`, width - 1, "…"));
    if (this.queue.length)
      out.push(
        s.dim(truncateToWidth("  (↑ edits the last queued request · Esc drops the queue)", width - 1, "…")),
      );
    if (this.notice) out.push(truncateToWidth(s.dim(this.notice), width - 1, "…"));
    const q = this.choice?.prompt ?? this.waitingRead?.prompt;
    if (q) out.push(...new Block(q).render(width));
    return out;
  }

  readonly onEvent = (e: AgentEvent): void => {
    const s = this.style;
    switch (e.type) {
      case "model_request":
        this.thinkingChars = 0;
        this.startSpinner("thinking");
        break;
      case "thinking_delta":
        this.thinkingChars += e.text.length;
        break;
      case "thinking": {
        this.thoughts.push(e.text);
        const line = new Block(s.dim(`${thinkingLine(e.text, e.tokens, 90)} · /thinking to expand`));
        // The thought goes before the answer it led to, even when it is reported after it.
        const at = this.answer ? this.log.children.indexOf(this.answer.block) : -1;
        if (at >= 0) this.log.children.splice(at, 0, line);
        else this.log.addChild(line);
        break;
      }
      case "model_notice":
        this.print(s.yellow(`  ! ${oneLine(e.message, 300)}`));
        break;
      case "text_delta":
        if (this.answer?.step !== e.step) {
          this.answer?.block.finish();
          this.answer = { step: e.step, block: new AnswerBlock(this.options.markdown) };
          this.log.addChild(this.answer.block);
          if (this.spin) this.spin.label = "answering";
        }
        this.answer.block.append(e.text);
        break;
      case "model_retry":
        this.print(
          s.yellow(`  ↻ model call failed (${e.error}); retry ${e.attempt} in ${formatMs(e.delayMs)}`),
        );
        break;
      case "model_response": {
        this.turnTokens += e.usage.inputTokens + e.usage.outputTokens;
        this.contextTokens = e.usage.inputTokens;
        if (this.answer?.step === e.step) this.answer.block.finish(e.content.trim() ? e.content : undefined);
        else if (e.content.trim()) {
          // Not streamed (a provider without streaming): the whole text at once, once.
          const block = new AnswerBlock(this.options.markdown);
          block.finish(e.content);
          this.log.addChild(block);
        }
        this.answer = undefined;
        if (this.spin) this.spin.label = "working";
        break;
      }
      case "correction":
        this.print(s.yellow(`  ! ${oneLine(e.text, 300)}`));
        break;
      case "tool_start": {
        const block = new ToolBlock(e.callId, e.name, e.args, s);
        this.toolBlocks.set(e.callId, block);
        this.lastToolBlock = block;
        this.log.addChild(block);
        break;
      }
      case "tool_output":
        this.toolBlocks.get(e.callId)?.append(e.text);
        break;
      case "approval": {
        const denied = deniedLine(e, s);
        if (denied) this.print(denied);
        break;
      }
      case "tool_end": {
        const block = this.toolBlocks.get(e.callId);
        this.tools.push({ name: e.name, args: block?.args, output: e.output, isError: e.isError });
        if (e.name === "todo" && Array.isArray(e.data?.["todos"])) this.todos = e.data["todos"] as TodoItem[];
        block?.finish(toolOutcome(e), e.durationMs, shownOutput(e.output, e.data));
        this.toolBlocks.delete(e.callId);
        break;
      }
      case "result":
        this.breakLine();
        // The run is over; the session still saves and learns from it before the next request.
        this.thinkingChars = 0;
        if (this.interrupt) this.spin = { label: "finishing", start: performance.now() };
        else this.stopSpinner();
        if (e.status !== "done") this.print(s.red(`✘ ${e.status}: ${e.reason ?? ""}`));
        break;
    }
    // Streamed pieces wait for the run's next frame (see RUN_FRAME_MS); other events show at once.
    const streamed = e.type === "text_delta" || e.type === "thinking_delta" || e.type === "tool_output";
    if (!streamed || !this.ticker) this.render();
  };

  /** A run starts: Esc and Ctrl-C now stop it. */
  beginRun(stop: () => void): void {
    this.interrupt = stop;
    this.turnTokens = 0;
    this.runStart = performance.now();
    this.tick(true);
  }

  endRun(): void {
    this.interrupt = undefined;
    this.spin = undefined;
    this.toolBlocks.clear();
    this.tick(false);
    if (performance.now() - this.runStart >= this.options.notifyAfterMs)
      this.notify("hands: the request is done");
    this.render();
  }

  /** The terminal's bell, and an OSC 9 notification for terminals that show one. */
  private notify(text: string): void {
    this.tui.terminal.write(`\x1b]9;${text.replace(/[\x00-\x1f]/g, " ")}\x07\x07`);
  }

  /** Expands the output of the newest tool call in place (Ctrl-O), or folds it again. */
  toggleLastTool(): boolean {
    const b = this.lastToolBlock;
    if (!b || b.running) return false;
    b.expanded = !b.expanded;
    this.render();
    return true;
  }

  // ---- input --------------------------------------------------------------------------------

  private echo(text: string): void {
    const s = this.style;
    const lines = text.split("\n");
    const shown = lines.slice(0, ECHO_LINES).map((l, i) => `${i === 0 ? s.cyan("›") : " "} ${l}`);
    if (lines.length > ECHO_LINES) shown.push(s.dim(`  … ${lines.length - ECHO_LINES} more lines`));
    // A blank line between one exchange and the next.
    if (this.log.children.length > 1) this.log.addChild(new Block(""));
    this.log.addChild(new Block(shown.join("\n")));
  }

  /** The editor's Enter: answers a question, starts a request, or queues one. */
  private submitted(text: string): void {
    if (this.waitingRead) {
      const w = this.waitingRead;
      this.waitingRead = undefined;
      this.editor.setText(w.draft);
      w.resolve(text);
      this.render();
      return;
    }
    if (!text.trim()) return;
    this.options.history.add(text);
    this.editor.addToHistory(text);
    if (this.waitingRequest) {
      const w = this.waitingRequest;
      this.waitingRequest = undefined;
      w(text);
    } else this.queue.push(text);
    this.render();
  }

  readRequest(): Promise<string | null> {
    this.notice = undefined;
    const queued = this.queue.shift();
    const next =
      queued !== undefined
        ? Promise.resolve(queued)
        : this.closed
          ? Promise.resolve(null)
          : new Promise<string | null>((resolve) => {
              this.waitingRequest = resolve;
              this.render();
            });
    return next.then((text) => (text === null ? null : this.takeRequest(text)));
  }

  /** Echoes a request into the conversation, with the files its `@path`s attach. */
  takeRequest(text: string): string {
    this.echo(text);
    if (text.trim().startsWith("/")) return text;
    const attached = [];
    for (const rel of atMentions(text)) {
      const r = readAttachment(this.options.workspace, rel);
      if ("ok" in r) {
        attached.push(r.ok);
        const size = r.ok.bytes < 1024 ? `${r.ok.bytes} B` : `${(r.ok.bytes / 1024).toFixed(1)} KB`;
        this.print(this.style.dim(`  ⎘ attached ${rel} (${size}${r.ok.truncated ? ", first 64 KB" : ""})`));
      } else if (r.error !== "no such file")
        this.print(this.style.yellow(`  ! not attached: ${rel} (${r.error})`));
    }
    this.render();
    return withAttachments(text, attached);
  }

  read(prompt: string): Promise<string | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const draft = this.editor.getText();
      this.editor.setText("");
      this.waitingRead = { prompt, resolve, draft };
      this.render();
    });
  }

  choose(prompt: string, keys: string[]): Promise<string | null> {
    if (this.closed) return Promise.resolve(null);
    if (performance.now() - this.runStart >= this.options.notifyAfterMs)
      this.notify("hands: waiting for your approval");
    return new Promise((resolve) => {
      this.choice = { prompt, keys, resolve };
      this.render();
    });
  }

  cancelPending(): boolean {
    if (this.choice) {
      const c = this.choice;
      this.choice = undefined;
      c.resolve(null);
      return true;
    }
    if (this.waitingRead) {
      const w = this.waitingRead;
      this.waitingRead = undefined;
      this.editor.setText(w.draft);
      w.resolve("");
      return true;
    }
    return false;
  }

  /** Esc or Ctrl-C while a request runs: stop it, drop the queue, cancel the question. */
  private stopRun(): void {
    const dropped = this.queue.splice(0).length;
    this.print(
      this.style.yellow(
        `Stopping…${dropped ? ` (dropped ${dropped} queued request${dropped === 1 ? "" : "s"})` : ""} (the conversation stays; Ctrl-C twice at the prompt quits)`,
      ),
    );
    this.cancelPending();
    this.interrupt?.();
  }

  private onKey(data: string): { consume?: boolean } | undefined {
    if (this.isSuspended) return { consume: true };
    const consume = { consume: true };
    if (this.prompt.search) return this.searchKey(data) ? consume : undefined;
    if (this.choice) {
      if (matchesKey(data, "ctrl+c") || matchesKey(data, "escape")) {
        if (this.interrupt) this.stopRun();
        else this.cancelPending();
        return consume;
      }
      const k = data.length === 1 ? data.toLowerCase() : "";
      if (this.choice.keys.includes(k)) {
        const c = this.choice;
        this.choice = undefined;
        c.resolve(k);
        this.render();
      }
      return consume;
    }
    if (matchesKey(data, "ctrl+c")) {
      if (this.interrupt) this.stopRun();
      else if (this.waitingRead) this.cancelPending();
      else if (this.editor.getText()) this.editor.setText("");
      else if (Date.now() - this.lastCtrlC < 2000) this.quit();
      else {
        this.lastCtrlC = Date.now();
        this.notice = "(Ctrl-C again to quit, or Ctrl-D)";
      }
      this.render();
      return consume;
    }
    if (matchesKey(data, "escape")) {
      if (this.editor.isShowingAutocomplete()) return undefined;
      if (this.interrupt) {
        this.stopRun();
        return consume;
      }
      if (this.waitingRead) {
        this.cancelPending();
        return consume;
      }
      return undefined;
    }
    if (matchesKey(data, "ctrl+d") && !this.editor.getText()) {
      if (this.waitingRead) this.cancelPending();
      else this.quit();
      return consume;
    }
    if (matchesKey(data, "ctrl+r")) {
      this.prompt.search = { query: "", found: this.options.history.search("") };
      this.render();
      return consume;
    }
    if (matchesKey(data, "ctrl+o")) {
      this.toggleLastTool();
      return consume;
    }
    if (matchesKey(data, "ctrl+x")) {
      // A paste shows as a marker; this puts its text in the editor to edit before sending.
      const expanded = this.editor.getExpandedText();
      if (expanded !== this.editor.getText()) this.editor.setText(expanded);
      this.render();
      return consume;
    }
    if (matchesKey(data, "up") && !this.editor.getText() && this.queue.length && !this.waitingRead) {
      this.editor.setText(this.queue.pop()!);
      this.render();
      return consume;
    }
    this.notice = undefined;
    return undefined;
  }

  /** Keys while Ctrl-R searches the history; true when the key was the search's. */
  private searchKey(data: string): boolean {
    const search = this.prompt.search!;
    const h = this.options.history;
    if (matchesKey(data, "ctrl+r")) {
      search.found = h.search(search.query, search.found?.index ?? h.entries.length) ?? search.found;
    } else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+g") || matchesKey(data, "ctrl+c")) {
      this.prompt.search = undefined;
    } else if (matchesKey(data, "backspace")) {
      search.query = search.query.slice(0, -1);
      search.found = h.search(search.query);
    } else if (
      matchesKey(data, "enter") ||
      matchesKey(data, "tab") ||
      matchesKey(data, "right") ||
      matchesKey(data, "left")
    ) {
      if (search.found) this.editor.setText(search.found.text);
      this.prompt.search = undefined;
    } else if (data.length >= 1 && !data.startsWith("\x1b") && data.charCodeAt(0) >= 32) {
      search.query += data;
      search.found = h.search(search.query);
    } else {
      // Any other key ends the search with what it found, then acts as usual.
      if (search.found) this.editor.setText(search.found.text);
      this.prompt.search = undefined;
      this.render();
      return false;
    }
    this.render();
    return true;
  }

  private quit(): void {
    const w = this.waitingRequest;
    this.waitingRequest = undefined;
    this.closed = true;
    w?.(null);
    this.cancelPending();
  }

  get suspended(): boolean {
    return this.isSuspended;
  }

  suspend(): void {
    this.isSuspended = true;
    this.tui.stop();
  }

  resume(): void {
    this.isSuspended = false;
    this.tui.start();
    this.tui.requestRender(true);
  }

  close(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    if (!this.closed) this.quit();
    this.tui.requestRender();
  }

  /** Stops drawing and gives the terminal back (the screen keeps the conversation). */
  async stop(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    // The last frame is the conversation alone: no editor or status line left in the scrollback.
    this.tui.setFocus(null);
    for (const c of [this.live, this.prompt, this.footer]) this.tui.removeChild(c);
    this.tui.requestRender();
    await new Promise((r) => setTimeout(r, 40));
    this.tui.stop();
  }
}
