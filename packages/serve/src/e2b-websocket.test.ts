// WebSockets through getHost on bubblewrap (test-support-ws.ts); Docker and gVisor in
// e2b-websocket.heavy.test.ts (their sandboxes start slower: ~40 s together under load).
import { after } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { websocketSuite } from "./test-support-ws.js";

after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

const bwrap = checkBwrap();
websocketSuite("base", bwrap.ok ? false : bwrap.reason);
