// A sandbox runs a command line with `bash -c` (or `sh -c`). To run an argument vector
// (`hands sandbox exec -- printf 'a\nb\n'`) exactly, each argument is quoted so the shell
// hands it to the program unchanged: inside single quotes POSIX shells expand nothing
// (no `$`, backslash, glob or newline handling), and a single quote itself is written as '\''.

/** Characters that mean nothing to a POSIX shell in any position of a word. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument as a shell word that the shell reads back as exactly `arg`. */
export function shellQuote(arg: string): string {
  if (arg.includes("\0")) throw new TypeError("an argument cannot contain a NUL byte");
  if (PLAIN.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** An argument vector as one command line that a POSIX shell runs with exactly these arguments. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}
