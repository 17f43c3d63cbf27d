// Local templates: the base sandbox image plus a recipe (apt/pip/npm packages, commands, env),
// built on the host without a registry. The base image's filesystem is exported into a folder,
// the recipe runs there in a chroot (the host's network and apt mirror: containers here have
// none), and the folder is both bwrap's root filesystem and, through `docker import`, the image
// for docker and gVisor. Both are named by a hash of the recipe and the base, so a rebuild of
// an unchanged recipe is a cache hit. Recipes come from trusted config only: they run as root.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { imageExists, imageTag } from "./image.js";
import type { Sandbox } from "./types.js";

export const TEMPLATE_REPO = "hands-template";

export interface TemplateFile {
  /** A host file or folder (a recipe file's relative paths are resolved by the caller). */
  from: string;
  /** Where it goes in the template (absolute). A folder's contents go into this folder. */
  to: string;
  /** Octal mode, e.g. "0755". */
  mode?: string;
}

export interface TemplateRecipe {
  apt?: string[];
  pip?: string[];
  npm?: string[];
  /** Copied in after the packages, before the commands (which may use them). */
  files?: TemplateFile[];
  /** Shell lines run as root in the template's root filesystem, after the packages and files. */
  commands?: string[];
  env?: Record<string, string>;
  /** The folder commands start in (docker: the image's WORKDIR; the sandbox's workspace stays mounted at /workspace). */
  workdir?: string;
  /** Started in the background when a sandbox of the template starts (a server, a daemon). */
  start?: string;
}

const PKG = /^[A-Za-z0-9][A-Za-z0-9.+_@/=:-]{0,127}$/;

/** Checks a recipe read from config (names that cannot smuggle shell syntax). */
export function parseRecipe(raw: unknown): TemplateRecipe {
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new Error("a template recipe must be an object");
  const r = raw as Record<string, unknown>;
  const out: TemplateRecipe = {};
  for (const k of Object.keys(r))
    if (!["apt", "pip", "npm", "files", "commands", "env", "workdir", "start"].includes(k))
      throw new Error(`unknown template field: ${k}`);
  for (const k of ["apt", "pip", "npm"] as const) {
    const v = r[k];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((p) => typeof p === "string" && PKG.test(p)))
      throw new Error(`template ${k}: a list of package names`);
    out[k] = v as string[];
  }
  if (r["commands"] !== undefined) {
    if (!Array.isArray(r["commands"]) || !r["commands"].every((c) => typeof c === "string"))
      throw new Error("template commands: a list of shell lines");
    out.commands = r["commands"] as string[];
  }
  if (r["files"] !== undefined) {
    const f = r["files"];
    if (!Array.isArray(f)) throw new Error("template files: a list of {from, to[, mode]}");
    out.files = f.map((e: unknown) => {
      const x = e as Record<string, unknown>;
      if (!x || typeof x.from !== "string" || typeof x.to !== "string" || !x.to.startsWith("/"))
        throw new Error("template files: each is {from: host path, to: absolute path[, mode]}");
      if (x.to.split("/").includes("..")) throw new Error(`template files: no '..' in ${x.to}`);
      if (x.mode !== undefined && (typeof x.mode !== "string" || !/^[0-7]{3,4}$/.test(x.mode)))
        throw new Error(`template files: bad mode ${String(x.mode)}`);
      return { from: x.from, to: x.to, ...(x.mode ? { mode: x.mode as string } : {}) };
    });
  }
  for (const k of ["workdir", "start"] as const) {
    const v = r[k];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.includes("\n") || (k === "workdir" && !v.startsWith("/")))
      throw new Error(`template ${k}: ${k === "workdir" ? "an absolute path" : "one shell line"}`);
    out[k] = v;
  }
  if (r["env"] !== undefined) {
    const e = r["env"];
    if (!e || typeof e !== "object" || Array.isArray(e)) throw new Error("template env: an object");
    for (const [k, v] of Object.entries(e))
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof v !== "string")
        throw new Error(`template env: bad variable ${k}`);
    out.env = e as Record<string, string>;
  }
  return out;
}

export function checkTemplateName(name: string): void {
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(name)) throw new Error(`invalid template name: ${name}`);
}

/** The hash that names a recipe's build (the base image's tag is part of it). */
export function templateHash(recipe: TemplateRecipe, base = imageTag(), files = ""): string {
  // Files count by what they hold (`files`, their digest) and where they go, not where they came from.
  const r = recipe.files ? { ...recipe, files: recipe.files.map(({ from: _, ...f }) => f) } : recipe;
  return createHash("sha256")
    .update(JSON.stringify(files ? { v: 1, base, recipe: r, files } : { v: 1, base, recipe: r }))
    .digest("hex")
    .slice(0, 16);
}

export interface TemplateInfo {
  name: string;
  hash: string;
  image: string;
  rootfs: string;
  recipe: TemplateRecipe;
  builtAt: string;
}

function run(cmd: string, args: string[], log: (s: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let tail = "";
    const keep = (c: Buffer) => {
      tail = (tail + c.toString("utf8")).slice(-3000);
      log(c.toString("utf8"));
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (e) => reject(new Error(`${cmd} could not start: ${e.message}`)));
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} failed (exit ${code}): ${tail.trim().slice(-1200)}`)),
    );
  });
}

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const posixDir = (p: string) => p.replace(/\/[^/]*\/?$/, "") || "/";

/** The shell script the recipe becomes, run by chroot in the new root. */
export function recipeScript(r: TemplateRecipe): string {
  const lines = ["set -e", "export DEBIAN_FRONTEND=noninteractive HOME=/root"];
  if (r.apt?.length)
    lines.push(
      "apt-get update -qq",
      `apt-get install -y -qq --no-install-recommends ${r.apt.map(q).join(" ")}`,
      "apt-get clean",
      "rm -rf /var/lib/apt/lists/*",
    );
  if (r.pip?.length)
    lines.push(`pip3 install --break-system-packages --no-cache-dir ${r.pip.map(q).join(" ")}`);
  if (r.npm?.length) lines.push(`npm install -g ${r.npm.map(q).join(" ")}`);
  // Files were staged at /tmp/hands-files/N by the builder; copied here, inside the new root.
  (r.files ?? []).forEach((f, i) => {
    const src = `/tmp/hands-files/${i}`;
    lines.push(
      `if [ -d ${src} ]; then mkdir -p ${q(f.to)} && cp -a ${src}/. ${q(f.to)}; else mkdir -p ${q(posixDir(f.to))} && cp -a ${src} ${q(f.to)}; fi`,
    );
    if (f.mode) lines.push(`chmod ${f.mode} ${q(f.to)}`);
  });
  if (r.files?.length) lines.push("rm -rf /tmp/hands-files");
  if (r.workdir) lines.push(`mkdir -p ${q(r.workdir)}`);
  for (const c of r.commands ?? []) lines.push(c);
  return `${lines.join("\n")}\n`;
}

/** A digest of the recipe's files' contents (a changed file is a new build). */
function filesDigest(files: TemplateFile[] | undefined): string {
  if (!files?.length) return "";
  const h = createHash("sha256");
  const walk = (p: string, rel: string) => {
    const st = lstatSync(p);
    h.update(`${rel}\0${st.mode}\0`);
    if (st.isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n), `${rel}/${n}`);
    else if (st.isSymbolicLink()) h.update(readlinkSync(p));
    else if (st.isFile()) h.update(readFileSync(p));
  };
  for (const [i, f] of files.entries()) walk(f.from, String(i));
  return h.digest("hex").slice(0, 16);
}

/**
 * What can be found wrong before the 1.5 GB export: the files exist, the commands parse
 * (bash -n), and apt knows every package (the host's apt lists, when the host is Debian like
 * the image: a package the mirror does not have fails here in a second, not after a minute).
 */
export async function preflightRecipe(recipe: TemplateRecipe): Promise<void> {
  for (const f of recipe.files ?? [])
    if (!existsSync(f.from)) throw new Error(`template files: ${f.from} does not exist`);
  const script = recipeScript(recipe);
  await run("bash", ["-n", "-c", script], () => {}).catch((e: Error) => {
    throw new Error(`the recipe's commands do not parse: ${e.message}`);
  });
  if (!recipe.apt?.length || !existsSync("/usr/bin/apt-cache") || !existsSync("/var/lib/apt/lists")) return;
  if (!readdirSync("/var/lib/apt/lists").some((f) => f.endsWith("_Packages") || f.includes("_Packages.")))
    return;
  // One `apt-cache policy` for all: a package apt can install has a candidate version.
  const names = recipe.apt.map((p) => p.split("=")[0] as string);
  let text = "";
  await run("apt-cache", ["policy", ...names], (c) => {
    text += c;
  }).catch(() => {});
  const candidates = new Set<string>();
  let current = "";
  for (const line of text.split("\n")) {
    const head = /^(\S+):$/.exec(line);
    if (head) current = head[1] as string;
    else if (/^\s+Candidate: (?!\(none\))/.test(line)) candidates.add(current);
  }
  const missing = names.filter((n) => !candidates.has(n));
  if (missing.length)
    throw new Error(
      `apt has no package ${missing.join(", ")} (apt-cache show on this host's lists): check the name`,
    );
}

/** Builds (or finds cached) template `name`; `dir` is where templates' root filesystems live. */
export async function buildTemplate(
  dir: string,
  name: string,
  recipe: TemplateRecipe,
  options: { log?: (s: string) => void; force?: boolean } = {},
): Promise<TemplateInfo & { cached: boolean }> {
  checkTemplateName(name);
  const log = options.log ?? (() => {});
  const base = imageTag();
  await preflightRecipe(recipe);
  if (!(await imageExists(base)))
    throw new Error(`the base image ${base} is not built: hands sandbox build-image`);
  const hash = templateHash(recipe, base, filesDigest(recipe.files));
  const image = `${TEMPLATE_REPO}:${hash}`;
  const rootfs = join(dir, hash, "root");
  const info: TemplateInfo = { name, hash, image, rootfs, recipe, builtAt: new Date().toISOString() };
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (!options.force && existsSync(join(dir, hash, "done")) && (await imageExists(image))) {
    await writeFile(
      join(dir, `${name}.json`),
      JSON.stringify({ ...info, builtAt: readBuiltAt(dir, hash) }, null, 2),
    );
    return { ...info, builtAt: readBuiltAt(dir, hash), cached: true };
  }
  const work = join(dir, `${hash}.building-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(join(work, "root"), { recursive: true, mode: 0o755 });
  await chmod(work, 0o755);
  const ctr = `hands-template-export-${process.pid}-${Date.now()}`;
  try {
    log(`export ${base}…\n`);
    await run("docker", ["create", "--name", ctr, base], log);
    await run(
      "bash",
      ["-o", "pipefail", "-c", `docker export "$1" | tar -x -C "$2"`, "x", ctr, join(work, "root")],
      log,
    );
    const root = join(work, "root");
    // The chroot's name resolution and apt mirror are the host's.
    await writeFile(
      join(root, "etc/resolv.conf"),
      existsSync("/etc/resolv.conf") ? readFileSync("/etc/resolv.conf") : "",
    );
    await writeFile(join(root, "tmp/hands-recipe.sh"), recipeScript(recipe));
    // Staged before anything of the recipe runs (the root is still the base image's).
    for (const [i, f] of (recipe.files ?? []).entries()) {
      await mkdir(join(root, "tmp/hands-files"), { recursive: true });
      await run("cp", ["-a", "--", f.from, join(root, "tmp/hands-files", String(i))], log);
    }
    log("run the recipe in the new root…\n");
    await run("chroot", [root, "/bin/bash", "/tmp/hands-recipe.sh"], log);
    await rm(join(root, "tmp/hands-recipe.sh"), { force: true });
    const changes = [
      "USER 1000:1000",
      `WORKDIR ${recipe.workdir ?? "/workspace"}`,
      'CMD ["sleep","infinity"]',
    ];
    for (const [k, v] of Object.entries(recipe.env ?? {})) changes.push(`ENV ${k}=${v}`);
    log(`docker import as ${image}…\n`);
    await run(
      "bash",
      [
        "-o",
        "pipefail",
        "-c",
        `tar -C "$1" -c . | docker import ${changes.map((c) => `--change ${q(c)}`).join(" ")} - "$2"`,
        "x",
        root,
        image,
      ],
      log,
    );
    await rm(join(dir, hash), { recursive: true, force: true });
    await rename(work, join(dir, hash));
    await writeFile(join(dir, hash, "done"), info.builtAt);
    await writeFile(join(dir, `${name}.json`), JSON.stringify(info, null, 2));
    return { ...info, cached: false };
  } finally {
    await run("docker", ["rm", "-f", ctr], () => {}).catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}

function readBuiltAt(dir: string, hash: string): string {
  return readFileSync(join(dir, hash, "done"), "utf8").trim();
}

export function listTemplates(dir: string): TemplateInfo[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as TemplateInfo)
    .filter((t) => existsSync(join(dir, t.hash, "done")));
}

export function findTemplate(dir: string, name: string): TemplateInfo {
  checkTemplateName(name);
  const t = listTemplates(dir).find((x) => x.name === name);
  if (!t) throw new Error(`no template ${name}: hands sandbox template build ${name}`);
  return t;
}

/** Removes a template's name, and its build when no other name uses it. */
export async function removeTemplate(dir: string, name: string): Promise<void> {
  const t = findTemplate(dir, name);
  await rm(join(dir, `${name}.json`), { force: true });
  if (listTemplates(dir).some((x) => x.hash === t.hash)) return;
  await rm(join(dir, t.hash), { recursive: true, force: true });
  await run("docker", ["image", "rm", "-f", t.image], () => {}).catch(() => {});
}

/**
 * A template's start command, run in the background of a new sandbox of it (kept running across
 * the commands that follow); its output goes to /tmp/hands-start.log in the sandbox.
 */
export async function startTemplateCommand(sb: Sandbox, start: string): Promise<void> {
  const r = await sb.exec(`nohup bash -c ${q(start)} >/tmp/hands-start.log 2>&1 </dev/null &`, {
    keepBackground: true,
    timeoutMs: 15_000,
  });
  if (r.exitCode !== 0) throw new Error(`the template's start command could not start: ${r.stderr.trim()}`);
}
