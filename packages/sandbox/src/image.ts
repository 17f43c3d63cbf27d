// The docker backend's image. Where a registry is reachable, image/Dockerfile builds it; here
// (Debian's packages but no registry) `buildImage` makes the same image from a debootstrap
// root filesystem and `docker import`. The tag carries a hash of the recipe, so a machine
// builds it once and later calls find it.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { appendFile, chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const IMAGE_REPO = "hands-sandbox";
export const IMAGE_PACKAGES = ["python3", "git", "curl", "jq", "ca-certificates", "procps"];
/**
 * Installed after debootstrap by apt in the new root (debootstrap's own resolver cannot configure
 * them): hands serve's code interpreter — Jupyter kernels for Python (IPython, with pandas and
 * matplotlib for DataFrame and chart results) and R.
 */
export const IMAGE_APT_PACKAGES = [
  "python3-ipykernel",
  "python3-jupyter-client",
  "python3-pandas",
  "python3-matplotlib",
  "r-cran-irkernel",
];
/** Programs taken from npm packages (Deno: the code interpreter's JavaScript/TypeScript kernel). */
export const IMAGE_NPM_PROGRAMS = [
  {
    pkg: process.arch === "arm64" ? "@deno/linux-arm64-glibc" : "@deno/linux-x64-glibc",
    version: "2.9.6",
    file: "deno",
    dest: "usr/local/bin/deno",
  },
];
const RECIPE_VERSION = "1";

/** Debian suite and mirror this machine's apt uses (HANDS_DEBIAN_MIRROR/SUITE override). */
export function debianSource(): { suite: string; mirror: string } {
  let suite = process.env["HANDS_DEBIAN_SUITE"] ?? "";
  if (!suite) {
    const os = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
    suite = /^VERSION_CODENAME=(\S+)/m.exec(os)?.[1] ?? "bookworm";
  }
  let mirror = process.env["HANDS_DEBIAN_MIRROR"] ?? "";
  if (!mirror) {
    const texts: string[] = [];
    if (existsSync("/etc/apt/sources.list")) texts.push(readFileSync("/etc/apt/sources.list", "utf8"));
    const dir = "/etc/apt/sources.list.d";
    if (existsSync(dir))
      for (const f of readdirSync(dir))
        if (f.endsWith(".sources") || f.endsWith(".list")) texts.push(readFileSync(join(dir, f), "utf8"));
    for (const t of texts) {
      const m =
        /^URIs:\s*(\S+\/debian)\s*$/m.exec(t) ??
        /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\s+\S+\s+main/m.exec(t);
      if (m?.[1]) {
        mirror = m[1];
        break;
      }
    }
  }
  if (!mirror) throw new Error("no Debian mirror found in apt's sources; set HANDS_DEBIAN_MIRROR");
  return { suite, mirror };
}

/** The image tag for the current recipe (content hash of everything that goes into it). */
export function imageTag(suite = debianSource().suite): string {
  const h = createHash("sha256")
    .update(JSON.stringify({ RECIPE_VERSION, suite, IMAGE_PACKAGES, IMAGE_APT_PACKAGES, IMAGE_NPM_PROGRAMS }))
    .digest("hex");
  return `${IMAGE_REPO}:${h.slice(0, 12)}`;
}

function run(
  cmd: string,
  args: string[],
  log: (s: string) => void,
  stdinFrom?: NodeJS.ReadableStream,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let tail = "";
    const keep = (c: Buffer) => {
      tail = (tail + c.toString("utf8")).slice(-4000);
      log(c.toString("utf8"));
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (e) => reject(new Error(`${cmd} could not start: ${e.message}`)));
    if (stdinFrom) stdinFrom.pipe(child.stdin);
    else child.stdin.end();
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} failed (exit ${code}): ${tail.trim().slice(-1500)}`)),
    );
  });
}

export async function imageExists(tag: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = spawn("docker", ["image", "inspect", tag], { stdio: "ignore" });
    c.on("error", () => resolve(false));
    c.on("close", (code) => resolve(code === 0));
  });
}

/**
 * Puts IMAGE_NPM_PROGRAMS under `root` (the image's root filesystem, or "/" for the host, where
 * bwrap sandboxes see /usr): each from its npm package, through npm itself.
 */
export async function installNpmPrograms(root: string, log: (s: string) => void = () => {}): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "hands-npm-"));
  try {
    for (const p of IMAGE_NPM_PROGRAMS) {
      log(`npm pack ${p.pkg}@${p.version}…\n`);
      await run("npm", ["pack", "--silent", `${p.pkg}@${p.version}`, "--pack-destination", work], log);
      const tgz = readdirSync(work).find((f) => f.endsWith(".tgz"));
      if (!tgz) throw new Error(`npm pack ${p.pkg} left no archive`);
      await run("tar", ["-xzf", join(work, tgz), "-C", work, `package/${p.file}`], log);
      await mkdir(join(root, dirname(p.dest)), { recursive: true });
      await copyFile(join(work, "package", p.file), join(root, p.dest));
      await chmod(join(root, p.dest), 0o755);
      await rm(join(work, tgz), { force: true });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Builds the image offline (root needed for debootstrap) unless it exists; returns its tag. */
export async function buildImage(
  options: { force?: boolean; log?: (s: string) => void } = {},
): Promise<string> {
  const log = options.log ?? (() => {});
  const { suite, mirror } = debianSource();
  const tag = imageTag(suite);
  if (!options.force && (await imageExists(tag))) return tag;
  const work = await mkdtemp(join(tmpdir(), "hands-image-"));
  const root = join(work, "root");
  try {
    log(`debootstrap ${suite} from the configured mirror…\n`);
    await run(
      "debootstrap",
      ["--variant=minbase", `--include=${IMAGE_PACKAGES.join(",")}`, suite, root, mirror],
      log,
    );
    log(`apt-get install ${IMAGE_APT_PACKAGES.join(" ")} in the new root…\n`);
    await run(
      "chroot",
      [
        root,
        "sh",
        "-c",
        `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${IMAGE_APT_PACKAGES.join(" ")} && apt-get clean`,
      ],
      log,
    );
    await installNpmPrograms(root, log);
    // The non-root user and the workspace mount point.
    await appendFile(join(root, "etc/passwd"), "hands:x:1000:1000:hands:/home/hands:/bin/bash\n");
    await appendFile(join(root, "etc/group"), "hands:x:1000:\n");
    await appendFile(join(root, "etc/shadow"), "hands:!:19000:0:99999:7:::\n");
    await mkdir(join(root, "home/hands"), { recursive: true });
    await mkdir(join(root, "workspace"), { recursive: true });
    await run("chown", ["1000:1000", join(root, "home/hands"), join(root, "workspace")], log);
    await rm(join(root, "var/cache/apt/archives"), { recursive: true, force: true });
    await rm(join(root, "var/lib/apt/lists"), { recursive: true, force: true });
    await writeFile(
      join(work, "import.sh"),
      `tar -C "$1" -c . | docker import --change 'USER 1000:1000' --change 'WORKDIR /workspace' --change 'CMD ["sleep","infinity"]' - "$2"\n`,
    );
    log(`docker import as ${tag}…\n`);
    await run("bash", ["-o", "pipefail", join(work, "import.sh"), root, tag], log);
    return tag;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
