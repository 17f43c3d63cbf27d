// Preloaded into the measured `hands` process (node --import): on exit, writes its peak
// RSS in bytes to $HANDS_BENCH_RSS_FILE. Keeps measurement code out of the product.
import { writeFileSync } from "node:fs";

const file = process.env.HANDS_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
