// Facts about a workspace that stay current across tasks: one live fact per key. A fact
// learned again unchanged is not stored twice; a changed one is stored and the old one
// archived (kept, with the reason, but no longer recalled).
import type { Memory } from "./memory.js";
import type { Chunk, NewChunk } from "./types.js";

export interface WorkspaceFact {
  /** What the fact is about ("package-manager", "test-command"…): a newer fact replaces an older one. */
  key: string;
  text: string;
  /** Label kept in the chunk's meta (default "repo_fact"). */
  kind?: string;
}

export const LIVE_LAYERS = ["working", "short_term", "long_term"] as const;

/** Stores `facts` in the workspace scope; returns the chunks added (known facts are skipped). */
export async function rememberFacts(
  memory: Memory,
  scope: string,
  facts: WorkspaceFact[],
  base: Omit<NewChunk, "content" | "type">,
): Promise<Chunk[]> {
  if (facts.length === 0) return [];
  // The newest few hundred are enough to find a key's current fact without a full scan.
  const byKey = new Map<string, Chunk[]>();
  for (const c of memory.store.list({
    scope,
    types: ["fact"],
    layers: [...LIVE_LAYERS],
    order: "newest",
    limit: 500,
  })) {
    const key = c.meta.key;
    if (key) byKey.set(key, [...(byKey.get(key) ?? []), c]);
  }
  const out: Chunk[] = [];
  for (const f of facts) {
    const current = byKey.get(f.key) ?? [];
    if (current.some((c) => c.content === f.text)) continue;
    for (const old of current) memory.archive(old.id, `superseded: ${f.text.slice(0, 100)}`);
    const chunk = await memory.add({
      ...base,
      type: "fact",
      content: f.text,
      meta: { kind: f.kind ?? "repo_fact", key: f.key },
    });
    byKey.set(f.key, [chunk]);
    out.push(chunk);
  }
  return out;
}
