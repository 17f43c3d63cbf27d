// The status line pinned to the terminal's last row while a request runs: the rows above it
// are a scroll region (DECSTBM), so streamed text scrolls while the last row is redrawn in
// place. Used only where the terminal is known to handle it; elsewhere the status line is
// printed before each prompt only.
const ESC = "\x1b";
/** How often the bar is redrawn anyway: readline's line refresh (an approval) can erase it. */
const REDRAW_MS = 1000;

export class StatusBar {
  private rows = 0;
  private active = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    /** The bar's text for a terminal `width` columns wide (it must not wrap). */
    private readonly render: (width: number) => string,
  ) {}

  /** A terminal with a known size and a TERM that speaks VT100 scroll regions. */
  static supported(out: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
    const term = env.TERM ?? "";
    return (
      Boolean(out.isTTY) &&
      process.platform !== "win32" &&
      /^(xterm|screen|tmux|rxvt|vt[12]\d\d|linux|alacritty|foot|kitty|wezterm|st)/.test(term) &&
      (out.rows ?? 0) >= 6 &&
      (out.columns ?? 0) >= 20
    );
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.rows = this.out.rows;
    // Down one line (scrolling when on the last row) and back up: the last row is then free,
    // and the cursor keeps its column.
    this.out.write(`${ESC}D${ESC}[1A${this.region()}`);
    this.draw();
    this.out.on("resize", this.onResize);
    process.on("exit", this.stop);
    this.timer = setInterval(this.draw, REDRAW_MS);
    this.timer.unref();
  }

  /** Redraws the bar (after the usage, the todo list or the screen changed). */
  readonly draw = (): void => {
    if (!this.active) return;
    const text = this.render(this.out.columns - 1);
    this.out.write(`${ESC}7${ESC}[${this.rows};1H${ESC}[2K${text}${ESC}8`);
  };

  /** Gives the whole screen back to scrolling and clears the bar. */
  readonly stop = (): void => {
    if (!this.active) return;
    this.active = false;
    clearInterval(this.timer);
    this.out.off("resize", this.onResize);
    process.off("exit", this.stop);
    this.out.write(`${ESC}7${ESC}[r${ESC}[${this.rows};1H${ESC}[2K${ESC}8`);
  };

  /** Setting the region homes the cursor, so it is saved and put back around it. */
  private region(): string {
    return `${ESC}7${ESC}[1;${this.rows - 1}r${ESC}8`;
  }

  private readonly onResize = (): void => {
    // The old bar row may now sit mid-screen: clear it before moving the bar.
    this.out.write(`${ESC}7${ESC}[r${ESC}[${Math.min(this.rows, this.out.rows)};1H${ESC}[2K${ESC}8`);
    this.rows = this.out.rows;
    if (this.rows < 6) {
      this.stop();
      return;
    }
    this.out.write(`${ESC}D${ESC}[1A${this.region()}`);
    this.draw();
  };
}
