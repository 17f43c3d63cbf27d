// The repository map of a session's first request (the agent's repoMapForTask), made once per
// session and kept for its later requests, so the system prompt stays the same from request to
// request (a provider's prompt cache keeps working). Saved under the data folder per workspace.
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
