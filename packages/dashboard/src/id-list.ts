// A request's message ids in a URL: "1-40,43,45-50" (the trace's ranges, written compactly).
// Pure: the browser writes it, the server reads it back.
import type { MessageIdRanges } from "@hands/agent";

export function formatIdList(ranges: MessageIdRanges): string {
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(",");
}

/** The ranges of `text`, or undefined when it is not an id list of at most `maxIds` ids. */
export function parseIdList(text: string, maxIds = 20_000): MessageIdRanges | undefined {
  if (text.length > 100_000 || !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(text)) return undefined;
  const ranges: MessageIdRanges = [];
  let total = 0;
  for (const part of text.split(",")) {
    const [a, b = a] = part.split("-").map(Number) as [number, number?];
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || a < 1 || b < a) return undefined;
    total += b - a + 1;
    if (total > maxIds) return undefined;
    ranges.push([a, b]);
  }
  return ranges;
}
