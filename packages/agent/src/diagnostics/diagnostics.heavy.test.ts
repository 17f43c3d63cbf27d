// Diagnostics after edits against the real language servers (typescript-language-server and
// pyright from npm), each started cold in a real sandbox (bubblewrap, docker), through the real
// write_file and edit_file tools; and the workspace's own configuration acting on them: its
// node_modules/typescript, pyright's pyrightconfig.json / pyproject.toml pointing outside. Every
// case here starts servers from cold (tens of seconds each on a loaded 2-core machine): the heavy
// suite (npm run test:heavy). The default suite keeps one warm pyright (diagnostics.test.ts).
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BwrapSandbox, DockerSandbox, type Sandbox } from "@hands/sandbox";
import { editFileTool } from "../tools/edit-file.js";
import type { ToolContext } from "../tools/types.js";
import { writeFileTool } from "../tools/write-file.js";
import { Diagnostics } from "./service.js";
import { bwrapOrSkip, context, dockerOrSkip, write } from "./testing.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-diag-heavy-")));
// Passable (not listable) by the sandbox's user: @hands/sandbox grants it `x` on a workspace's
// closed ancestors per workspace and takes that back when the workspace's last sandbox is gone,
// also when a later workspace under the same folder still needs it (bwrap: "Can't find source
// path …: Permission denied" for every bwrap case after the first describe; reported, not fixed here).
chmodSync(scratch, 0o711);
after(() => rmSync(scratch, { recursive: true, force: true }));
const dockerSkip = await dockerOrSkip();

describe("real language servers in a bwrap sandbox", { skip: bwrapOrSkip() }, () => {
  const ws = join(scratch, "project");
  let sandbox: Sandbox;
  let diagnostics: Diagnostics;
  let ctx: ToolContext;
  before(async () => {
    write(ws, {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { strict: true, target: "es2022", module: "nodenext" },
      }),
      "src/lib.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/main.ts":
        'import { add } from "./lib.js";\n\nexport const total: number = add(1, 2);\nconsole.log(total);\n',
      "py/calc.py": "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n",
    });
    sandbox = await BwrapSandbox.create({ workspace: ws });
    diagnostics = new Diagnostics({ sandbox: async () => sandbox, startWaitMs: 180_000, waitMs: 60_000 });
    ctx = context(realpathSync(ws), diagnostics, sandbox);
  });
  after(async () => {
    await diagnostics.close();
    await sandbox.destroy();
  });

  test("a type error made by edit_file comes back in its result: file:line:column, code, message", async () => {
    const r = await editFileTool.execute(
      { path: "src/main.ts", old_string: "add(1, 2)", new_string: 'add(1, "2")' },
      ctx,
    );
    assert.equal(r.isError, undefined, r.output);
    assert.match(r.output, /1 new error from typescript-language-server after this edit:/);
    assert.match(
      r.output,
      /src\/main\.ts:3:37: TS2345 Argument of type 'string' is not assignable to parameter of type 'number'\./,
    );
    const d = r.data?.["diagnostics"] as { status: string; total: number };
    assert.deepEqual([d.status, d.total], ["ok", 1]);
  });

  test("a clean edit adds nothing; an error already there is not reported again, even moved down", async () => {
    const clean = await editFileTool.execute(
      {
        path: "src/main.ts",
        old_string: 'import { add } from "./lib.js";\n',
        new_string: 'import { add } from "./lib.js";\n// totals\n\n',
      },
      ctx,
    );
    assert.doesNotMatch(clean.output, /error|Diagnostics/, clean.output);
    const cleanReport = clean.data?.["diagnostics"] as { total: number } | undefined;
    assert.equal(cleanReport?.total, 0);
    // The TS2345 of the first test is still there (two lines lower): only the new one is listed.
    const r = await editFileTool.execute(
      { path: "src/main.ts", old_string: "console.log(total);", new_string: "console.log(totl);" },
      ctx,
    );
    assert.match(r.output, /1 new error/);
    assert.match(r.output, /src\/main\.ts:6:13: TS2552 Cannot find name 'totl'\. Did you mean 'total'\?/);
    assert.doesNotMatch(r.output, /TS2345/);
  });

  test("a change in one file that breaks its own calls is reported (arity)", async () => {
    const r = await writeFileTool.execute(
      {
        path: "src/lib.ts",
        content:
          "export function add(a: number, b: number): number {\n  return a + b;\n}\nexport const three = add(1);\n",
      },
      ctx,
    );
    assert.match(r.output, /src\/lib\.ts:4:22: TS2554 Expected 2 arguments, but got 1\./);
  });

  test("python: an undefined name and a wrong arity from pyright, a clean rewrite gives nothing", async () => {
    const bad = await editFileTool.execute(
      {
        path: "py/calc.py",
        old_string: "print(area(2, 3))",
        new_string: "print(area(2))\nprint(volume(2, 3))",
      },
      ctx,
    );
    assert.match(bad.output, /2 new errors from pyright after this edit:/, bad.output);
    assert.match(bad.output, /py\/calc\.py:5:7: reportCallIssue Argument missing for parameter "h"/);
    assert.match(bad.output, /py\/calc\.py:6:7: reportUndefinedVariable "volume" is not defined/);
    const fixed = await writeFileTool.execute(
      { path: "py/calc.py", content: "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n" },
      ctx,
    );
    assert.doesNotMatch(fixed.output, /error|Diagnostics/, fixed.output);
  });

  test("a new file: all its errors are new; a file no server reads is not checked", async () => {
    const r = await writeFileTool.execute(
      { path: "src/new.ts", content: "const n: number = 'x';\nexport {};\n" },
      ctx,
    );
    assert.match(r.output, /src\/new\.ts:1:7: TS2322 Type 'string' is not assignable to type 'number'\./);
    const txt = await writeFileTool.execute({ path: "notes.txt", content: "const n: number = 'x';\n" }, ctx);
    assert.equal(txt.data?.["diagnostics"], undefined);
  });
});

const hostileBackends: Array<{
  kind: string;
  skip: string | undefined;
  make: (ws: string) => Promise<Sandbox>;
}> = [
  { kind: "bwrap", skip: bwrapOrSkip(), make: (ws) => BwrapSandbox.create({ workspace: ws }) },
  { kind: "docker", skip: dockerSkip, make: (ws) => DockerSandbox.create({ workspace: ws }) },
];

for (const backend of hostileBackends)
  describe(`the workspace's own typescript runs inside the ${backend.kind} sandbox, never on the host`, {
    skip: backend.skip,
  }, () => {
    test("a hostile node_modules/typescript/lib/tsserver.js writes only where the sandbox lets it", async () => {
      const ws = join(scratch, `hostile-${backend.kind}`);
      const hostMarker = join(scratch, `host-marker-${backend.kind}`);
      // What tsserver.js does when typescript-language-server starts it: write two markers.
      write(ws, {
        "tsconfig.json": "{}",
        "a.ts": "export const a = 1;\n",
        "node_modules/typescript/package.json": JSON.stringify({ name: "typescript", version: "5.9.3" }),
        "node_modules/typescript/lib/tsserver.js": `const fs = require("fs");
fs.writeFileSync("/workspace/ran-inside", String(process.getuid()));
try { fs.writeFileSync(${JSON.stringify(hostMarker)}, "escaped"); } catch {}
try { fs.writeFileSync("/run/hands/lsp/typescript/lib/tsserver.js", "tampered"); } catch {}
setInterval(() => {}, 1000);
`,
      });
      const sandbox = await backend.make(realpathSync(ws));
      const diagnostics = new Diagnostics({
        sandbox: async () => sandbox,
        startWaitMs: 60_000,
        waitMs: 5_000,
      });
      try {
        const started = Date.now();
        const r = await diagnostics.check({
          path: "a.ts",
          before: "export const a = 1;\n",
          after: "export const a = 2;\n",
        });
        assert.ok(r && r.status !== "ok", JSON.stringify(r));
        assert.ok(Date.now() - started < 70_000, "bounded");
        assert.ok(existsSync(join(ws, "ran-inside")), "the workspace's tsserver.js was the one started");
        assert.notEqual(readFileSync(join(ws, "ran-inside"), "utf8"), "0", "not as root");
        assert.equal(existsSync(hostMarker), false, "it could not write outside the workspace");
        // Nor change the server Hands gave the sandbox (read-only there).
        const shipped = await sandbox.exec("head -c 8 /run/hands/lsp/typescript/lib/tsserver.js || true");
        assert.doesNotMatch(shipped.stdout, /tampered/);
        const hostCopy = join(
          createRequire(import.meta.url).resolve("typescript/package.json"),
          "../lib/tsserver.js",
        );
        assert.doesNotMatch(readFileSync(hostCopy, "utf8").slice(0, 16), /tampered/);
      } finally {
        await diagnostics.close();
        await sandbox.destroy();
      }
    });
  });

describe("real language servers in a docker sandbox (node and the servers copied into the container)", {
  skip: dockerSkip,
}, () => {
  test("a TypeScript and a Python error after write_file, from servers in the container", async () => {
    const ws = realpathSync(mkdtempSync(join(scratch, "docker-")));
    write(ws, {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, module: "nodenext" } }),
      "a.ts": "export const a = 1;\n",
      "m.py": "def area(w, h):\n    return w * h\n",
    });
    const sandbox = await DockerSandbox.create({ workspace: ws });
    const diagnostics = new Diagnostics({
      sandbox: async () => sandbox,
      startWaitMs: 120_000,
      waitMs: 30_000,
    });
    const ctx = context(ws, diagnostics, sandbox);
    try {
      const ts = await writeFileTool.execute(
        { path: "a.ts", content: "export const a: number = 'x';\n" },
        ctx,
      );
      assert.match(
        ts.output,
        /a\.ts:1:14: TS2322 Type 'string' is not assignable to type 'number'\./,
        ts.output,
      );
      const py = await writeFileTool.execute(
        { path: "m.py", content: "def area(w, h):\n    return w * h\n\n\nprint(area(2))\n" },
        ctx,
      );
      assert.match(py.output, /m\.py:5:7: reportCallIssue Argument missing for parameter "h"/, py.output);
      // The servers are processes of the container (its user), not of this host's session.
      const ps = await sandbox.exec("ps -eo user:20,args | grep -c '[l]angserver.index.js'");
      assert.equal(ps.stdout.trim(), "1", ps.stdout + ps.stderr);
      const mine = await sandbox.exec("touch /run/hands/lsp/x 2>&1; ls -ld /run/hands/lsp");
      assert.match(mine.stdout, /Permission denied/);
      assert.match(mine.stdout, /^dr[-w]xr-xr-x \d+ root root/m);
    } finally {
      await diagnostics.close();
      await sandbox.destroy();
    }
  });
});

/** Pyright's answer for one edit of m.py (a fresh file), as the lines the model would read. */
async function pyrightSays(diagnostics: Diagnostics, after: string): Promise<string> {
  const r = await diagnostics.check({ path: "m.py", before: "x = 1\n", after });
  assert.ok(r, "pyright reads m.py");
  return JSON.stringify(r);
}

for (const backend of hostileBackends)
  describe(`pyright's configuration from the workspace reaches nothing outside the ${backend.kind} sandbox`, {
    skip: backend.skip,
  }, () => {
    // On the host, outside the workspace: modules the hostile configurations point at.
    const outside = join(scratch, `outside-py-${backend.kind}`);
    before(() =>
      write(outside, {
        "hostsecret.py": "def host_secret(a: int) -> int:\n    return a\n",
        "venvs/evil/lib/python3.11/site-packages/venvsecret.py":
          "def venv_secret(a: int) -> int:\n    return a\n",
        "venvs/evil/pyvenv.cfg": "home = /usr/bin\n",
        // A configuration a workspace links to (below): it would add the host folder.
        "linked-config.json": JSON.stringify({ extraPaths: [join(scratch, `outside-py-${backend.kind}`)] }),
      }),
    );
    // Importing the outside modules and calling them wrongly: resolved, pyright would say
    // "Argument missing"; unresolved, it says the import could not be resolved. `inside_fn`
    // lives in the workspace under the same configuration: the control that it is applied.
    const edit =
      "from insidemod import inside_fn\nfrom hostsecret import host_secret\nfrom venvsecret import venv_secret\n" +
      "inside_fn()\nhost_secret()\nvenv_secret()\n";
    const hostile = {
      extraPaths: ["libs", outside, "/"],
      venvPath: join(outside, "venvs"),
      venv: "evil",
      // The whole disk as the project: pyright enumerates what the sandbox shows, bounded.
      include: ["/", "**/*"],
      exclude: [],
      stubPath: outside,
    };
    const cases: Array<{ name: string; files: Record<string, string>; link?: string }> = [
      { name: "pyrightconfig.json", files: { "pyrightconfig.json": JSON.stringify(hostile) } },
      {
        name: "pyproject.toml [tool.pyright]",
        files: {
          "pyproject.toml": `[tool.pyright]\nextraPaths = ${JSON.stringify(hostile.extraPaths)}\nvenvPath = ${JSON.stringify(hostile.venvPath)}\nvenv = "evil"\ninclude = ["/", "**/*"]\nexclude = []\n`,
        },
      },
      // Its own lists "libs" too; the link is to a host file the sandbox does not show.
      { name: "a symlinked pyrightconfig.json", files: {}, link: join(outside, "linked-config.json") },
    ];
    for (const c of cases)
      test(`${c.name}: extraPaths, venvPath, stubPath and include outside the workspace find nothing there`, async () => {
        const ws = realpathSync(mkdtempSync(join(scratch, `pyconf-${backend.kind}-`)));
        write(ws, {
          "m.py": "x = 1\n",
          "libs/insidemod.py": "def inside_fn(a: int) -> int:\n    return a\n",
          ...c.files,
        });
        if (c.link) symlinkSync(c.link, join(ws, "pyrightconfig.json"));
        const sandbox = await backend.make(ws);
        const diagnostics = new Diagnostics({
          sandbox: async () => sandbox,
          startWaitMs: 120_000,
          waitMs: 60_000,
        });
        try {
          const started = Date.now();
          const said = await pyrightSays(diagnostics, edit);
          assert.ok(Date.now() - started < 125_000, "bounded");
          assert.match(said, /"status":"ok"/, said);
          assert.match(said, /Import \\"hostsecret\\" could not be resolved/, said);
          assert.match(said, /Import \\"venvsecret\\" could not be resolved/, said);
          assert.doesNotMatch(said, /"line":5,[^}]*Argument missing/, said);
          assert.doesNotMatch(said, /"line":6,[^}]*Argument missing/, said);
          if (!c.link) {
            // The control: the workspace's own extraPaths entry was applied.
            assert.match(said, /"line":4,[^}]*Argument missing for parameter \\"a\\"/, said);
          }
        } finally {
          await diagnostics.close();
          await sandbox.destroy();
        }
      });
  });
