// `hands [options] "<task>"`: runs one task to the end. Never prints a stack trace for
// expected problems (configuration, model errors): a clear message and an exit code instead.
import { runCli } from "./run.js";

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`hands: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
