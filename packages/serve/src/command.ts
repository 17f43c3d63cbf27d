// `hands serve …`: start the service, or look after its tenants' keys and read its audit log.
// The CLI loads this module only for `hands serve`.
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Keys } from "./keys.js";
import { startServe } from "./server.js";
import type { TenantLimits } from "./store.js";
import { openStore } from "./store-open.js";

export const SERVE_HELP = `Usage: hands serve [options]            run the E2B-compatible sandbox service
       hands serve keys create TENANT [--name N] [--max-sandboxes N] [--max-cpus N]
                        [--max-memory-mb N] [--max-lifetime SECONDS]
       hands serve keys list
       hands serve keys revoke KEY_ID
       hands serve tenants set TENANT [--max-sandboxes N] [--max-cpus N]
                        [--max-memory-mb N] [--max-lifetime SECONDS]
       hands serve audit [--limit N] [--sandbox ID]

Options:
  --api HOST:PORT        management API address (default 127.0.0.1:3000)  → E2B_API_URL
  --sandbox-address HOST:PORT
                         sandbox (data-plane) address (default 127.0.0.1:49983) → E2B_SANDBOX_URL
  --data DIR             state and sandbox files (default $HANDS_SERVE_DATA, else
                         /var/lib/hands/serve as root, ~/.local/share/hands/serve otherwise)
  --capacity N           sandboxes running at once on this node (default 100)
  --queue N              creates that may wait for capacity (default 200)
  --queue-timeout S      longest wait in the queue, seconds (default 30)
  --public-traffic       a sandbox created without network.allowPublicTraffic gets E2B's default,
                         true: its ports (getHost) open to anyone with the URL (default: they need
                         its trafficAccessToken; envd and the code interpreter always need a token)

Several nodes (one PostgreSQL database; any node answers any request):
  --database URL         postgres://user:pass@host:port/db (default $HANDS_SERVE_DATABASE; else
                         SQLite in the data folder, one node). keys and audit use it too
  --node NAME            this node's name, unique among the nodes (required with --database)
  --advertise-api URL    where the other nodes reach this node's management API
  --advertise-sandbox URL
                         … and its sandbox address (default: the bound addresses)
  --node-timeout S       a node silent this long is dead: its sandboxes become lost (default 10)`;

type Out = (s: string) => void;

export function defaultDataDir(): string {
  if (process.env.HANDS_SERVE_DATA) return process.env.HANDS_SERVE_DATA;
  return process.getuid?.() === 0
    ? "/var/lib/hands/serve"
    : join(homedir(), ".local", "share", "hands", "serve");
}

function address(v: string | undefined, fallback: number): { host: string; port: number } {
  if (!v) return { host: "127.0.0.1", port: fallback };
  const m = /^(.*):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) throw new Error(`not a HOST:PORT address: ${v}`);
  return { host: (m[1] as string).replace(/^\[(.*)\]$/, "$1") || "127.0.0.1", port: Number(m[2]) };
}

function wholeNumber(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new Error(`${what} must be a positive number: ${v}`);
  return Number(v);
}

function databaseOf(values: Values): string | undefined {
  return values.database ?? (process.env.HANDS_SERVE_DATABASE || undefined);
}

function limitsOf(values: Values): Partial<TenantLimits> {
  const n = (flag: "max-sandboxes" | "max-cpus" | "max-memory-mb" | "max-lifetime") =>
    wholeNumber(values[flag], `--${flag}`);
  const out: Partial<TenantLimits> = {};
  const sandboxes = n("max-sandboxes");
  const cpus = n("max-cpus");
  const memory = n("max-memory-mb");
  const lifetime = n("max-lifetime");
  if (sandboxes !== undefined) out.maxSandboxes = sandboxes;
  if (cpus !== undefined) out.maxCpus = cpus;
  if (memory !== undefined) out.maxMemoryMB = memory;
  if (lifetime !== undefined) out.maxLifetimeSec = lifetime;
  return out;
}

/** A change every node applies at once: say which nodes did not confirm it in time. */
function warnUnconfirmed(keys: Keys, out: Out): void {
  if (keys.unconfirmed.length > 0)
    out(
      `# warning: node(s) ${keys.unconfirmed.join(", ")} did not confirm the change in time (they do once they hear it; a node that cannot hear changes reads every key from the database)\n`,
    );
}

async function tenantsCommand(
  positionals: string[],
  values: Values,
  data: string,
  out: Out,
): Promise<number> {
  const [sub, name] = positionals;
  if (sub !== "set" || !name) {
    out(`${SERVE_HELP}\n`);
    return 2;
  }
  const limits = limitsOf(values);
  if (Object.keys(limits).length === 0) {
    out(
      "hands serve: tenants set needs at least one of --max-sandboxes, --max-cpus, --max-memory-mb, --max-lifetime\n",
    );
    return 2;
  }
  const store = await openStore({ dataDir: data, database: databaseOf(values) });
  try {
    const keys = new Keys(store);
    const t = await keys.setLimits(name, limits);
    if (!t) {
      out(`hands serve: no tenant ${name}\n`);
      return 1;
    }
    out(
      `tenant ${t.name}: ${t.maxSandboxes} sandboxes, ${t.maxCpus} CPUs, ${t.maxMemoryMB} MB, ${t.maxLifetimeSec} s lifetime (in force on every node now; running sandboxes are not stopped)\n`,
    );
    warnUnconfirmed(keys, out);
    return 0;
  } finally {
    await store.close();
  }
}

async function keysCommand(positionals: string[], values: Values, data: string, out: Out): Promise<number> {
  const store = await openStore({ dataDir: data, database: databaseOf(values) });
  try {
    const keys = new Keys(store);
    const [sub, arg] = positionals;
    if (sub === "create" && arg) {
      const limits = limitsOf(values);
      const k = await keys.create(arg, values.name ?? "default", limits);
      out(`${k.key}\n`);
      warnUnconfirmed(keys, out);
      out(
        `# key ${k.id} for tenant ${k.tenant.name}: ${k.tenant.maxSandboxes} sandboxes, ${k.tenant.maxCpus} CPUs, ${k.tenant.maxMemoryMB} MB, ${k.tenant.maxLifetimeSec} s lifetime (shown once; only its hash is kept)\n`,
      );
      return 0;
    }
    if (sub === "list") {
      for (const k of await store.listKeys())
        out(
          `${k.id}  ${k.tenant}  ${k.name}  created ${new Date(k.createdAt).toISOString()}${k.revokedAt ? `  revoked ${new Date(k.revokedAt).toISOString()}` : ""}\n`,
        );
      return 0;
    }
    if (sub === "revoke" && arg) {
      if (!(await keys.revoke(arg))) {
        out(`hands serve: no active key ${arg}\n`);
        return 1;
      }
      out(`revoked ${arg}\n`);
      warnUnconfirmed(keys, out);
      return 0;
    }
    out(`${SERVE_HELP}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

async function auditCommand(values: Values, data: string, out: Out): Promise<number> {
  const store = await openStore({ dataDir: data, database: databaseOf(values) });
  try {
    for (const r of await store.auditLog(wholeNumber(values.limit, "--limit") ?? 100, values.sandbox))
      out(`${JSON.stringify({ ...r, time: new Date(r.time).toISOString() })}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

function httpUrl(v: string | undefined, what: string): string | undefined {
  if (v === undefined) return undefined;
  if (!/^https?:\/\/[^/\s]+\/?$/.test(v)) throw new Error(`${what} must be an http://HOST:PORT URL: ${v}`);
  return v.replace(/\/$/, "");
}

const OPTIONS = {
  data: { type: "string" },
  help: { type: "boolean", short: "h" },
  api: { type: "string" },
  "sandbox-address": { type: "string" },
  capacity: { type: "string" },
  queue: { type: "string" },
  "queue-timeout": { type: "string" },
  "public-traffic": { type: "boolean" },
  database: { type: "string" },
  node: { type: "string" },
  "advertise-api": { type: "string" },
  "advertise-sandbox": { type: "string" },
  "node-timeout": { type: "string" },
  name: { type: "string" },
  "max-sandboxes": { type: "string" },
  "max-cpus": { type: "string" },
  "max-memory-mb": { type: "string" },
  "max-lifetime": { type: "string" },
  limit: { type: "string" },
  sandbox: { type: "string" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

/** How long a stopped service may wait for the last handles to close on their own. */
const EXIT_GRACE_MS = 3000;

/**
 * Everything the service holds is closed by now; whatever still keeps the process alive (a
 * connection a peer holds open, a library's socket) must not keep a stopped `hands serve` up:
 * say what it is and exit. Unref'd, so a process with nothing left exits at once.
 */
function exitIfStillHeld(err: Out): void {
  setTimeout(() => {
    const held = process.getActiveResourcesInfo().filter((r) => r !== "Timeout");
    err(
      `hands serve: stopped; still open after ${EXIT_GRACE_MS / 1000} s: ${held.join(", ") || "timers"}; exiting\n`,
    );
    process.exit(process.exitCode ?? 0);
  }, EXIT_GRACE_MS).unref();
}

/** Entry point of `hands serve` (argv after "serve"); resolves with the exit code. */
export async function runServeCommand(
  argv: string[],
  out: Out = (s) => process.stdout.write(s),
): Promise<number> {
  const err: Out = (s) => process.stderr.write(s);
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
    const data = values.data ?? defaultDataDir();
    if (values.help) {
      out(`${SERVE_HELP}\n`);
      return 0;
    }
    if (positionals[0] === "keys") return await keysCommand(positionals.slice(1), values, data, out);
    if (positionals[0] === "audit") return await auditCommand(values, data, out);
    if (positionals[0] === "tenants") return await tenantsCommand(positionals.slice(1), values, data, out);
    if (positionals.length > 0) {
      err(`hands serve: unknown command: ${positionals[0]}\n${SERVE_HELP}\n`);
      return 2;
    }
    const o = values;
    const database = databaseOf(values);
    const nodeTimeout = wholeNumber(o["node-timeout"], "--node-timeout");
    const advertiseApi = httpUrl(o["advertise-api"], "--advertise-api");
    const advertiseSandbox = httpUrl(o["advertise-sandbox"], "--advertise-sandbox");
    if (o.node !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(o.node))
      throw new Error(`--node must be 1-63 letters, digits, '.', '_' or '-': ${o.node}`);
    const s = await startServe({
      ...(database ? { database } : {}),
      ...(o.node ? { node: o.node } : {}),
      ...(advertiseApi || advertiseSandbox
        ? {
            advertise: {
              ...(advertiseApi ? { apiUrl: advertiseApi } : {}),
              ...(advertiseSandbox ? { sandboxUrl: advertiseSandbox } : {}),
            },
          }
        : {}),
      ...(nodeTimeout ? { deadAfterMs: nodeTimeout * 1000 } : {}),
      dataDir: data,
      apiListen: address(o.api, 3000),
      sandboxListen: address(o["sandbox-address"], 49983),
      ...(o.capacity ? { capacity: wholeNumber(o.capacity, "--capacity") as number } : {}),
      ...(o.queue ? { maxQueue: wholeNumber(o.queue, "--queue") as number } : {}),
      ...(o["queue-timeout"]
        ? { queueTimeoutMs: (wholeNumber(o["queue-timeout"], "--queue-timeout") as number) * 1000 }
        : {}),
      ...(o["public-traffic"] ? { publicTrafficByDefault: true } : {}),
    });
    const tenants = (await s.store.listKeys()).filter((k) => !k.revokedAt).length;
    out(
      `hands serve: management API ${s.apiUrl}  sandboxes ${s.sandboxUrl}  data ${data}${s.cluster ? `  node ${s.cluster.node} (shared database)` : ""}\n`,
    );
    out(`  E2B_API_URL=${s.apiUrl} E2B_SANDBOX_URL=${s.sandboxUrl} E2B_API_KEY=<a key>\n`);
    if (tenants === 0)
      out(`  no API keys yet: hands serve keys create <tenant>${values.data ? ` --data ${data}` : ""}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    out(
      "hands serve: stopping (running sandboxes keep their files; after the next start, connect resumes them)\n",
    );
    await s.close();
    exitIfStillHeld(err);
    return 0;
  } catch (e) {
    err(`hands serve: ${(e as Error).message}\n`);
    return 1;
  }
}
