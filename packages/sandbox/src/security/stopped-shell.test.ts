// Attack: a command stops its own session shell (SIGSTOP of `$$`): the fast case of
// stopped-shell-suite.ts; the others (a leftover stops the idle shell, SIGKILL, a stopper in a
// loop) are in stopped-shell.heavy.test.ts.
import { stoppedShellSuite } from "./stopped-shell-suite.js";

stoppedShellSuite((name) => name.startsWith("SIGSTOP of the shell by the command itself"));
