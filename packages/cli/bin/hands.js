#!/bin/sh
//bin/sh -c :; exec node --max-semi-space-size=2 "$0" "$@"
// Both a shell script and an ES module. Run as a program (`hands`, or the symlink npm puts in
// node_modules/.bin) the shell runs line 2 — a no-op, then `exec node` with node's flag — so
// the flag applies without `env -S` (which busybox, older coreutils and some BSDs lack) and
// without starting node twice; for node the same line is a comment (`node bin/hands.js` works
// too, without the flag). The small young generation keeps peak memory flat over long sessions
// (large request bodies are freed at each scavenge instead of piling up) at no cost in speed.
import "../bundle/hands.js";
