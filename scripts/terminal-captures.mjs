#!/usr/bin/env node
// Screenshots of the interactive session for the README: `hands` runs in tmux against the
// scripted model server (packages/llm's, as the tests use), each scene is captured with its
// colours (capture-pane -e), turned into HTML and photographed by headless Chromium
// (/usr/bin/chromium, or HANDS_CHROMIUM) into docs/terminal/*.png. `npm run docs:terminal`
// (after `npm run build`).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TmuxSession } from "../packages/cli/dist/interactive/tmux.js";
import { startScriptedServer } from "../packages/llm/dist/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(ROOT, "packages", "cli", "bin", "hands.js");
const OUT = join(ROOT, "docs", "terminal");
const CHROMIUM = process.env.HANDS_CHROMIUM ?? "/usr/bin/chromium";
const scratch = mkdtempSync(join(tmpdir(), "hands-captures-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let scenes = 0;
/** Waits until the request in progress is over (no spinner left). */
async function idle(tmux) {
  for (let i = 0; i < 200 && tmux.rows().some((r) => /Esc to stop/.test(r)); i++) await sleep(50);
}

// xterm's 16 colours (a dark theme), then the 256-colour cube and greys.
const BASE = [
  "#1e1e1e",
  "#e06c75",
  "#98c379",
  "#e5c07b",
  "#61afef",
  "#c678dd",
  "#56b6c2",
  "#d0d0d0",
  "#5c6370",
  "#ff7b86",
  "#b5e890",
  "#ffd68a",
  "#82c4ff",
  "#e599f7",
  "#7fd3dc",
  "#ffffff",
];
function color256(n) {
  if (n < 16) return BASE[n];
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const i = n - 16;
  const c = (x) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${c(Math.floor(i / 36))},${c(Math.floor(i / 6) % 6)},${c(i % 6)})`;
}

const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** One captured row (text with SGR sequences) as HTML spans. */
function rowToHtml(row, state) {
  let html = "";
  const open = () => {
    const st = [];
    let fg = state.fg;
    let bg = state.bg;
    if (state.inverse) [fg, bg] = [bg ?? "#1e1e1e", fg ?? "#d0d0d0"];
    if (fg) st.push(`color:${fg}`);
    if (bg) st.push(`background:${bg}`);
    if (state.bold) st.push("font-weight:bold");
    if (state.dim) st.push("opacity:0.62");
    if (state.italic) st.push("font-style:italic");
    const deco = [state.underline && "underline", state.strike && "line-through"].filter(Boolean).join(" ");
    if (deco) st.push(`text-decoration:${deco}`);
    return st.length ? `<span style="${st.join(";")}">` : "<span>";
  };
  for (const part of row.split(/(\x1b\[[0-9;:]*m)/)) {
    const m = /^\x1b\[([0-9;:]*)m$/.exec(part);
    if (!m) {
      if (part) html += `${open()}${escapeHtml(part.replace(/\x1b[^a-zA-Z]*[a-zA-Z]/g, ""))}</span>`;
      continue;
    }
    const codes = (m[1] || "0").split(/[;:]/).map(Number);
    for (let i = 0; i < codes.length; i++) {
      const c = codes[i];
      if (c === 0)
        Object.assign(state, {
          fg: undefined,
          bg: undefined,
          bold: false,
          dim: false,
          italic: false,
          underline: false,
          strike: false,
          inverse: false,
        });
      else if (c === 1) state.bold = true;
      else if (c === 2) state.dim = true;
      else if (c === 3) state.italic = true;
      else if (c === 4) state.underline = true;
      else if (c === 7) state.inverse = true;
      else if (c === 9) state.strike = true;
      else if (c === 22) state.bold = state.dim = false;
      else if (c === 23) state.italic = false;
      else if (c === 24) state.underline = false;
      else if (c === 27) state.inverse = false;
      else if (c === 29) state.strike = false;
      else if (c >= 30 && c <= 37) state.fg = BASE[c - 30];
      else if (c >= 90 && c <= 97) state.fg = BASE[c - 90 + 8];
      else if (c >= 40 && c <= 47) state.bg = BASE[c - 40];
      else if (c >= 100 && c <= 107) state.bg = BASE[c - 100 + 8];
      else if (c === 39) state.fg = undefined;
      else if (c === 49) state.bg = undefined;
      else if ((c === 38 || c === 48) && codes[i + 1] === 5) {
        state[c === 38 ? "fg" : "bg"] = color256(codes[i + 2]);
        i += 2;
      } else if ((c === 38 || c === 48) && codes[i + 1] === 2) {
        state[c === 38 ? "fg" : "bg"] = `rgb(${codes[i + 2]},${codes[i + 3]},${codes[i + 4]})`;
        i += 4;
      }
    }
  }
  return html;
}

/** The screen (rows with escapes) as a PNG of `columns`×`rows` cells. */
function photograph(name, captured, columns) {
  let ansiRows = captured;
  const state = {};
  const rows = [...ansiRows];
  while (
    rows.length > 1 &&
    !rows
      .at(-1)
      .replace(/\x1b\[[0-9;:]*m/g, "")
      .trim()
  )
    rows.pop();
  // Headless Chromium draws nothing in a window under ~200 px high: a few blank rows more.
  while (rows.length < 12) rows.push("");
  ansiRows = rows;
  const body = ansiRows.map((r) => rowToHtml(r, state) || " ").join("\n");
  const cellW = 8.43; // DejaVu Sans Mono at 14px
  const lineH = 16;
  const width = Math.ceil(columns * cellW + 32);
  const height = Math.ceil(ansiRows.length * lineH + 32);
  const html = `<!doctype html><meta charset="utf-8"><style>
  html,body{margin:0;background:#1e1e1e}
  pre{margin:0;padding:16px;font:14px/16px "DejaVu Sans Mono",monospace;color:#d0d0d0;white-space:pre}
  </style><pre>${body}</pre>`;
  const file = join(scratch, `${name}.html`);
  writeFileSync(file, html);
  execFileSync(
    CHROMIUM,
    [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      // Wait for the font and the first paint before the shot (a small page was caught blank).
      "--run-all-compositor-stages-before-draw",
      "--virtual-time-budget=3000",
      `--user-data-dir=${join(scratch, "profile")}`,
      `--window-size=${width},${height}`,
      `--screenshot=${join(OUT, `${name}.png`)}`,
      `file://${file}`,
    ],
    { stdio: "ignore", timeout: 60_000 },
  );
  console.log(`docs/terminal/${name}.png`);
}

/** Starts `hands` in a colour terminal against `script`. */
async function session(script, { columns = 100, rows = 30, args = [], files = {} } = {}) {
  const server = await startScriptedServer(script);
  // A plain project name on the screen (each scene gets a fresh one).
  const ws = join(scratch, `my-project-${++scenes}`);
  mkdirSync(ws);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, path)), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  const tmux = new TmuxSession(columns, rows);
  tmux.start([process.execPath, BIN, "--model", "demo-model", ...args], ws, {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: scratch,
    TERM: "xterm-256color",
    HANDS_DATA_DIR: join(scratch, `data-${Math.random().toString(36).slice(2)}`),
    XDG_CONFIG_HOME: join(scratch, "config"),
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "sk-demo",
  });
  await tmux.waitFor(/^› *$/m);
  await tmux.waitFor(/── demo-model/);
  return {
    tmux,
    async close() {
      tmux.kill();
      await server.close();
    },
  };
}

const ANSWER = `## What \`parseArgs\` does

It reads the command line into **one options object**:

- flags become booleans or strings
- the rest are the task's words

| flag | meaning |
|------|---------|
| \`--model\` | the model to use |
| \`--plan\` | plan first, read-only |

\`\`\`ts
export function parseArgs(argv: string[]): CliArgs {
  const out: CliArgs = { task: undefined }; // filled below
  for (const a of argv) if (a === "--plan") out.plan = true;
  return out;
}
\`\`\`

That is the whole of it.`;

mkdirSync(OUT, { recursive: true });
try {
  {
    const s = await session([
      { reasoning: "The user wants an explanation of parseArgs.", content: ANSWER, chunkSize: 24 },
    ]);
    s.tmux.type("what does parseArgs do?");
    await s.tmux.waitFor(/That is the whole of it\./);
    await idle(s.tmux);
    photograph("markdown", s.tmux.rowsAnsi(), 100);
    await s.close();
  }
  {
    const s = await session(
      [
        {
          content: "",
          toolCalls: [
            {
              name: "run_command",
              arguments: {
                command: 'for i in 1 2 3 4 5 6; do echo "test $i passed"; sleep 0.4; done; sleep 5',
              },
            },
          ],
        },
        { content: "All six tests pass." },
      ],
      { args: ["--approval", "auto", "--sandbox", "local"] },
    );
    s.tmux.type("run the tests");
    await s.tmux.waitFor(/test 6 passed/);
    s.tmux.type("then update the changelog", true);
    await s.tmux.waitFor(/queued › then update/);
    await sleep(200);
    photograph("live-tool", s.tmux.rowsAnsi(), 100);
    await s.close();
  }
  {
    const s = await session(
      [
        {
          content: "",
          toolCalls: [
            {
              name: "edit_file",
              arguments: { path: "src/greet.ts", old_string: '"Hello"', new_string: '"Hello, world"' },
            },
          ],
        },
        { content: "Changed the greeting." },
      ],
      { files: { "src/greet.ts": 'export const greeting = "Hello";\nexport const name = "hands";\n' } },
    );
    s.tmux.type("say hello to the world in src/greet.ts");
    await s.tmux.waitFor(/Allow\?/);
    await sleep(200);
    photograph("approval", s.tmux.rowsAnsi(), 100);
    await s.close();
  }
  {
    const s = await session([], {
      files: { "src/greet.ts": "x\n", "src/args.ts": "y\n", "README.md": "z\n" },
    });
    s.tmux.type("/", false);
    await s.tmux.waitFor(/help +list the commands/);
    await sleep(200);
    photograph("slash-menu", s.tmux.rowsAnsi(), 100);
    s.tmux.keys("C-u");
    s.tmux.type("explain @arg", false);
    await s.tmux.waitFor(/src\/args\.ts/);
    await sleep(200);
    photograph("at-file", s.tmux.rowsAnsi(), 100);
    await s.close();
  }
  {
    const s = await session(
      [
        { content: "", toolCalls: [{ name: "run_command", arguments: { command: "ls src; echo done" } }] },
        { content: ANSWER, chunkSize: 30 },
      ],
      {
        columns: 60,
        rows: 34,
        args: ["--approval", "auto", "--sandbox", "local"],
        files: { "src/a.ts": "a\n" },
      },
    );
    s.tmux.type("list src, then explain parseArgs");
    await s.tmux.waitFor(/That is the whole of it\./);
    await idle(s.tmux);
    photograph("narrow-60", s.tmux.rowsAnsi(), 60);
    await s.close();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
