// `hands memory ls|show|search|stats|export`: inspect the memory file.
import { existsSync } from "node:fs";
import { dataDir, openEmbedder, realFolder, resolveSettings } from "@hands/sdk/root";
import { parseCliArgs, UsageError } from "./args.js";
import { MEMORY_HELP } from "./command-help.js";

export { MEMORY_HELP };

export async function runMemoryCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const [cmd, ...rest] = argv;
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a.startsWith("--")) flags.set(a.slice(2), rest[++i] ?? "");
    else positional.push(a);
  }
  if (!cmd || cmd === "help" || cmd === "--help" || cmd === "-h") {
    out(`${MEMORY_HELP}\n`);
    return 0;
  }
  // The file and embedder the configuration gives runs in this folder (one file per embedding model).
  const workspace = realFolder(process.cwd(), "workspace folder");
  const settings = resolveSettings(parseCliArgs([]), workspace);
  const configured = await openEmbedder(settings.memory, dataDir(), (t) =>
    process.stderr.write(`hands: ${t}\n`),
  );
  const path = flags.get("db") ?? configured.path;
  if (!existsSync(path))
    throw new UsageError(`no memory file at ${path} (a run with memory on, the default, makes it)`);
  const { Memory, SqliteStore, HashEmbedder, lastContextChunks, storedDimensions } = await import(
    "@hands/memory"
  );
  // A file made with another embedding model (--db) opens with its own vector size; only
  // search needs the embedder that made it.
  const dims = storedDimensions(path) ?? configured.embedder?.dimensions ?? 256;
  let embedder = configured.embedder ?? new HashEmbedder();
  if (embedder.dimensions !== dims) {
    if (cmd === "search")
      throw new UsageError(
        `${path} holds ${dims}-dimension vectors from another embedding model than the one configured here; search it from the folder whose configuration made it`,
      );
    embedder = new HashEmbedder(dims);
  }
  const store = new SqliteStore({ path, dimensions: embedder.dimensions });
  const scope = flags.get("scope");
  const memory = new Memory({ store, embedder, ...(scope ? { scope } : {}) });
  const num = (name: string, d: number) => {
    const v = flags.get(name);
    const n = v === undefined ? d : Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive whole number`);
    return n;
  };
  const line = (c: {
    id: string;
    layer: string;
    type: string;
    importance: number;
    tokens: number;
    scope: string;
    content: string;
  }) =>
    `${c.id}  ${c.layer.padEnd(10)} ${c.type.padEnd(14)} ${c.importance.toFixed(2)} ${String(c.tokens).padStart(6)}t  ${c.scope.slice(0, 24).padEnd(24)}  ${c.content.replace(/\s+/g, " ").slice(0, 70)}`;
  try {
    switch (cmd) {
      case "ls": {
        const layer = flags.get("layer");
        const chunks = store.list({
          ...(scope ? { scope } : {}),
          ...(layer ? { layers: [layer as "working"] } : {}),
          limit: num("limit", 50),
        });
        for (const c of chunks) out(`${line(c)}\n`);
        return 0;
      }
      case "show": {
        const id = positional[0];
        // Without --scope: this workspace's last context (one file serves every workspace).
        if (!id)
          return showLastContext(lastContextChunks(store, scope, scope ? undefined : workspace), scope, out);
        const c = store.get(id);
        if (!c) {
          out(`no chunk ${id}\n`);
          return 1;
        }
        out(`${JSON.stringify(c, null, 2)}\n`);
        if (c.sources.length) {
          out("\noriginals:\n");
          for (const o of store.getMany(c.sources)) out(`${line(o)}\n`);
        }
        out("\nhistory:\n");
        for (const e of store.events({ chunkId: id }))
          out(`#${e.seq} ${new Date(e.time).toISOString()} ${e.kind}: ${e.reason}\n`);
        return 0;
      }
      case "search": {
        const query = positional.join(" ");
        if (!query) throw new UsageError("hands memory search QUERY");
        const r = await memory.retrieve(query, {
          budget: num("budget", 1000),
          filter: scope ? { scope } : { scope: allScopes(store) },
          touch: false,
        });
        for (const i of r.items)
          out(
            `${i.chunk.id} ${i.form.padEnd(10)} ${String(i.tokens).padStart(5)}t  ${i.text.replace(/\s+/g, " ").slice(0, 100)}\n`,
          );
        out(`${r.items.length} items, ${r.tokens} tokens of ${r.candidates} candidates\n`);
        return 0;
      }
      case "stats":
        out(`${JSON.stringify({ file: path, ...memory.stats() }, null, 2)}\n`);
        return 0;
      case "export": {
        const snap = store.snapshot();
        if (scope) snap.chunks = snap.chunks.filter((c) => c.scope === scope);
        out(`${JSON.stringify(snap)}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown memory command "${cmd}"\n\n${MEMORY_HELP}`);
    }
  } finally {
    memory.close();
  }
}

/** The last context a run sent (of --scope, or the newest): one line per item. */
function showLastContext(
  last: ReturnType<typeof import("@hands/memory").lastContextChunks>,
  scope: string | undefined,
  out: (s: string) => void,
): number {
  if (!last) {
    out(
      `no context recorded${scope ? ` for scope ${scope}` : " in this workspace"} yet (one is kept when a run with memory ends${scope ? "" : "; --scope S shows another run's"})\n`,
    );
    return 1;
  }
  const { context: ctx, chunks } = last;
  out(`last context: scope ${ctx.scope}, ${new Date(ctx.time).toISOString()}, ${ctx.mode}\n`);
  out(
    `${"id".padEnd(12)} ${"layer".padEnd(10)} ${"imp.".padEnd(5)} ${"form".padEnd(8)} ${"pointer".padEnd(28)} why\n`,
  );
  for (const item of ctx.items) {
    const c = chunks.get(item.id);
    const pointer = c?.sources.length
      ? `recall ${item.id} (${c.sources.length} originals)`
      : `recall ${item.id}`;
    out(
      `${item.id.padEnd(12)} ${(c?.layer ?? "(gone)").padEnd(10)} ${(c ? c.importance.toFixed(2) : "-").padEnd(5)} ${item.form.padEnd(8)} ${pointer.padEnd(28)} ${item.why}\n`,
    );
  }
  out(`${ctx.items.length} items, ${ctx.tokens} tokens\n`);
  return 0;
}

function allScopes(store: { list(o: { limit: number; order: "newest" }): { scope: string }[] }): string[] {
  return [...new Set(store.list({ limit: 5000, order: "newest" }).map((c) => c.scope))];
}
