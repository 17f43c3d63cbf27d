// `hands sandbox doctor`'s checks of the backends: each says ok / broken / warn / skip, what it
// saw, and the exact fix. They look at causes (a sysctl, a mount, a socket, free space), not at
// error text, so a user can act on each line; the last check of a backend starts a real sandbox,
// since only that proves the rest adds up.
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, statfsSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkBwrap } from "./sandbox-kind.js";

export type CheckStatus = "ok" | "broken" | "warn" | "skip";

export interface DoctorCheck {
  /** Stable id for scripts, e.g. "bwrap.namespaces". */
  id: string;
  /** What the check is about, for people ("user namespaces"). */
  title: string;
  status: CheckStatus;
  /** What was seen, in one line. */
  detail: string;
  /** The exact fix, when something is to be done. */
  fix?: string;
}

const check = (
  id: string,
  title: string,
  status: CheckStatus,
  detail: string,
  fix?: string,
): DoctorCheck => ({
  id,
  title,
  status,
  detail,
  ...(fix ? { fix } : {}),
});

const readSysctl = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
};

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const size = (bytes: number) =>
  bytes >= GiB ? `${(bytes / GiB).toFixed(1)} GiB` : `${Math.round(bytes / MiB)} MiB`;

/** Bubblewrap: installed, and able to make namespaces (with the cause when not). */
export function bwrapChecks(): DoctorCheck[] {
  const v = spawnSync("bwrap", ["--version"], { encoding: "utf8", timeout: 5000 });
  if (v.error || v.status !== 0)
    return [
      check(
        "bwrap.installed",
        "bubblewrap installed",
        "broken",
        "no bwrap on the PATH",
        "apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)",
      ),
    ];
  const out = [check("bwrap.installed", "bubblewrap installed", "ok", v.stdout.trim())];
  const probe = checkBwrap();
  if (probe.ok) {
    out.push(check("bwrap.namespaces", "user namespaces", "ok", "a test sandbox started"));
    return out;
  }
  out.push(check("bwrap.namespaces", "user namespaces", "broken", probe.reason, namespaceFix()));
  return out;
}

/** Why namespaces may be refused here, read from the sysctls that decide it. */
function namespaceFix(): string {
  if (readSysctl("/proc/sys/user/max_user_namespaces") === "0")
    return "user namespaces are switched off (user.max_user_namespaces = 0): sysctl -w user.max_user_namespaces=15000";
  if (readSysctl("/proc/sys/kernel/unprivileged_userns_clone") === "0")
    return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0): sysctl -w kernel.unprivileged_userns_clone=1";
  if (readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1")
    return (
      "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1): " +
      "add an AppArmor profile that allows userns for /usr/bin/bwrap, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
    );
  return "inside a container, run it with --privileged or a seccomp profile that allows unshare/clone(CLONE_NEWUSER); or use --sandbox docker";
}

/** The controllers Hands' limits need: memory, pids, cpu. */
export const CGROUP_CONTROLLERS = ["memory", "pids", "cpu"] as const;

/** cgroup v1 or v2 under `root`, the controllers Hands needs there, and whether it may write. */
export function cgroupCheck(root = "/sys/fs/cgroup"): DoctorCheck {
  const title = "cgroups (memory, PID and CPU limits)";
  const root0 = (process.getuid?.() ?? 1) === 0;
  const writable = (dir: string) => {
    if (root0) {
      try {
        accessSync(dir, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    }
    return existsSync(join(dir, "hands")) && canWrite(join(dir, "hands"));
  };
  const delegate =
    "run Hands as root, or delegate a hands/ group to your user (systemd: a unit with Delegate=yes, " +
    "or mkdir <hierarchy>/hands && chown -R $USER <hierarchy>/hands)";
  if (existsSync(join(root, "cgroup.controllers"))) {
    const have = (readSysctl(join(root, "cgroup.controllers")) ?? "").split(/\s+/);
    const missing = CGROUP_CONTROLLERS.filter((c) => !have.includes(c));
    if (missing.length)
      return check(
        "cgroups",
        title,
        "broken",
        `v2 at ${root}: controller ${missing.join(", ")} not available here`,
        `enable it in the parent's cgroup.subtree_control (echo +${missing[0]} > <parent>/cgroup.subtree_control), or boot with it delegated; without it that limit is not enforced`,
      );
    if (!writable(root))
      return check("cgroups", title, "broken", `v2 at ${root}: not writable by this user`, delegate);
    return check("cgroups", title, "ok", `v2 at ${root}: ${CGROUP_CONTROLLERS.join(", ")}, writable`);
  }
  const missing = CGROUP_CONTROLLERS.filter((c) => !existsSync(join(root, c, "cgroup.procs")));
  if (missing.length === CGROUP_CONTROLLERS.length)
    return check(
      "cgroups",
      title,
      "broken",
      `no cgroup hierarchy at ${root}`,
      "mount cgroup2 (mount -t cgroup2 none /sys/fs/cgroup); without it no limit is enforced",
    );
  if (missing.length)
    return check(
      "cgroups",
      title,
      "broken",
      `v1 at ${root}: no ${missing.join(", ")} hierarchy`,
      `mount it (mkdir -p ${join(root, missing[0] ?? "")} && mount -t cgroup -o ${missing[0]} none ${join(root, missing[0] ?? "")}); without it that limit is not enforced`,
    );
  const unwritable = CGROUP_CONTROLLERS.filter((c) => !writable(join(root, c)));
  if (unwritable.length)
    return check(
      "cgroups",
      title,
      "broken",
      `v1 at ${root}: ${unwritable.join(", ")} not writable`,
      delegate,
    );
  return check("cgroups", title, "ok", `v1 at ${root}: ${CGROUP_CONTROLLERS.join(", ")}, writable`);
}

function canWrite(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Free space where `what` lives: broken under `minBytes` (Docker refuses to create containers on a full disk). */
export function diskCheck(id: string, what: string, dir: string, minBytes: number, fix: string): DoctorCheck {
  const title = `free space: ${what}`;
  let st: ReturnType<typeof statfsSync>;
  try {
    st = statfsSync(dir);
  } catch (e) {
    return check(id, title, "skip", `cannot look at ${dir}: ${(e as Error).message}`);
  }
  const free = st.bavail * st.bsize;
  const total = st.blocks * st.bsize;
  const line = `${size(free)} free of ${size(total)} at ${dir}`;
  if (free < minBytes) return check(id, title, "broken", line, fix);
  if (total > 0 && free / total < 0.05) return check(id, title, "warn", line, fix);
  return check(id, title, "ok", line);
}

interface DockerInfo {
  Runtimes?: Record<string, { path?: string }>;
  DockerRootDir?: string;
  CgroupDriver?: string;
  ServerVersion?: string;
}

type Docker = {
  ping(): Promise<unknown>;
  info(): Promise<DockerInfo>;
  listImages(o: object): Promise<{ RepoTags?: string[] | null }[]>;
  run(
    image: string,
    cmd: string[],
    out: NodeJS.WritableStream,
    o: object,
  ): Promise<[{ StatusCode: number }, ...unknown[]]>;
};

export interface DockerCheckOptions {
  /** The image the docker backend uses now (imageTag()). */
  image: string;
  /** The repository of its tags, to tell an old image from none. */
  imageRepo: string;
}

/**
 * The Docker Engine: answering, with containerd behind it (a container starts), the image of
 * today's recipe present, gVisor registered, space where images and containers live.
 */
export async function dockerChecks(o: DockerCheckOptions): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  let docker: Docker;
  let info: DockerInfo;
  try {
    const mod = await import("dockerode");
    docker = new mod.default() as unknown as Docker;
    await withTimeout(docker.ping(), 5000, "no answer in 5 s");
    info = await withTimeout(docker.info(), 5000, "no answer to /info in 5 s");
  } catch (e) {
    const where = process.env["DOCKER_HOST"] ?? "unix:///var/run/docker.sock";
    out.push(
      check(
        "docker.daemon",
        "Docker daemon",
        "broken",
        `no Docker Engine answers at ${where} (${(e as Error).message})`,
        "start it: systemctl start docker (or dockerd &); apt-get install docker.io if it is missing; or set DOCKER_HOST",
      ),
    );
    for (const [id, title] of [
      ["docker.image", "sandbox image"],
      ["docker.run", "a container starts"],
      ["gvisor.runtime", "gVisor (runsc) registered with Docker"],
    ] as const)
      out.push(check(id, title, "skip", "needs the Docker daemon"));
    return out;
  }
  out.push(check("docker.daemon", "Docker daemon", "ok", `Docker ${info.ServerVersion ?? "?"} answers`));
  const systemd = existsSync("/run/systemd/system");
  if (info.CgroupDriver === "systemd" && !systemd)
    out.push(
      check(
        "docker.cgroup-driver",
        "cgroup driver",
        "broken",
        "Docker uses the systemd cgroup driver but systemd is not running here",
        'set "exec-opts": ["native.cgroupdriver=cgroupfs"] in /etc/docker/daemon.json and restart dockerd',
      ),
    );
  if (info.DockerRootDir)
    out.push(
      diskCheck(
        "docker.disk",
        "Docker's data",
        info.DockerRootDir,
        GiB,
        "free space there: docker system prune (removes stopped containers and unused images), or hands sandbox prune",
      ),
    );
  const tags = (await docker.listImages({ filters: { reference: [o.imageRepo] } })).flatMap(
    (i) => i.RepoTags ?? [],
  );
  const haveImage = tags.includes(o.image);
  if (haveImage) out.push(check("docker.image", "sandbox image", "ok", `${o.image} is built`));
  else
    out.push(
      check(
        "docker.image",
        "sandbox image",
        "broken",
        tags.length
          ? `${o.image} (today's recipe) is missing; older: ${tags.join(", ")}`
          : `${o.image} is not built`,
        "hands sandbox build-image (offline, from apt's Debian mirror; needs root and debootstrap)",
      ),
    );
  if (haveImage) out.push(await runCheck(docker, o.image, "docker.run", "a container starts", undefined));
  else out.push(check("docker.run", "a container starts", "skip", "needs the sandbox image"));
  const runsc = info.Runtimes?.["runsc"];
  if (!runsc)
    out.push(
      check(
        "gvisor.runtime",
        "gVisor (runsc) registered with Docker",
        "broken",
        `Docker's runtimes: ${Object.keys(info.Runtimes ?? {}).join(", ") || "none"}`,
        "apt-get install runsc, then runsc install (adds it to /etc/docker/daemon.json) and restart dockerd",
      ),
    );
  else if (haveImage)
    out.push(
      await runCheck(docker, o.image, "gvisor.runtime", "gVisor (runsc) registered with Docker", "runsc"),
    );
  else
    out.push(
      check("gvisor.runtime", "gVisor (runsc) registered with Docker", "ok", `runsc at ${runsc.path ?? "?"}`),
    );
  return out;
}

/** Starts `true` in a throwaway container: the proof that containerd, cgroups and the disk agree. */
async function runCheck(
  docker: Docker,
  image: string,
  id: string,
  title: string,
  runtime: string | undefined,
): Promise<DoctorCheck> {
  const sink = new (await import("node:stream")).PassThrough();
  sink.resume();
  try {
    const [res] = await withTimeout(
      docker.run(image, ["true"], sink, {
        HostConfig: { AutoRemove: true, NetworkMode: "none", ...(runtime ? { Runtime: runtime } : {}) },
        Labels: { "hands.doctor": "1" },
      }),
      60_000,
      "the container did not finish in 60 s",
    );
    if (res.StatusCode === 0)
      return check(
        id,
        title,
        "ok",
        runtime ? `a ${runtime} container ran \`true\`` : "a container ran `true`",
      );
    return check(
      id,
      title,
      "broken",
      `\`true\` exited ${res.StatusCode} in a container`,
      "see dockerd's log (journalctl -u docker)",
    );
  } catch (e) {
    const msg = (e as Error).message.replace(/\s+/g, " ").slice(0, 300);
    const fix = /containerd/i.test(msg)
      ? "containerd is not answering: systemctl restart containerd docker (or restart dockerd)"
      : /no space/i.test(msg)
        ? "Docker's disk is full: docker system prune"
        : runtime
          ? "check runsc's entry in /etc/docker/daemon.json (runsc install) and restart dockerd"
          : "see dockerd's log (journalctl -u docker)";
    return check(id, title, "broken", msg, fix);
  }
}

/** The allow-list proxy that `--allow-domain` needs: it starts, and refuses what no rule names. */
export async function proxyCheck(): Promise<DoctorCheck> {
  const title = "allow-list proxy (--allow-domain)";
  const { startAllowListProxy } = await import("./proxy.js");
  let proxy: Awaited<ReturnType<typeof startAllowListProxy>> | undefined;
  try {
    proxy = await startAllowListProxy({ allow: ["example.invalid"] });
    const socketPath = proxy.socketPath;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { socketPath, path: "http://127.0.0.1:9/", headers: { host: "127.0.0.1:9" }, timeout: 5000 },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("timeout", () => req.destroy(new Error("no answer in 5 s")));
      req.on("error", reject);
      req.end();
    });
    if (status === 403) return check("proxy", title, "ok", "started, and refused an address no rule names");
    return check(
      "proxy",
      title,
      "broken",
      `started, but answered ${status} for a refused address`,
      "report this: the proxy's rules did not apply",
    );
  } catch (e) {
    return check(
      "proxy",
      title,
      "broken",
      `cannot start: ${(e as Error).message}`,
      `the proxy makes a Unix socket under ${tmpdir()}: check that folder is writable and not full`,
    );
  } finally {
    await proxy?.close();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
