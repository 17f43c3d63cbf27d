// A pause that keeps memory and processes on Docker and gVisor (the Engine's pause, a freezer
// under runc and runsc alike), and the limits on a frozen pause on every backend
// (test-support-pause.ts). Bubblewrap's pause itself: e2b-pause-memory.test.ts.
import { after } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { dockerSkip } from "./test-support.js";
import { frozenLimitSuite, pauseMemorySuite } from "./test-support-pause.js";

after(() => {
  // dockerd may keep a finished session's stream open (see e2b-docker.test.ts).
  setTimeout(() => process.exit(), 2000).unref();
});

const bwrap = checkBwrap();
frozenLimitSuite("base", bwrap.ok ? false : bwrap.reason);
for (const [template, skip] of [
  ["docker", await dockerSkip()],
  ["gvisor", await dockerSkip("runsc")],
] as const) {
  pauseMemorySuite(template, skip);
  frozenLimitSuite(template, skip);
}
