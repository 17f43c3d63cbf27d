// V8 settings for the CLI's process, set once the first request has left. The young generation
// stays at the size start-up left it, so peak memory stays flat over long sessions (large request
// bodies are freed at each scavenge instead of piling up in a young generation grown to its 16 MB
// semi-spaces), and tier-up waits longer (INTERRUPT_BUDGET). Set from inside, not as node's
// --max-semi-space-size: any V8 flag on node's command line makes every built-in module compile
// without node's code cache, ~15 ms more at each start. A built-in loaded after the flags change
// also compiles without it, so what reading an answer loads (node's fetch Response, from its
// bundled undici) is loaded first, while the model answers.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import { setFlagsFromString } from "node:v8";

/**
 * V8's budget of work between a function's tier-up checks, 8× Node 20's default (66 KB): in a
 * CLI run (seconds to minutes), code that has run a few hundred times is not yet worth
 * TurboFan's compile time (measured: ~0.45 ms CPU a step less on `npm run bench`'s 200-step run,
 * most of it on V8's compile threads; 4× and 16× measured close, 32× less). Code that stays hot
 * is still optimised, a little later.
 */
const INTERRUPT_BUDGET = 8 * 67_584;

/** Published by node:http for every client request it creates (https too). */
const REQUEST_START = "http.client.request.start";

export function tuneV8AfterFirstRequest(): void {
  const onStart = (message: unknown) => {
    unsubscribe(REQUEST_START, onStart);
    (message as { request: ClientRequest }).request.once("finish", setFlags);
  };
  subscribe(REQUEST_START, onStart);
}

function setFlags(): void {
  void globalThis.Response;
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}
