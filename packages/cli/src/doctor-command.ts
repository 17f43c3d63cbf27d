// `hands sandbox doctor`: every backend this machine could use, checked by cause, each line
// with its fix; `--json` for scripts. Exits 1 when the configured default backend cannot work
// (2 for a usage error), so `hands sandbox doctor && hands "…"` means something.
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdtempSync,
  openSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import type { DoctorCheck } from "@hands/sandbox/backends";
import { dataDir, packageIndexDir, resolveSettings, userConfigPath } from "@hands/sdk/root";

type Out = (s: string) => void;

interface Group {
  name: string;
  checks: DoctorCheck[];
}

/** What a backend needs to work at all (a broken cgroup check only loses limits: a warning for this). */
const NEEDED: Record<string, readonly string[]> = {
  bwrap: ["bwrap.installed", "bwrap.namespaces", "bwrap.run"],
  docker: ["docker.daemon", "docker.image", "docker.run"],
  e2b: ["e2b.service"],
  local: [],
};

export async function runDoctor(argv: string[], out: Out, err: Out): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { json: { type: "boolean" }, sandbox: { type: "string" } },
  });
  const sb = await import("@hands/sandbox/backends");
  const configured = resolveSettings(
    { ...(values.sandbox ? { sandbox: values.sandbox } : {}) },
    process.cwd(),
  ).sandbox;

  // The slow parts (a sandbox, two containers, the proxy) run side by side.
  const bwrap = sb.bwrapChecks();
  const [bwrapRunCheck, docker, proxy, serve] = await Promise.all([
    bwrap.every((c) => c.status === "ok")
      ? bwrapRun()
      : skipped("bwrap.run", "a sandbox starts", "needs bubblewrap and namespaces"),
    sb.dockerChecks({ image: sb.imageTag(), imageRepo: sb.IMAGE_REPO }),
    sb.proxyCheck(),
    serveCheck(configured === "e2b"),
  ]);
  bwrap.push(bwrapRunCheck, sb.cgroupCheck());
  const groups: Group[] = [
    { name: "bwrap", checks: bwrap },
    { name: "docker", checks: docker.filter((c) => !c.id.startsWith("gvisor.")) },
    { name: "gvisor", checks: docker.filter((c) => c.id.startsWith("gvisor.")) },
    { name: "data", checks: dataChecks(sb.diskCheck) },
    { name: "network", checks: [proxy] },
    { name: "diagnosis", checks: [packageIndexCheck(sb.packageIndexFile)] },
    { name: "serve", checks: [serve] },
  ];
  const all = groups.flatMap((g) => g.checks);
  const defaultBackend =
    configured === "auto"
      ? all.find((c) => c.id === "bwrap.namespaces")?.status === "ok"
        ? "bwrap"
        : "local"
      : configured;
  const needed = [...(NEEDED[defaultBackend] ?? []), "data.folder"];
  const usable = needed.every((id) => all.find((c) => c.id === id)?.status !== "broken");

  if (values.json) out(`${JSON.stringify({ defaultBackend, configured, usable, groups }, null, 2)}\n`);
  else out(render(groups, defaultBackend, configured, usable));
  if (!usable) err(`hands sandbox doctor: the default backend (${defaultBackend}) cannot work here\n`);
  return usable ? 0 : 1;
}

const skipped = (id: string, title: string, detail: string): DoctorCheck => ({
  id,
  title,
  status: "skip",
  detail,
});

/** A real bwrap sandbox on a throwaway folder runs `true`: limits, the seccomp filter and the sandbox user included. */
async function bwrapRun(): Promise<DoctorCheck> {
  const title = "a sandbox starts";
  const ws = mkdtempSync(join(tmpdir(), "hands-doctor-"));
  try {
    const { createSandbox } = await import("@hands/sandbox/backends");
    const box = await createSandbox({ kind: "bwrap", workspace: ws, network: "none" });
    try {
      const r = await box.exec("true", { timeoutMs: 30_000 });
      if (r.exitCode === 0)
        return { id: "bwrap.run", title, status: "ok", detail: "a bwrap session ran `true`" };
      return {
        id: "bwrap.run",
        title,
        status: "broken",
        detail: `\`true\` exited ${r.exitCode}: ${r.stderr.trim().slice(0, 200)}`,
      };
    } finally {
      await box.destroy();
    }
  } catch (e) {
    return {
      id: "bwrap.run",
      title,
      status: "broken",
      detail: (e as Error).message.replace(/\s+/g, " ").slice(0, 300),
      fix: "run with HANDS_DEBUG=1 for bwrap's own words; hands sandbox prune clears leftovers",
    };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

/**
 * The data folder (sessions, traces, memory) and the config folder: private to this user, and
 * the data folder takes a write (a full disk there loses sessions, not only sandboxes).
 */
function dataChecks(
  diskCheck: (id: string, what: string, dir: string, min: number, fix: string) => DoctorCheck,
): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  const data = dataDir();
  out.push(folderCheck("data.folder", "data folder", data, true));
  out.push(folderCheck("data.config", "config folder", dirname(userConfigPath()), false));
  const existing = nearestExisting(data);
  out.push(
    diskCheck(
      "data.disk",
      "the data folder",
      existing,
      64 * 1024 * 1024,
      `free space on the filesystem of ${existing}, or set HANDS_DATA_DIR to a folder elsewhere`,
    ),
  );
  out.push(
    diskCheck(
      "sandbox.tmp",
      "the temp folder (sandbox runtime, proxy sockets)",
      tmpdir(),
      16 * 1024 * 1024,
      `free space in ${tmpdir()}, or set TMPDIR`,
    ),
  );
  return out;
}

function nearestExisting(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (lstatSync(d, { throwIfNoEntry: false })) return d;
    if (d === dirname(d)) return d;
  }
}

function folderCheck(id: string, title: string, dir: string, probeWrite: boolean): DoctorCheck {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  const uid = process.getuid?.();
  if (!st) return { id, title, status: "ok", detail: `${dir} is made (0700) on first use` };
  if (st.isSymbolicLink() || !st.isDirectory())
    return {
      id,
      title,
      status: "broken",
      detail: `${dir} is not a folder (${st.isSymbolicLink() ? "a symlink" : "another kind of file"})`,
      fix: `move it aside: mv ${dir} ${dir}.old`,
    };
  if (uid !== undefined && st.uid !== uid)
    return {
      id,
      title,
      status: "broken",
      detail: `${dir} belongs to uid ${st.uid}, not you (${uid})`,
      fix: `chown -R ${uid} ${dir}`,
    };
  if (st.mode & 0o022)
    return {
      id,
      title,
      status: "broken",
      detail: `${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`,
      fix: `chmod 700 ${dir}`,
    };
  const mode = `mode ${(st.mode & 0o777).toString(8)}`;
  if (probeWrite) {
    const probe = join(dir, `.doctor-${process.pid}`);
    try {
      const fd = openSync(
        probe,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeSync(fd, Buffer.alloc(64 * 1024));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
        unlinkSync(probe);
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const fix =
        code === "ENOSPC" || code === "EDQUOT"
          ? "its filesystem is full: free space, or set HANDS_DATA_DIR elsewhere"
          : `check its permissions (${code})`;
      return {
        id,
        title,
        status: "broken",
        detail: `${dir}: a 64 KiB write failed (${code ?? (e as Error).message})`,
        fix,
      };
    }
  }
  return {
    id,
    title,
    status: (st.mode & 0o077) === 0 ? "ok" : "warn",
    detail: `${dir}, yours, ${mode}${probeWrite ? ", writable" : ""}`,
    ...((st.mode & 0o077) === 0 ? {} : { fix: `chmod 700 ${dir}` }),
  };
}

/** `hands serve` (or E2B) when one is configured: it answers, and takes the key. */
async function serveCheck(isDefault: boolean): Promise<DoctorCheck> {
  const id = "e2b.service";
  const title = "hands serve / E2B service";
  if (!process.env["E2B_API_KEY"])
    return {
      id,
      title,
      status: isDefault ? "broken" : "skip",
      detail: "not configured (E2B_API_KEY is not set)",
      ...(isDefault
        ? { fix: "export E2B_API_KEY=… and E2B_API_URL=http://HOST:PORT (the URL hands serve prints)" }
        : {}),
    };
  const { resolveE2BConnection } = await import("@hands/sandbox/backends");
  const conn = resolveE2BConnection({});
  const url = `${conn.apiUrl.replace(/\/$/, "")}/sandboxes`;
  try {
    const res = await fetch(url, {
      headers: { "X-API-Key": conn.apiKey },
      signal: AbortSignal.timeout(5000),
    });
    await res.body?.cancel();
    if (res.ok) return { id, title, status: "ok", detail: `${conn.apiUrl} answers and takes the key` };
    if (res.status === 401 || res.status === 403)
      return {
        id,
        title,
        status: "broken",
        detail: `${conn.apiUrl} refused the key (${res.status})`,
        fix: "hands serve keys create (on the server) and set E2B_API_KEY to the key it prints",
      };
    return {
      id,
      title,
      status: "broken",
      detail: `${url} answered ${res.status}`,
      fix: "is E2B_API_URL the address hands serve prints?",
    };
  } catch (e) {
    const cause = ((e as Error).cause as Error | undefined)?.message ?? (e as Error).message;
    return {
      id,
      title,
      status: "broken",
      detail: `${conn.apiUrl} is not reachable (${cause})`,
      fix: "start it: hands serve --port PORT, and set E2B_API_URL to its address",
    };
  }
}

const MARK: Record<string, string> = { ok: "ok", broken: "BROKEN", warn: "warn", skip: "skip" };

function render(groups: Group[], backend: string, configured: string, usable: boolean): string {
  const lines: string[] = [];
  for (const g of groups) {
    lines.push(g.name);
    for (const c of g.checks) {
      lines.push(`  ${(MARK[c.status] ?? c.status).padEnd(6)}  ${c.title}: ${c.detail}`);
      if (c.fix && c.status !== "ok") lines.push(`          fix: ${c.fix}`);
    }
  }
  const how = configured === "auto" ? `"auto" chose ${backend}` : `configured: ${backend}`;
  lines.push(
    "",
    `default backend ${backend} (${how}): ${usable ? "can work" : "CANNOT work — see the broken lines above"}`,
  );
  if (backend === "local")
    lines.push('note: "local" does not isolate commands; make bwrap or docker work for a real sandbox');
  return `${lines.join("\n")}\n`;
}

/** The package index that lets a failed command's result name the package it lacks. */
function packageIndexCheck(file: (dir: string) => string): DoctorCheck {
  const id = "diagnosis.index";
  const title = "package index (which package provides a missing program or library)";
  let path: string;
  try {
    path = file(packageIndexDir());
  } catch (e) {
    return { id, title, status: "skip", detail: `not a Debian host: ${(e as Error).message}` };
  }
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st?.isFile()) return { id, title, status: "ok", detail: `${path} (${Math.round(st.size / 1024)} KiB)` };
  return {
    id,
    title,
    status: "warn",
    detail: `${path} is not built: failed commands name what is missing but not its package`,
    fix: "hands sandbox package-index (fetches the suite's Contents index from apt's mirror once)",
  };
}
