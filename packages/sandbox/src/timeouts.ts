// Time limits shared by every backend (a module of its own: the local backend and the session
// shell's host side both use them, and neither may import the other's module for it).
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Time between SIGTERM and SIGKILL when a command's process group is killed. */
export const KILL_GRACE_MS = 500;
