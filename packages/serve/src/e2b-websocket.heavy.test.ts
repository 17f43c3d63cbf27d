// WebSockets through getHost on Docker and gVisor (test-support-ws.ts; bubblewrap's in the
// default suite, e2b-websocket.test.ts).
import { after } from "node:test";
import { dockerSkip } from "./test-support.js";
import { websocketSuite } from "./test-support-ws.js";

after(() => {
  // dockerd may keep a finished session's stream open (see e2b-docker.test.ts).
  setTimeout(() => process.exit(), 2000).unref();
});

websocketSuite("docker", await dockerSkip());
websocketSuite("gvisor", await dockerSkip("runsc"));
