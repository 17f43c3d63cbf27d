#!/usr/bin/env -S node --max-semi-space-size=2
// Committed launcher, so the `hands` bin exists (and is executable) before the first build.
// The small young generation keeps peak memory flat over long sessions (large request bodies
// are freed at each scavenge instead of piling up) at no measurable cost in speed.
import "../dist/main.js";
