// A pause that keeps memory and processes on bubblewrap (the cgroup freezer;
// test-support-pause.ts); Docker and gVisor (the Engine's pause) in e2b-pause-memory.heavy.test.ts.
import { after } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { pauseMemorySuite } from "./test-support-pause.js";

after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

const bwrap = checkBwrap();
pauseMemorySuite("base", bwrap.ok ? false : bwrap.reason);
