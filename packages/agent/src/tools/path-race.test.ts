// Check-then-use races, attacked for real: a separate process swaps a folder of the workspace
// with a symlink to a folder outside it (and a file with a symlink to an outside file) with
// renameat2(RENAME_EXCHANGE) in a loop while each file tool runs ATTEMPTS times. No call may
// read, list or change anything outside the workspace.
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { codeOutlineTool } from "./code-outline.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { type Flipper, startFlipper } from "./race-flipper.js";
import { readFileTool } from "./read-file.js";
import { makeTestContext, type TestContext } from "./test-context.js";
import type { ToolResult } from "./types.js";
import { writeFileTool } from "./write-file.js";

const ATTEMPTS = 1000;
/**
 * On a loaded machine the attacker may not run for a while; calls go on (up to this many)
 * until each test has seen what proves the race was real (e.g. both refusals and reads).
 */
const MAX_ATTEMPTS = 20 * ATTEMPTS;
/** Every file outside holds this word, so any leak of its content shows. */
const SECRET = "SECRET";

/** Names and contents of every file under `dir`. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    out[p.slice(dir.length + 1)] = e.isFile() ? readFileSync(p, "utf8") : "(folder)";
  }
  return out;
}

const refused = (rs: ToolResult[]) => rs.filter((r) => r.isError).length;
const served = (rs: ToolResult[]) => rs.filter((r) => !r.isError).length;

describe(`file tools under a symlink-swapping attacker (${ATTEMPTS} attempts each)`, () => {
  let t: TestContext;
  let outside: string;
  let outsideBefore: Record<string, string>;
  let flipper: Flipper | undefined;

  before(() => {
    outside = mkdtempSync(join(tmpdir(), "hands-race-outside-"));
    writeFileSync(join(outside, "f"), `${SECRET} outside f\n`);
    writeFileSync(join(outside, "x.py"), `def ${SECRET}_outside():\n    pass\n`);
    writeFileSync(join(outside, "e.txt"), `count=0\n${SECRET} outside e\n`);
    writeFileSync(join(outside, `only-${SECRET}.txt`), "x\n");
    outsideBefore = contents(outside);
    t = makeTestContext();
    const ws = t.workspace;
    mkdirSync(join(ws, "d"));
    writeFileSync(join(ws, "d", "f"), "inside f\n");
    writeFileSync(join(ws, "d", "x.py"), "def inside_fn():\n    pass\n");
    writeFileSync(join(ws, "d", "e.txt"), "count=0\ninside e\n");
    symlinkSync(outside, join(ws, "link"));
    writeFileSync(join(ws, "g"), "inside g\n");
    symlinkSync(join(outside, "f"), join(ws, "glink"));
  });
  after(async () => {
    await flipper?.stop();
    await t.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  /**
   * Runs `call` ATTEMPTS times (more, up to MAX_ATTEMPTS, until `enough` holds) while the
   * workspace flips, then checks that nothing leaked and nothing outside changed; returns the
   * results so each test can check the race was real.
   */
  async function underAttack(
    call: (i: number) => Promise<ToolResult>,
    enough: (rs: ToolResult[]) => boolean = (rs) => served(rs) > 0 && refused(rs) > 0,
  ): Promise<ToolResult[]> {
    const ws = t.workspace;
    flipper = await startFlipper([
      [join(ws, "d"), join(ws, "link")],
      [join(ws, "g"), join(ws, "glink")],
    ]);
    const results: ToolResult[] = [];
    try {
      for (let i = 0; i < MAX_ATTEMPTS && (i < ATTEMPTS || !enough(results)); i++)
        results.push(await call(i));
    } finally {
      const flips = await flipper.stop();
      flipper = undefined;
      assert.ok(flips > ATTEMPTS, `the attacker made only ${flips} exchanges`);
    }
    const leaks = results.filter(
      (r) => r.output.includes(SECRET) || JSON.stringify(r.data ?? {}).includes(SECRET),
    );
    assert.equal(leaks.length, 0, `outside content reached the model:\n${leaks[0]?.output}`);
    assert.deepEqual(contents(outside), outsideBefore, "a call changed a file outside the workspace");
    return results;
  }

  const sample = (rs: ToolResult[]) => rs.find((r) => r.isError)?.output ?? "(no error)";

  it("read_file never returns the outside file (a flipped folder or a flipped file)", async () => {
    const rs = await underAttack((i) => readFileTool.execute({ path: i % 2 ? "d/f" : "g" }, t));
    assert.ok(
      served(rs) > 0 && refused(rs) > 0,
      `served ${served(rs)}, refused ${refused(rs)}: ${sample(rs)}`,
    );
    for (const r of rs) if (!r.isError) assert.match(r.output, /inside [fg]/);
  });

  it("write_file never writes outside (also when it creates the parent folders)", async () => {
    const rs = await underAttack((i) =>
      writeFileTool.execute({ path: i % 2 ? "d/w.txt" : `d/new${i}/w.txt`, content: `w${i}\n` }, t),
    );
    assert.ok(served(rs) > 0, `no write went through: ${sample(rs)}`);
    // The folders it made would only slow the tests that list the workspace.
    for (const n of readdirSync(join(t.workspace, "d")))
      if (n.startsWith("new")) rmSync(join(t.workspace, "d", n), { recursive: true });
  });

  it("edit_file never reads or writes the outside file", async () => {
    let n = 0;
    const rs = await underAttack(async () => {
      const r = await editFileTool.execute(
        { path: "d/e.txt", old_string: `count=${n}`, new_string: `count=${n + 1}` },
        t,
      );
      if (!r.isError) n++;
      return r;
    });
    assert.ok(served(rs) > 0, `no edit went through: ${sample(rs)}`);
  });

  it("list_dir never lists the outside folder", async () => {
    const rs = await underAttack((i) => listDirTool.execute({ path: i % 2 ? "d" : "." }, t));
    assert.ok(served(rs) > 0, `no listing went through: ${sample(rs)}`);
  });

  it("glob never finds files outside", async () => {
    const rs = await underAttack((i) => globTool.execute({ pattern: "**/*", path: i % 2 ? "d" : "." }, t));
    assert.ok(served(rs) > 0, `no glob went through: ${sample(rs)}`);
  });

  it("grep never searches files outside", async () => {
    const paths = ["d", ".", "g", "d/f"];
    const found = (rs: ToolResult[]) => rs.some((r) => /inside/.test(r.output));
    const rs = await underAttack(
      (i) => grepTool.execute({ pattern: "outside|inside", path: paths[i % paths.length] }, t),
      found,
    );
    assert.ok(
      rs.some((r) => /inside/.test(r.output)),
      "grep found nothing at all",
    );
  });

  it("code_outline never outlines the outside file", async () => {
    const rs = await underAttack(() => codeOutlineTool.execute({ path: "d/x.py" }, t));
    assert.ok(
      served(rs) > 0 && refused(rs) > 0,
      `served ${served(rs)}, refused ${refused(rs)}: ${sample(rs)}`,
    );
  });
});

describe("the descriptor-based file tools with a workspace given through a symlink", () => {
  it("read, write, edit, list, glob and grep still work", async () => {
    const real = makeTestContext();
    const alias = join(mkdtempSync(join(tmpdir(), "hands-alias-")), "ws");
    symlinkSync(real.workspace, alias);
    const ctx = { ...real, workspace: alias };
    try {
      assert.equal(
        (await writeFileTool.execute({ path: "a/b.txt", content: "hello\n" }, ctx)).isError,
        undefined,
      );
      assert.equal(readFileSync(join(real.workspace, "a", "b.txt"), "utf8"), "hello\n");
      const edited = await editFileTool.execute(
        { path: "a/b.txt", old_string: "hello", new_string: "bye" },
        ctx,
      );
      assert.equal(edited.isError, undefined, edited.output);
      assert.match((await readFileTool.execute({ path: "a/b.txt" }, ctx)).output, /bye/);
      assert.match((await listDirTool.execute({}, ctx)).output, /b\.txt/);
      assert.match((await globTool.execute({ pattern: "**/*.txt" }, ctx)).output, /a\/b\.txt/);
      assert.match((await grepTool.execute({ pattern: "bye" }, ctx)).output, /a\/b\.txt:1:bye/);
    } finally {
      rmSync(join(alias, ".."), { recursive: true, force: true });
      await real.cleanup();
    }
  });
});
