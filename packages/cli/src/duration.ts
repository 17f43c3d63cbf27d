// Durations on the command line: a bare number in the option's own unit (`--max-age 30`:
// minutes), or a number with a unit (90s, 30m, 2h, 1d). Anything else is a usage error, never
// NaN passed on as "no limit".
import { UsageError } from "./args.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `text` in milliseconds; a bare number counts in `unitMs`. Throws a UsageError naming `flag`. */
export function durationMs(text: string, flag: string, unitMs: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  const ms = m ? Number(m[1]) * (m[2] ? (UNITS[m[2]] as number) : unitMs) : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0 || ms > Number.MAX_SAFE_INTEGER)
    throw new UsageError(
      `${flag} must be a positive duration: a number of ${unitName(unitMs)}, or one with a unit (90s, 30m, 2h, 1d); got "${text}"`,
    );
  return Math.round(ms);
}

function unitName(ms: number): string {
  return ms === 60_000 ? "minutes" : ms === 1000 ? "seconds" : ms === 3_600_000 ? "hours" : `${ms} ms units`;
}
