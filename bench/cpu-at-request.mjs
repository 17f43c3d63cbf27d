// Preloaded into the measured `hands` process (node --import) by `npm run bench:startup -- --cpu`:
// when the first HTTP request leaves, writes the process's CPU time so far (user + system, all
// threads, ms) to $HANDS_BENCH_CPU_AT_REQUEST. Steadier than wall time on a shared machine,
// where waiting for a core counts in the wall time but not here. Keeps measurement code out of
// the product.

import { writeFileSync } from "node:fs";
import http from "node:http";
import { syncBuiltinESMExports } from "node:module";

const file = process.env.HANDS_BENCH_CPU_AT_REQUEST;
if (file) {
  const request = http.request;
  let written = false;
  http.request = function firstRequestProbe(...args) {
    if (!written) {
      written = true;
      const { user, system } = process.cpuUsage();
      writeFileSync(file, String((user + system) / 1000));
    }
    return request.apply(this, args);
  };
  // ES imports of node:http (the bundle's) see the wrapped function too.
  syncBuiltinESMExports();
}
