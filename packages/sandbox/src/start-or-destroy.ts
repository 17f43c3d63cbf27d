// A backend whose start can fail half-way (a container made, a remote sandbox created) must not
// leave that half behind: the caller gets either a started sandbox or the error, nothing else.

/** Runs `start`; on failure destroys `sandbox` (best effort) and rethrows. */
export async function startOrDestroy<T extends { destroy(): Promise<void> }>(
  sandbox: T,
  start: () => Promise<void>,
): Promise<T> {
  try {
    await start();
  } catch (e) {
    await sandbox.destroy().catch(() => {});
    throw e;
  }
  return sandbox;
}
