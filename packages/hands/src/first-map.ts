// The repository map for a conversation's first task (the agent's repoMapForTask; its index is
// saved under the data folder per workspace). It is not part of the system prompt: the agent
// sends it before the task, in the task's user message, until a tool has shown the model the
// code (the agent's `orientation`). Every request repeats its whole prefix, so a map kept in the
// system prompt was ~2 KB on every request of the session, long after the model had read the
// files it pointed to; outside the system prompt it never changes the cached prefix (system
// prompt and tools, the same for every session), and dropping it costs a cache miss only on the
// task message that followed it.
import { createHash } from "node:crypto";
import { join } from "node:path";

/** Where the index of `workspace` is saved between sessions. */
export function repoMapCacheFile(dataDir: string, workspace: string): string {
  const id = createHash("sha256").update(workspace).digest("hex").slice(0, 24);
  return join(dataDir, "repo-map", `${id}.json`);
}

/** The map for the first task, or undefined (off, nothing found, too slow, or an error). */
export async function firstRequestMap(
  workspace: string,
  dataDir: string,
  task: string,
  tokens: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (tokens <= 0) return undefined;
  try {
    const { repoMapForTask } = await import("@hands/agent");
    const map = await repoMapForTask({
      workspace,
      task,
      tokens,
      cacheFile: repoMapCacheFile(dataDir, workspace),
      ...(signal ? { signal } : {}),
    });
    return map?.text;
  } catch {
    return undefined; // a map is a help, never a reason for a request to fail
  }
}
