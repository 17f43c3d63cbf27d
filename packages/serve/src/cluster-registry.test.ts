// The node registry on a real PostgreSQL: a silent node is declared dead by the others (and
// what is being forwarded to it is cut), but an outage of the database itself — every node
// silent at once — declares nobody dead once it is over.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Cluster } from "./cluster.js";
import type { Store } from "./store.js";
import { PostgresStore } from "./store-postgres.js";
import { testDatabase } from "./test-support.js";

/** The real store, whose every call fails while `down` (the database unreachable from here). */
function cutOff(store: Store): { store: Store; down: boolean } {
  const box = { down: false, store };
  box.store = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) =>
        box.down ? Promise.reject(new Error("connect ECONNREFUSED")) : v.apply(target, args);
    },
  });
  return box;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DEAD_AFTER_MS = 400;

describe("node registry (PostgreSQL)", { timeout: 30_000 }, () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  const stores: PostgresStore[] = [];
  before(async () => {
    db = await testDatabase();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
  });

  async function node(name: string) {
    const real = await PostgresStore.connect(db.url);
    stores.push(real);
    const box = cutOff(real);
    const dead: string[] = [];
    const cluster = new Cluster({
      store: box.store,
      node: name,
      apiUrl: `http://127.0.0.1:9/${name}`,
      sandboxUrl: `http://127.0.0.1:9/${name}`,
      heartbeatMs: 50,
      deadAfterMs: DEAD_AFTER_MS,
      onDead: (d) => dead.push(...d.map((x) => x.node)),
    });
    await cluster.join();
    return { cluster, box, dead, real };
  }

  it("declares a silent node dead and cuts what is forwarded to it", async () => {
    const a = await node("a1");
    const b = await node("b1");
    let cut: Error | undefined;
    a.cluster.track("b1", (why) => {
      cut = why;
    });
    await sleep(DEAD_AFTER_MS + 200); // a has now been connected for a whole timeout
    b.box.down = true;
    const t = Date.now();
    while (!a.dead.includes("b1") && Date.now() - t < 5000) await sleep(25);
    assert.deepEqual(a.dead, ["b1"]);
    assert.ok(Date.now() - t >= DEAD_AFTER_MS - 100, "not before its timeout");
    assert.equal((await a.real.nodes()).find((n) => n.name === "b1")?.state, "dead");
    await sleep(100);
    assert.match(String(cut?.message), /node 'b1' is dead/);
    b.box.down = false;
    await b.cluster.leave();
    await a.cluster.leave();
  });

  it("declares nobody dead after an outage of the database", async () => {
    const a = await node("a2");
    const b = await node("b2");
    await sleep(DEAD_AFTER_MS + 200);
    a.box.down = true;
    b.box.down = true;
    await sleep(DEAD_AFTER_MS * 3);
    a.box.down = false;
    b.box.down = false;
    await sleep(DEAD_AFTER_MS * 3);
    assert.deepEqual([...a.dead, ...b.dead], []);
    const states = (await a.real.nodes()).filter((n) => n.name.endsWith("2")).map((n) => [n.name, n.state]);
    assert.deepEqual(states, [
      ["a2", "up"],
      ["b2", "up"],
    ]);
    await a.cluster.leave();
    await b.cluster.leave();
  });
});
