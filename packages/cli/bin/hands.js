#!/bin/sh
//bin/sh -c :; exec node "$0" "$@"
// Both a shell script and an ES module. Run as a program (`hands`, or the symlink npm puts in
// node_modules/.bin) the shell runs line 2 — a no-op, then `exec node` — so node can be given
// flags here without `env -S` (which busybox, older coreutils and some BSDs lack) and without
// starting node twice; for node the same line is a comment (`node bin/hands.js` works too).
// It passes none: any V8 flag makes node compile its built-in modules without their code cache
// (~15 ms at each start); the young generation is kept small from inside (young-generation.ts).
import "../bundle/hands.js";
