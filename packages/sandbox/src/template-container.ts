// Builds of untrusted recipes (a `hands serve` tenant's template): each step runs as root, but in
// a gVisor (runsc) container of the base image — never in a chroot on the host — with no network
// but the allow-list proxy (the package mirrors), limits on memory, processes and time, and the
// result kept with `docker commit` (one layer on the base: no export of the whole image). Files a
// step copies come from a read-only folder of archives the caller staged; they are unpacked by
// tar inside the container, so a hostile archive meets gVisor, not the host's filesystem.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { FORWARDER, PROXY_ENV, PROXY_SOCKET_IN_SANDBOX, startAllowListProxy } from "./proxy.js";

export type BuildStep =
  | { kind: "run"; cmd: string; user?: string }
  /** `archive`: a file name in the staged folder (a tar, gzip'd or not), unpacked at `to`. */
  | { kind: "copy"; archive: string; to: string; user?: string; mode?: string }
  | { kind: "env"; vars: Record<string, string> }
  | { kind: "workdir"; path: string }
  | { kind: "user"; name: string };

export interface ContainerBuild {
  base: string;
  /** The image the result is committed as. */
  image: string;
  steps: BuildStep[];
  /** Host folder of archives `copy` steps name (mounted read-only). */
  stageDir?: string;
  /** Allow-list rules for the build's network (proxy-rules.ts); none: no network at all. */
  allow?: readonly string[];
  runtime?: string;
  memoryBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Every line of output, as it comes. */
  log?: (line: string, level: "info" | "error") => void;
}

export interface ContainerBuildResult {
  ok: boolean;
  /** Index in `steps` of the step that failed (when ok is false and a step did). */
  failedStep?: number;
  message?: string;
  env: Record<string, string>;
  workdir?: string;
  user?: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Checks a step list (from a tenant: every field is hostile until checked). */
export function checkSteps(steps: BuildStep[]): void {
  for (const s of steps) {
    if ((s.kind === "run" || s.kind === "copy") && s.user !== undefined && !USER.test(s.user))
      throw new Error(`bad user: ${s.user}`);
    switch (s.kind) {
      case "run":
        if (typeof s.cmd !== "string" || s.cmd.length > 64 * 1024) throw new Error("bad RUN command");
        break;
      case "copy":
        if (!/^[A-Za-z0-9._-]{1,128}$/.test(s.archive)) throw new Error("bad COPY source");
        if (typeof s.to !== "string" || !/^[^\0\n]{1,4096}$/.test(s.to))
          throw new Error("bad COPY destination");
        if (s.mode !== undefined && !/^[0-7]{3,4}$/.test(s.mode)) throw new Error(`bad COPY mode: ${s.mode}`);
        break;
      case "env":
        for (const [k, v] of Object.entries(s.vars))
          if (!NAME.test(k) || typeof v !== "string" || v.includes("\0") || v.includes("\n"))
            throw new Error(`bad ENV variable: ${k}`);
        break;
      case "workdir":
        if (!/^\/[^\0\n]{0,4095}$/.test(s.path))
          throw new Error(`WORKDIR must be an absolute path: ${s.path}`);
        break;
      case "user":
        if (!USER.test(s.name)) throw new Error(`bad USER: ${s.name}`);
        break;
      default:
        throw new Error("unknown step");
    }
  }
}

/**
 * The build script: each step announces itself on stdout with a marker only this build knows
 * (the step that fails is named from it), then runs with the environment and folder so far.
 */
export function buildScript(steps: BuildStep[], marker: string, proxied = false): string {
  const out = [
    "set -e",
    "export DEBIAN_FRONTEND=noninteractive",
    // The proxy's Unix socket becomes 127.0.0.1:3128 for apt, pip and npm. Set in the script, not
    // the container's environment: `docker commit` would keep that in the image.
    ...(proxied
      ? [
          ...Object.entries(PROXY_ENV).map(([k, v]) => `export ${k}=${q(v)}`),
          `python3 -c ${q(FORWARDER)} >/dev/null 2>&1 &`,
          "sleep 0.3",
        ]
      : []),
    "__wd=/",
    "__user=root",
    // Every other user is the sandbox's (uid 1000; E2B's `user`), whose home this is.
    "mkdir -p /home/user && chown 1000:1000 /home/user",
  ];
  steps.forEach((s, i) => {
    out.push(`echo "${marker} ${i}"`);
    const as = (user: string | undefined, cmd: string) =>
      `(cd "$__wd" && ${user ? `u=${q(user)}` : 'u="$__user"'}; if [ "$u" = root ]; then bash -c ${q(cmd)}; else HOME=/home/user setpriv --reuid=1000 --regid=1000 --clear-groups bash -c ${q(cmd)}; fi)`;
    switch (s.kind) {
      case "run":
        out.push(as(s.user, s.cmd));
        break;
      case "copy": {
        const dest = s.to.startsWith("/") ? q(s.to) : `"$__wd"/${q(s.to)}`;
        out.push(
          `mkdir -p ${dest}`,
          `tar --no-same-owner -xf /hands-stage/${s.archive} -C ${dest}`,
          ...(s.user && s.user !== "root" ? [`chown -R 1000:1000 ${dest}`] : []),
          ...(s.mode ? [`chmod ${s.mode} ${dest}`] : []),
        );
        break;
      }
      case "env":
        for (const [k, v] of Object.entries(s.vars)) out.push(`export ${k}=${q(v)}`);
        break;
      case "workdir":
        out.push(`mkdir -p ${q(s.path)}`, `__wd=${q(s.path)}`);
        break;
      case "user":
        out.push(`__user=${q(s.name)}`);
        break;
    }
  });
  out.push(`echo "${marker} done"`);
  return `${out.join("\n")}\n`;
}

function docker(args: string[], timeoutMs = 60_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn("docker", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out = (out + c.toString()).slice(-4000);
    });
    child.stderr.on("data", (c: Buffer) => {
      out = (out + c.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out: e.message });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out: out.trim() });
    });
  });
}

/** Runs the steps in a container of `base` and commits the result as `image`. */
export async function buildInContainer(b: ContainerBuild): Promise<ContainerBuildResult> {
  checkSteps(b.steps);
  const log = b.log ?? (() => {});
  const env: Record<string, string> = {};
  let workdir: string | undefined;
  let user: string | undefined;
  for (const s of b.steps) {
    if (s.kind === "env") Object.assign(env, s.vars);
    if (s.kind === "workdir") workdir = s.path;
    if (s.kind === "user") user = s.name;
  }
  const marker = `::hands-step-${randomBytes(8).toString("hex")}`;
  const proxy = b.allow?.length
    ? await startAllowListProxy({ allow: [...b.allow, ...(await mirrorAddresses(b.allow))] })
    : undefined;
  const ctr = `hands-template-build-${randomBytes(6).toString("hex")}`;
  let step = -1;
  try {
    const args = [
      "create",
      "--name",
      ctr,
      "--user",
      "0",
      "--network",
      "none",
      "--memory",
      String(b.memoryBytes ?? 2 * 1024 ** 3),
      "--pids-limit",
      "1024",
      "--security-opt",
      "no-new-privileges",
      "--label",
      "hands.template-build=1",
      ...(b.runtime ? ["--runtime", b.runtime] : []),
      ...(b.stageDir ? ["-v", `${b.stageDir}:/hands-stage:ro`] : []),
      ...(proxy ? ["-v", `${proxy.socketPath}:${PROXY_SOCKET_IN_SANDBOX}`] : []),
      // The command, not --entrypoint: the committed image must keep the base's (none).
      b.base,
      "/bin/bash",
      "-c",
      buildScript(b.steps, marker, proxy !== undefined),
    ];
    const created = await docker(args);
    if (created.code !== 0) return { ok: false, message: `the build could not start: ${created.out}`, env };
    const code = await new Promise<number>((resolve) => {
      const child = spawn("docker", ["start", "-a", ctr], { stdio: ["ignore", "pipe", "pipe"] });
      const lines = (level: "info" | "error") => {
        let rest = "";
        return (c: Buffer) => {
          const parts = (rest + c.toString("utf8")).split("\n");
          rest = parts.pop() ?? "";
          if (rest.length > 8192) {
            parts.push(rest);
            rest = "";
          }
          for (const line of parts) {
            if (line.startsWith(`${marker} `)) {
              const n = line.slice(marker.length + 1);
              step = n === "done" ? -1 : Number(n);
              continue;
            }
            log(line, level);
          }
        };
      };
      child.stdout.on("data", lines("info"));
      child.stderr.on("data", lines("error"));
      const kill = () => void docker(["kill", ctr]);
      const timer = setTimeout(() => {
        log(`the build ran out of time (${Math.round((b.timeoutMs ?? 600_000) / 1000)} s)`, "error");
        kill();
      }, b.timeoutMs ?? 600_000);
      b.signal?.addEventListener("abort", kill, { once: true });
      child.on("close", (c) => {
        clearTimeout(timer);
        b.signal?.removeEventListener("abort", kill);
        resolve(c ?? -1);
      });
    });
    if (code !== 0) {
      const failed = step >= 0 ? step : undefined;
      return {
        ok: false,
        ...(failed !== undefined ? { failedStep: failed } : {}),
        message:
          failed !== undefined
            ? `step ${failed + 1} (${b.steps[failed]?.kind.toUpperCase()}) failed with exit code ${code}`
            : `the build failed with exit code ${code}`,
        env,
      };
    }
    const changes = ['CMD ["sleep","infinity"]', "USER 1000:1000", "WORKDIR /workspace"];
    for (const [k, v] of Object.entries(env)) changes.push(`ENV ${k}=${v}`);
    const committed = await docker(
      ["commit", ...changes.flatMap((c) => ["--change", c]), ctr, b.image],
      300_000,
    );
    if (committed.code !== 0) return { ok: false, message: `docker commit failed: ${committed.out}`, env };
    return { ok: true, env, ...(workdir ? { workdir } : {}), ...(user ? { user } : {}) };
  } finally {
    await docker(["rm", "-f", ctr]);
    await proxy?.close().catch(() => {});
  }
}

/**
 * A package mirror the host reaches at a private or reserved address (a local mirror, as on CI
 * runners with a caching proxy) is refused by name alone; the addresses the host resolves the
 * allowed names to are allowed too — the same mirror a chroot build on the host would use.
 */
async function mirrorAddresses(allow: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const rule of allow) {
    if (!/^[a-z0-9.-]+$/i.test(rule) || /^[\d.]+$/.test(rule)) continue;
    const found = await lookup(rule, { all: true }).catch(() => []);
    for (const a of found) out.push(a.family === 6 ? `[${a.address}]` : a.address);
  }
  return out;
}

/** Removes a committed template image (quietly: it may be gone already). */
export async function removeTemplateImage(image: string): Promise<void> {
  await docker(["image", "rm", "-f", image]);
}
