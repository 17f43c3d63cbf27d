// `hands [options] "<task>"`: runs one task to the end. Never prints a stack trace for
// expected problems (configuration, model errors): a clear message and an exit code instead.
import { dataDir, secureDataDir } from "@hands/sdk/root";
import { runCli } from "./run.js";
import { tuneV8AfterFirstRequest } from "./v8-tuning.js";

const argv = process.argv.slice(2);
// For agent runs: the long-lived services (`hands serve`, `hands dashboard`), which make client
// requests of their own, keep V8's defaults.
if (argv[0] !== "serve" && argv[0] !== "dashboard") tuneV8AfterFirstRequest();
// Before anything writes there: the data folder is the user's alone (0700, files 0600).
try {
  const { skipped } = secureDataDir(dataDir());
  if (skipped) process.stderr.write(`hands: warning: the data folder is not made private: ${skipped}\n`);
} catch (err) {
  process.stderr.write(`hands: warning: cannot make the data folder private: ${(err as Error).message}\n`);
}
// `hands sandbox …`, `hands serve …` and `hands dashboard …` are loaded only when used.
const main =
  argv[0] === "sandbox"
    ? import("./sandbox-command.js").then((m) => m.runSandboxCommand(argv.slice(1)))
    : argv[0] === "serve"
      ? import("@hands/serve").then((m) => m.runServeCommand(argv.slice(1)))
      : argv[0] === "dashboard"
        ? import("@hands/dashboard").then((m) =>
            m.runDashboardCommand(argv.slice(1), { dataDir: dataDir() }).catch((e: unknown) => {
              if (!(e instanceof m.DashboardUsageError)) throw e;
              process.stderr.write(`hands dashboard: ${e.message}\n`);
              return 2;
            }),
          )
        : runCli(argv);
main.then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`hands: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
