// A mark beside a trace while a process writes it (<trace>.live: its pid and the process's start
// time), removed when the writer closes. A reader tells a run that is still going — however long
// the model takes to answer — from one whose process died (killed, crashed): the mark is there
// but its process is not. The start time guards against the pid having been reused since.
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";

interface LiveMark {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22); Linux only. */
  startTicks?: number;
  host: string;
  time: number;
}

/** running: a process is writing the trace; gone: one was and died; none: no mark (closed, or an older Hands). */
export type TraceLiveness = "running" | "gone" | "none";

export function liveMarkPath(tracePath: string): string {
  return `${tracePath}.live`;
}

/** State and start time (fields 3 and 22) of /proc/PID/stat, or undefined where there is no /proc. */
function procStat(pid: number | "self"): { state: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) may hold spaces and parentheses: count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? { state: fields[0] ?? "", ticks } : undefined;
  } catch {
    return undefined;
  }
}

let ownTicks: number | undefined | null = null;

export function writeLiveMark(tracePath: string): void {
  // Read once (null: not yet); undefined where /proc has no answer, and not asked again.
  if (ownTicks === null) ownTicks = procStat("self")?.ticks;
  const mark: LiveMark = {
    pid: process.pid,
    ...(ownTicks !== undefined ? { startTicks: ownTicks } : {}),
    host: hostname(),
    time: Date.now(),
  };
  try {
    const fd = openSync(
      liveMarkPath(tracePath),
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    try {
      writeSync(fd, JSON.stringify(mark));
    } finally {
      closeSync(fd);
    }
  } catch {
    // Without the mark the run is shown as unfinished rather than running: never a reason to fail.
  }
}

function readMark(tracePath: string): LiveMark | undefined {
  let fd: number;
  try {
    // O_NONBLOCK and O_NOFOLLOW: a FIFO or symlink planted under the mark's name is not followed.
    fd = openSync(
      liveMarkPath(tracePath),
      constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0),
    );
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const v = JSON.parse(buf.subarray(0, n).toString("utf8")) as Partial<LiveMark>;
    if (!Number.isInteger(v.pid) || (v.pid as number) <= 0) return undefined;
    return v as LiveMark;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Removes the mark if this process wrote it. */
export function removeLiveMark(tracePath: string): void {
  if (readMark(tracePath)?.pid !== process.pid) return;
  try {
    unlinkSync(liveMarkPath(tracePath));
  } catch {
    // Already gone.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether a process is writing the trace at `tracePath` now. */
export function traceLiveness(tracePath: string): TraceLiveness {
  const mark = readMark(tracePath);
  if (!mark) return "none";
  // A process on another machine (a shared data folder) cannot be checked from here.
  if (mark.host !== undefined && mark.host !== hostname()) return "running";
  if (!processAlive(mark.pid)) return "gone";
  const now = procStat(mark.pid);
  // A zombie has died (its parent has not collected it yet); another start time: a reused pid.
  if (now && (now.state === "Z" || now.state === "X")) return "gone";
  if (now && mark.startTicks !== undefined && now.ticks !== mark.startTicks) return "gone";
  return "running";
}
