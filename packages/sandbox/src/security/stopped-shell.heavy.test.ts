// Attack: a command or what it left stops or kills its session shell (stopped-shell-suite.ts):
// every case but the fast one, which stopped-shell.test.ts runs in the default suite.
import { stoppedShellSuite } from "./stopped-shell-suite.js";

stoppedShellSuite((name) => !name.startsWith("SIGSTOP of the shell by the command itself"));
