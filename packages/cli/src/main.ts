// `hands [options] "<task>"`: runs one task to the end. Never prints a stack trace for
// expected problems (configuration, model errors): a clear message and an exit code instead.
import { dataDir, secureDataDir } from "@hands/sdk/root";
import { ignoreClosedStdout } from "./closed-stdout.js";
import { commandNamed, helpAskedFor } from "./commands.js";
import { runCli } from "./run.js";
import { tuneV8AfterFirstRequest } from "./v8-tuning.js";

const argv = process.argv.slice(2);
// For agent runs: the long-lived services (`hands serve`, `hands dashboard`), which make client
// requests of their own, keep V8's defaults.
if (argv[0] !== "serve" && argv[0] !== "dashboard") tuneV8AfterFirstRequest();

async function main(): Promise<number> {
  // A reader that goes away (`hands memory export | head`) ends no command with a stack trace.
  // Not for a task run, which sets up stdout only when it writes (it takes ~2 ms).
  if (commandNamed(argv[0])) ignoreClosedStdout(process.stdout);
  // `hands COMMAND … --help` prints that command's help and does nothing else (not even the
  // data folder below).
  const help = argv[0] === undefined ? undefined : await helpAskedFor(argv[0], argv.slice(1));
  if (help !== undefined) {
    process.stdout.write(`${help}\n`);
    return 0;
  }
  // Before anything writes there: the data folder is the user's alone (0700, files 0600).
  try {
    const { skipped } = secureDataDir(dataDir());
    if (skipped) process.stderr.write(`hands: warning: the data folder is not made private: ${skipped}\n`);
  } catch (err) {
    process.stderr.write(`hands: warning: cannot make the data folder private: ${(err as Error).message}\n`);
  }
  return runCli(argv);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`hands: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
