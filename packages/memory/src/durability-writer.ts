// Child process for the durability test and bench: adds chunks forever, printing each id
// once its transaction has committed. The parent kills it with SIGKILL.
import { Memory } from "./memory.js";

const path = process.argv[2];
if (!path) throw new Error("usage: durability-writer FILE");
const memory = new Memory({
  path,
  scope: "durability",
  policy: { shortTermCapacity: 50, workingBudget: 2000 },
});
for (let i = 0; ; i++) {
  const c = await memory.add({ type: "tool_result", content: `payload ${i} ${"data ".repeat(i % 50)}` });
  process.stdout.write(`${c.id}\n`);
}
