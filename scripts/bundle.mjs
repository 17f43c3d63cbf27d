#!/usr/bin/env node
// Bundles the `hands` command (packages/cli/dist/main.js, tsc's output) into a few files in
// packages/cli/bundle/, which is what the bin runs. Node then reads and compiles a handful of
// files at start-up instead of ~400 modules (the openai SDK alone is 154); every part loaded
// with `import()` (interactive UI, MCP, memory, the SDKs, docker, subcommands) becomes a chunk of
// its own, loaded only when used. Driven by the entry file: whatever main.js reaches is bundled.
//
// esbuild splits the code into ES module chunks; each is then turned into a CommonJS function
// body, which the bin (packages/cli/bin/hands.js) compiles with node:vm and a V8 code cache:
// Node 20 has no compile cache for ES modules, and compiling the start-up chunks from source
// was a third of the time to the first request. The chunks' `import()` calls are renamed
// `__handsImport(`, which the bin gives them: a chunk by its path, anything else by node's own
// import() (code compiled by node:vm has no working `import()` once a code cache is used).
//
// What stays outside, loaded from its installed package: native addons and packages that find
// files next to themselves (sqlite-vec, web-tree-sitter and the grammars' .wasm
// files, dockerode/ssh2), the e2b SDK (loaded only by --sandbox e2b; bundled, its module
// namespace came out without `Sandbox`), `hands serve` (@hands/serve) and `hands dashboard` (@hands/dashboard, whose front end sits
// next to its server): servers, not on the start-up path. better-sqlite3's JavaScript is bundled;
// memory gives it its addon's path (packages/memory/src/sqlite-store.ts).
//
// `import.meta.url` in a workspace package's file would name the bundle instead of that file,
// so it is replaced by the file's own URL inside its installed package (resolved at run time
// from @hands/cli, which depends on every such package): `createRequire(import.meta.url)` then
// finds that package's dependencies, `new URL("../package.json", import.meta.url)` its files.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { init as initLexer, parse as parseImports } from "es-module-lexer";
import { build, transform } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(ROOT, "packages", "cli");
const OUT = join(CLI, "bundle");

/** Loaded from their packages at run time (see above). */
const EXTERNAL = ["sqlite-vec", "web-tree-sitter", "dockerode", "e2b", "@hands/serve", "@hands/dashboard"];

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const cliPkg = readJson(join(CLI, "package.json"));

/** The workspace package a file belongs to: its root folder and package.json, or undefined. */
function workspacePackage(file) {
  const rel = relative(join(ROOT, "packages"), file);
  if (rel.startsWith("..") || rel.split(sep).includes("node_modules")) return undefined;
  const dir = join(ROOT, "packages", rel.split(sep)[0]);
  return { dir, pkg: readJson(join(dir, "package.json")) };
}

/** The file its package's "." export resolves to, relative to the package root. */
function mainFile(pkg) {
  const dot = pkg.exports?.["."] ?? pkg.main;
  const target = typeof dot === "string" ? dot : (dot?.default ?? dot?.import);
  if (typeof target !== "string") throw new Error(`${pkg.name}: no "." export to locate its files by`);
  return target.replace(/^\.\//, "");
}

const problems = [];
const uses = new Set();

/** Rewrites `import.meta.url` in workspace files to the file's URL inside its package. */
const ownUrls = {
  name: "own-urls",
  setup(b) {
    b.onLoad({ filter: /[\\/]packages[\\/][^\\/]+[\\/]dist[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const ws = workspacePackage(args.path);
      if (!ws) return undefined;
      if (ws.pkg.name !== cliPkg.name && !cliPkg.dependencies?.[ws.pkg.name])
        problems.push(`${ws.pkg.name} uses import.meta.url but is not a dependency of ${cliPkg.name}`);
      uses.add(ws.pkg.name);
      const fileRel = relative(ws.dir, args.path).split(sep).join("/");
      const call = `__handsFileUrl(${JSON.stringify(ws.pkg.name)}, ${JSON.stringify(mainFile(ws.pkg))}, ${JSON.stringify(fileRel)})`;
      return { contents: text.replaceAll("import.meta.url", call), loader: "js" };
    });
  },
};

/**
 * The SDKs build every request's headers with the global `Headers`, whose first use makes node
 * load its bundled undici (~11 ms; this project sends model requests through node:http). In the
 * bundle, their header builder gets the Headers class of fetch-headers (spec-tested, no
 * dependencies, never touches the global), and their request logger, which only asks whether
 * it holds a Headers object, gets a check that accepts either kind. packages/llm's fetch reads
 * any Headers-like object.
 */
const SDK_FILE =
  /[\\/]node_modules[\\/](openai|@anthropic-ai[\\/]sdk)[\\/]internal[\\/](headers|utils[\\/]log)\.mjs$/;
const HEADERS_PRELUDE = {
  headers: `import { Headers } from "fetch-headers";`,
  log: `const Headers = { [Symbol.hasInstance]: (h) => typeof h?.get === "function" && typeof h?.entries === "function" };`,
};
const patchedSdkFiles = new Set();
const sdkHeaders = {
  name: "sdk-headers",
  setup(b) {
    b.onLoad({ filter: SDK_FILE }, (args) => {
      patchedSdkFiles.add(args.path);
      const prelude = HEADERS_PRELUDE[args.path.endsWith("log.mjs") ? "log" : "headers"];
      return {
        contents: `${prelude}\n${readFileSync(args.path, "utf8")}`,
        loader: "js",
        resolveDir: dirname(args.path),
      };
    });
  },
};

/**
 * pi-tui (the interactive view) makes a require from import.meta.url for one optional addon
 * (koffi, Windows only); in the bundle that is the require the bin gives every chunk.
 */
const PI_TUI_TERMINAL = /[\\/]node_modules[\\/]@mariozechner[\\/]pi-tui[\\/]dist[\\/]terminal\.js$/;
const piTuiRequire = {
  name: "pi-tui-require",
  setup(b) {
    b.onLoad({ filter: PI_TUI_TERMINAL }, (args) => {
      const text = readFileSync(args.path, "utf8");
      const from = "const cjsRequire = createRequire(import.meta.url);";
      if (!text.includes(from)) problems.push(`${args.path}: expected "${from}"`);
      return {
        contents: text.replace(from, "const cjsRequire = require;"),
        loader: "js",
        resolveDir: dirname(args.path),
      };
    });
  },
};

// Every chunk gets the URL helper (tiny; unused chunks do not pay for more than its definition).
// `require` is the one the bin hands every chunk (made for the bundle folder). Each package is
// found once per process, shared by all chunks: by node's node_modules walk from the bundle's
// folder, done by hand (a stat per folder; require.resolve's package.json and exports handling
// took ~1.5 ms a package), with require.resolve for anything else (NODE_PATH, a missing file).
const banner = `function __handsFileUrl(pkg, main, file) {
  const roots = (globalThis[Symbol.for("hands.packageRoots")] ??= new Map());
  let root = roots.get(pkg);
  if (root === undefined) {
    root = __handsPackageRoot(pkg, main);
    if (root === undefined) {
      const path = require.resolve(pkg);
      root = path.slice(0, path.length - main.length);
    }
    roots.set(pkg, root);
  }
  return require("node:url").pathToFileURL(root + file).href;
}
function __handsPackageRoot(pkg, main) {
  const fs = require("node:fs");
  const path = require("node:path");
  // The bundle's own package first, as node resolves a package's own name (its "self" step).
  const own = path.dirname(__dirname);
  const g = globalThis;
  if (g[Symbol.for("hands.ownPackage")] === undefined) {
    try {
      g[Symbol.for("hands.ownPackage")] = JSON.parse(fs.readFileSync(path.join(own, "package.json"), "utf8")).name;
    } catch {
      g[Symbol.for("hands.ownPackage")] = null;
    }
  }
  if (g[Symbol.for("hands.ownPackage")] === pkg)
    return fs.existsSync(path.join(own, main)) ? fs.realpathSync.native(own) + path.sep : undefined;
  for (let dir = __dirname; ; ) {
    if (path.basename(dir) !== "node_modules") {
      const at = path.join(dir, "node_modules", pkg);
      if (fs.existsSync(path.join(at, main))) return fs.realpathSync.native(at) + path.sep;
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}`;

rmSync(OUT, { recursive: true, force: true });
const result = await build({
  entryPoints: { hands: join(CLI, "dist", "main.js") },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Less text for node to read and compile at every start; names are kept short, not mangled
  // across chunks' exports.
  minifyWhitespace: true,
  minifySyntax: true,
  chunkNames: "[name]-[hash]",
  external: EXTERNAL,
  banner: { js: banner },
  plugins: [ownUrls, sdkHeaders, piTuiRequire],
  metafile: true,
  logLevel: "warning",
});

// An external package is imported from the bundle, so it must resolve from @hands/cli itself,
// at the version the package that uses it declares (not by luck of npm's hoisting).
for (const [, out] of Object.entries(result.metafile.outputs))
  for (const imp of out.imports)
    if (imp.external) {
      // Node's built-ins, and optional packages a dependency tries in a try/catch (kerberos).
      const name = imp.path.match(/^(@[^/]+\/)?[^/]+/)?.[0];
      if (EXTERNAL.includes(name) && !cliPkg.dependencies?.[name])
        problems.push(`${name} is imported from the bundle but is not a dependency of ${cliPkg.name}`);
    }
for (const file of Object.keys(result.metafile.inputs)) {
  const ws = workspacePackage(join(ROOT, file));
  if (!ws) continue;
  for (const dep of EXTERNAL) {
    const want = ws.pkg.dependencies?.[dep];
    const have = cliPkg.dependencies?.[dep];
    if (want && have && want !== have)
      problems.push(`${dep}: ${ws.pkg.name} wants ${want}, ${cliPkg.name} has ${have}`);
  }
}
// better-sqlite3's JavaScript is bundled from here, its addon loaded from @hands/memory's
// install: the two must be one version, so memory's dependency is pinned to the one bundled.
{
  const memoryPkg = readJson(join(ROOT, "packages", "memory", "package.json"));
  const bundled = readJson(
    createRequire(join(ROOT, "packages", "memory", "package.json")).resolve("better-sqlite3/package.json"),
  );
  const want = memoryPkg.dependencies?.["better-sqlite3"];
  if (want !== bundled.version)
    problems.push(
      `better-sqlite3: ${bundled.version} is bundled, but ${memoryPkg.name} installs ${want} (pin it to the bundled version)`,
    );
}
// Both SDKs are reachable (llm loads them on first use): a moved file would silently bring
// undici back onto the first request's path.
if (patchedSdkFiles.size !== 4)
  problems.push(
    `expected each SDK's internal/headers.mjs and internal/utils/log.mjs, patched ${[...patchedSdkFiles]}`,
  );
stopOnProblems();

// --metafile PATH: esbuild's account of what went where (for `npx esbuild --analyze`-style looks).
const metaAt = process.argv.indexOf("--metafile");
if (metaAt > 0) writeFileSync(process.argv[metaAt + 1], JSON.stringify(result.metafile));
await toFunctionBodies(Object.keys(result.metafile.outputs).map((f) => join(ROOT, f)));

/**
 * Turns each ES module chunk into CommonJS (esbuild's own conversion: imports become require()
 * calls whose bindings stay live), its `import()` calls renamed `__handsImport(` first (found by
 * es-module-lexer, so an "import(" inside a string is left alone). A chunk that still mentions
 * import.meta, or that esbuild warns about, fails the build.
 */
async function toFunctionBodies(files) {
  await initLexer;
  for (const file of files) {
    let text = readFileSync(file, "utf8");
    const [imports] = parseImports(text);
    for (const im of imports.filter((i) => i.type === "dynamic").reverse()) {
      if (text.slice(im.importStart, im.importStart + 6) !== "import") {
        problems.push(`${relative(ROOT, file)}: no import() at ${im.importStart}`);
        continue;
      }
      text = `${text.slice(0, im.importStart)}__handsImport${text.slice(im.importStart + 6)}`;
    }
    if (imports.some((i) => i.type === "import-meta"))
      problems.push(`${relative(ROOT, file)} uses import.meta`);
    const out = await transform(text, {
      format: "cjs",
      platform: "node",
      target: "node20",
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: "silent",
    });
    for (const w of out.warnings) problems.push(`${relative(ROOT, file)}: ${w.text}`);
    writeFileSync(file, out.code);
  }
  stopOnProblems();
}

function stopOnProblems() {
  if (problems.length === 0) return;
  for (const p of new Set(problems)) console.error(`bundle: ${p}`);
  process.exit(1);
}

const outputs = Object.entries(result.metafile.outputs).map(([f, o]) => [f, statSync(join(ROOT, f)).size, o]);
const bytes = outputs.reduce((n, [, size]) => n + size, 0);
if (process.argv.includes("--verbose"))
  for (const [f, size, o] of outputs) console.log(`${relative(ROOT, f)}  ${size}  ${o.entryPoint ?? ""}`);
console.log(`bundle: ${relative(ROOT, OUT)}/ — ${outputs.length} files, ${(bytes / 1024).toFixed(0)} KB`);
