// Source outlines for memory's code stand-ins, from the agent's tree-sitter outline library.
// Memory must not depend on the agent, so the CLI hands it this function (MemoryOptions.outline).
import { createHash } from "node:crypto";
import type { OutlineLine } from "@hands/memory";

/** Outlines of recently seen sources: agents read the same file again and again. */
const cache = new Map<string, OutlineLine[] | undefined>();
const CACHE_SIZE = 64;

/** The outline of `source` (a file at `path`), flattened with depths; undefined for unsupported languages. */
export async function outlineForMemory(source: string, path: string): Promise<OutlineLine[] | undefined> {
  const key = `${path}\u0000${createHash("sha1").update(source).digest("base64")}`;
  if (cache.has(key)) return cache.get(key);
  const lines = await outline(source, path);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, lines);
  return lines;
}

async function outline(source: string, path: string): Promise<OutlineLine[] | undefined> {
  const { languageForPath, parseOutline } = await import("@hands/agent");
  const language = languageForPath(path);
  if (!language) return undefined;
  const { symbols } = await parseOutline(source, language);
  const out: OutlineLine[] = [];
  const visit = (list: typeof symbols, depth: number) => {
    for (const s of list) {
      const decorators = s.decorators?.length ? `${s.decorators.join(" ")} ` : "";
      out.push({
        signature: `${decorators}${s.signature}`,
        startLine: s.startLine,
        endLine: s.endLine,
        depth,
      });
      if (s.children) visit(s.children, depth + 1);
    }
  };
  visit(symbols, 0);
  return out;
}
