// Reading a program's options from its arguments: `--name=V`, `--name V`, `-x V`, `-xV`,
// bundled short flags, operands after the options.

/** The value of `--name=V` / `--name V` / `-x V` / `-xV` at args[i], and how many args it took. */
export function valueAt(
  args: string[],
  i: number,
  short: string[],
  long: string[],
): [string, number] | undefined {
  const a = args[i]!;
  for (const l of long) {
    if (a === `--${l}`) return args[i + 1] !== undefined ? [args[i + 1]!, 2] : undefined;
    if (a.startsWith(`--${l}=`)) return [a.slice(l.length + 3), 1];
  }
  for (const s of short) {
    if (a === `-${s}`) return args[i + 1] !== undefined ? [args[i + 1]!, 2] : undefined;
    if (a.startsWith(`-${s}`) && a.length > s.length + 1 && !a.startsWith("--"))
      return [a.slice(s.length + 1), 1];
  }
  return undefined;
}

/** Operands: args that are not options, skipping the values of the options listed. */
export function operandsOf(args: string[], withValue: string[] = [], longWithValue: string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      if (!a.includes("=") && longWithValue.includes(a.slice(2))) i++;
      continue;
    }
    if (a.startsWith("-") && a !== "-") {
      const last = a[a.length - 1]!;
      if (withValue.includes(last) && a.length === 2) i++;
      else if (a.length > 2 && withValue.includes(a[1]!)) {
        /* value attached */
      } else if (withValue.includes(last)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

export function flag(args: string[], letters: string, long: string[] = []): boolean {
  for (const a of args) {
    if (a === "--") return false;
    if (a.startsWith("--")) {
      if (long.includes(a.slice(2).split("=")[0]!)) return true;
    } else if (/^-[a-zA-Z0-9]+$/.test(a) && [...a.slice(1)].some((c) => letters.includes(c))) return true;
  }
  return false;
}
