// The packages as people get them: `npm pack` of every workspace package, checked for what it
// ships, installed from the tarballs into a fresh folder with `npm install`, type-checked by a
// strict TypeScript consumer (declaration files included: skipLibCheck off), and run there —
// `hands --version` from the installed bin, examples/one-task.mjs from the installed @hands/sdk,
// and a small library example against a scripted model. New workspace packages are picked up
// from the root package.json.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startScriptedServer } from "@hands/llm";
import { scriptedRunArgs } from "./testing/cli-process.js";

const run = promisify(execFile);
const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));
const npm = (args: string[], cwd: string) =>
  run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, maxBuffer: 64 << 20 });

interface Workspace {
  dir: string;
  pkg: Record<string, any>;
}

function publicWorkspaces(): Workspace[] {
  return (readJson(join(ROOT, "package.json")).workspaces as string[])
    .map((w) => ({ dir: join(ROOT, w), pkg: readJson(join(ROOT, w, "package.json")) }))
    .filter((w) => !w.pkg.private);
}

/** Every string in an `exports` / `bin` value: the package's entry points. */
function entryPoints(pkg: Record<string, any>): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(pkg.exports);
  walk(pkg.main);
  walk(pkg.types);
  walk(typeof pkg.bin === "string" ? { [pkg.name]: pkg.bin } : pkg.bin);
  return out.map((p) => posix.normalize(p));
}

// Relative module specifiers a file loads: static and dynamic imports, re-exports, and
// `new URL("./x.js", import.meta.url)` (a worker or child process started from a file; in the
// bundle a workspace file's URL is `__handsFileUrl(…)`, its installed package's, not the bundle's).
// In an HTML page (a web front end's), the scripts and styles it loads: src= and href=.
const SPECIFIER =
  /(?:\bfrom\s*|\b(?:import|require|__handsImport)\s*\(\s*|\bimport\s+|new URL\(\s*(?=["'][^"']+["']\s*,\s*import\.meta\.url)|\b(?:src|href)=|\bENTRY = )["'](\.{1,2}\/[^"']+)["']/g;

/** What is wrong with one package's file list (empty when it ships only what runs). */
function packProblems(ws: Workspace, files: string[]): string[] {
  const problems: string[] = [];
  const shipped = new Set(files);
  for (const f of files) {
    if (/\.test\.|(^|\/)__tests__\//.test(f)) problems.push(`${f}: a test`);
    if (f.endsWith(".tsbuildinfo")) problems.push(`${f}: build state`);
    if (/(^|\/)test-?data\//.test(f)) problems.push(`${f}: test data`);
    if (f.endsWith(".map")) {
      const map = readJson(join(ws.dir, f)) as { sources: string[] };
      for (const s of map.sources) {
        const target = posix.normalize(posix.join(posix.dirname(f), s));
        if (!shipped.has(target)) problems.push(`${f}: points at ${target}, which is not shipped`);
      }
    }
  }
  // Every module reachable from an entry point is shipped, and every shipped module is
  // reachable (or an empty type-only stub): nothing missing, nothing along for the ride.
  const reached = new Set<string>();
  const todo = entryPoints(ws.pkg);
  for (const e of todo) if (!shipped.has(e)) problems.push(`entry point ${e} is not shipped`);
  while (todo.length) {
    const f = todo.pop()!;
    if (reached.has(f) || !shipped.has(f)) continue;
    reached.add(f);
    if (!/\.(m?js|d\.ts|html)$/.test(f)) continue;
    const text = readFileSync(join(ws.dir, f), "utf8");
    for (const m of text.matchAll(SPECIFIER)) {
      let target = posix.normalize(posix.join(posix.dirname(f), m[1]!));
      if (f.endsWith(".d.ts")) target = target.replace(/\.js$/, ".d.ts");
      if (!shipped.has(target)) problems.push(`${f} loads ${target}, which is not shipped`);
      else todo.push(target);
    }
  }
  const mapped = new Set<string>();
  for (const f of files)
    if (f.endsWith(".map"))
      for (const src of (readJson(join(ws.dir, f)) as { sources: string[] }).sources)
        mapped.add(posix.normalize(posix.join(posix.dirname(f), src)));
  for (const f of files) {
    // Sources ship for the maps that point at them, nothing else.
    if (f.startsWith("src/") && !f.endsWith(".d.ts") && !mapped.has(f))
      problems.push(`${f}: a source no shipped map points at`);
    // Declarations come with their module; a module must be loaded by something.
    if (!/\.m?js$/.test(f) || reached.has(f)) continue;
    const code = readFileSync(join(ws.dir, f), "utf8")
      .replace(/\/\/.*$/gm, "")
      .trim();
    if (code !== "export {};" && code !== "")
      problems.push(`${f}: shipped but never loaded (a test helper?)`);
  }
  if (!shipped.has("LICENSE")) problems.push("no LICENSE file");
  for (const field of ["license", "description", "engines"] as const)
    if (!ws.pkg[field]) problems.push(`package.json has no "${field}"`);
  for (const bin of Object.values<string>(
    typeof ws.pkg.bin === "string" ? { x: ws.pkg.bin } : (ws.pkg.bin ?? {}),
  )) {
    const first = readFileSync(join(ws.dir, bin), "utf8").split("\n")[0]!;
    if (/env\s+-S/.test(first)) problems.push(`${bin}: its #! line needs "env -S" (${first})`);
  }
  return problems.map((p) => `${ws.pkg.name}: ${p}`);
}

/** A strict consumer: every package's public API, and an example that runs. */
function consumerSource(workspaces: Workspace[]): string {
  const libraries = workspaces.filter((w) => w.pkg.exports?.["."]);
  const imports = libraries.map((w, i) => `import * as api${i} from "${w.pkg.name}";`).join("\n");
  return `${imports}
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, builtinTools, type AgentEvent } from "@hands/agent";
import { createProvider, startScriptedServer } from "@hands/llm";
import { Memory } from "@hands/memory";
import { createSandbox } from "@hands/sandbox";

export const apis: readonly object[] = [${libraries.map((_, i) => `api${i}`).join(", ")}];

const workspace = mkdtempSync(join(tmpdir(), "hands-consumer-"));
const model = await startScriptedServer([
  { toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hi from a tarball" } }] },
  { content: "wrote hello.txt" },
]);
const agent = new Agent({
  provider: createProvider({ provider: "openai", model: "scripted-model", baseURL: model.url, apiKey: "none" }),
  workspace,
  tools: builtinTools(),
  createSandbox: () => createSandbox({ kind: "local", workspace }),
});
const seen: AgentEvent["type"][] = [];
const result = await agent.run("write hello.txt", { onEvent: (e) => seen.push(e.type) });
await model.close();

const memory = new Memory({ path: join(workspace, "memory.db") });
await memory.add({ type: "tool_result", content: "the test command is make check" });
const found = await memory.retrieve("which test command", { budget: 500 });
memory.close();

console.log(JSON.stringify({
  status: result.status,
  answer: result.answer,
  file: readFileSync(join(workspace, "hello.txt"), "utf8"),
  toolEnds: seen.filter((t) => t === "tool_end").length,
  memory: found.items.map((i) => i.text),
  apis: apis.length,
}));
`;
}

test("npm pack ships only what runs; the tarballs install, type-check strictly and run", {
  timeout: 300_000,
}, async () => {
  const workspaces = publicWorkspaces();
  const tmp = mkdtempSync(join(tmpdir(), "hands-pack-"));
  try {
    const packs = join(tmp, "packs");
    mkdirSync(packs);
    const { stdout } = await npm(
      ["pack", "--json", "--pack-destination", packs, ...workspaces.flatMap((w) => ["-w", w.dir])],
      ROOT,
    );
    const packed = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
    assert.deepEqual(packed.map((p) => p.name).sort(), workspaces.map((w) => w.pkg.name).sort());
    const problems = packed.flatMap((p) =>
      packProblems(
        workspaces.find((w) => w.pkg.name === p.name)!,
        p.files.map((f) => f.path),
      ),
    );
    assert.deepEqual(problems, []);

    // A fresh project that installs the tarballs (their dependencies from the npm cache, else
    // the registry). Install scripts are skipped: better-sqlite3's would compile SQLite for a
    // minute; the repo's build of the same version is used instead.
    const app = join(tmp, "app");
    mkdirSync(app);
    const rootPkg = readJson(join(ROOT, "package.json"));
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({
        name: "hands-consumer",
        private: true,
        type: "module",
        dependencies: {
          ...Object.fromEntries(packed.map((p) => [p.name, `file:../packs/${p.filename}`])),
          "@types/node": rootPkg.devDependencies["@types/node"],
        },
      }),
    );
    await npm(["install", "--prefer-offline", "--ignore-scripts"], app);
    const sqlite = "node_modules/better-sqlite3";
    assert.equal(
      readJson(join(app, sqlite, "package.json")).version,
      readJson(join(ROOT, sqlite, "package.json")).version,
    );
    mkdirSync(join(app, sqlite, "build/Release"), { recursive: true });
    copyFileSync(
      join(ROOT, sqlite, "build/Release/better_sqlite3.node"),
      join(app, sqlite, "build/Release/better_sqlite3.node"),
    );

    // Strict, with the installed declaration files checked too (TS7016 lives there).
    writeFileSync(join(app, "consumer.ts"), consumerSource(workspaces));
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          // No "types" list: @types packages are found as in most projects. (web-tree-sitter's
          // declarations use the global EmscriptenModule of @types/emscripten, a dependency
          // of @hands/agent; a project with its own "types" list adds "emscripten" to it.)
          skipLibCheck: false,
          outDir: "out",
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", app]).catch((e) => e as { stdout: string });
    assert.equal(checked.stdout.trim(), "", "the consumer type-checks");

    const cli = packed.find((p) => p.name === "@hands/cli")!;
    const version = await run(join(app, "node_modules/.bin/hands"), ["--version"], { cwd: app });
    assert.equal(version.stdout.trim(), readJson(join(ROOT, "packages/cli/package.json")).version);
    assert.ok(cli.files.some((f) => f.path === "bin/hands.js"));

    // An SDK example as README shows it, from the installed @hands/sdk, against a scripted model.
    copyFileSync(join(ROOT, "examples/one-task.mjs"), join(app, "one-task.mjs"));
    const model = await startScriptedServer([
      {
        toolCalls: [{ name: "run_command", arguments: { command: "printf 'hello from Hands' > hello.txt" } }],
      },
      { content: "created hello.txt" },
    ]);
    const exampleWorkspace = join(tmp, "example-ws");
    mkdirSync(exampleWorkspace);
    try {
      const sdk = await run(process.execPath, [join(app, "one-task.mjs"), exampleWorkspace], {
        cwd: app,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: tmp,
          HANDS_DATA_DIR: join(tmp, "data"),
          XDG_CONFIG_HOME: join(tmp, "config"),
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: "sk-test",
          HANDS_MODEL: "scripted-model",
        },
      });
      assert.match(sdk.stdout, /^status: done$/m);
      assert.match(sdk.stdout, /^sandbox: bwrap \(isolated: true\)$/m);
      assert.equal(readFileSync(join(exampleWorkspace, "hello.txt"), "utf8"), "hello from Hands");
    } finally {
      await model.close();
    }
    // It ran the installed package, not the checkout's.
    assert.ok(existsSync(join(app, "node_modules/@hands/sdk/dist/index.js")));
    // The installed bin (the bundle) runs a task end to end: a command judged by the policy's
    // shell parser (tree-sitter .wasm files found in their packages), a file written, memory on
    // (better-sqlite3 and sqlite-vec, native, loaded from theirs).
    const work = join(tmp, "work");
    mkdirSync(work);
    const taskModel = await startScriptedServer([
      { toolCalls: [{ name: "run_command", arguments: { command: "echo from-the-bundle > said.txt" } }] },
      { content: "said it" },
    ]);
    try {
      const task = await run(
        join(app, "node_modules/.bin/hands"),
        [...scriptedRunArgs(taskModel.url, work), "--sandbox", "local", "say it"],
        { cwd: app, env: { ...process.env, HANDS_DATA_DIR: join(tmp, "data") } },
      );
      const last = JSON.parse(task.stdout.trim().split("\n").at(-1)!);
      assert.equal(last.status, "done", task.stderr);
      assert.equal(last.answer, "said it");
      assert.equal(readFileSync(join(work, "said.txt"), "utf8"), "from-the-bundle\n");
      assert.ok(existsSync(join(tmp, "data", "memory.db")), "memory was on");
    } finally {
      await taskModel.close();
    }

    const example = await run(process.execPath, [join(app, "out/consumer.js")], { cwd: app });
    const out = JSON.parse(example.stdout);
    assert.deepEqual(out, {
      status: "done",
      answer: "wrote hello.txt",
      file: "hi from a tarball",
      toolEnds: 1,
      memory: ["the test command is make check"],
      apis: workspaces.filter((w) => w.pkg.exports?.["."]).length,
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("README's way to put hands on the PATH: npm install -g ./packages/cli", {
  timeout: 60_000,
}, async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  assert.match(readme, /npm install -g \.\/packages\/cli/);
  const prefix = mkdtempSync(join(tmpdir(), "hands-global-"));
  try {
    // --prefix: npm's global layout, in a temp folder instead of the machine's.
    await npm(["install", "-g", "--prefix", prefix, "--offline", "./packages/cli"], ROOT);
    const elsewhere = mkdtempSync(join(prefix, "project-"));
    const bin = join(prefix, "bin");
    assert.ok(existsSync(join(bin, "hands")));
    const { stdout } = await run("hands", ["--version"], {
      cwd: elsewhere,
      env: { ...process.env, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin` },
    });
    assert.equal(stdout.trim(), readJson(join(ROOT, "packages/cli/package.json")).version);
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
});
