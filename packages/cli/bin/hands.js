#!/usr/bin/env node
// Committed launcher, so the `hands` bin exists (and is executable) before the first build.
import "../dist/main.js";
