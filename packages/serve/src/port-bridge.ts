// Traffic to a TCP port a process inside a sandbox listens on (getHost). The sandbox has a
// network namespace of its own (bubblewrap's, Docker's `--network none`, gVisor's), so the host
// cannot connect to the port; the sandbox's agent can. For each connection the host asks the
// agent (its control channel) to connect to 127.0.0.1:PORT inside and to pass the bytes to the
// bridge socket — a Unix socket the host listens on in the agent's folder, which the sandbox
// user cannot write (the host never connects to a path the sandbox controls). The agent names
// the connection by a random key the host gave it; anything else that connects is cut off.
import { randomBytes } from "node:crypto";
import { chmodSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { type AgentClient, AgentError } from "./agent/client.js";

/** Time for the agent's connection to arrive once it was asked for one. */
const BRIDGE_TIMEOUT_MS = 10_000;
/** Connections that have not named their key yet (a sandbox could open many). */
const MAX_UNNAMED = 64;
const MAX_HELLO_BYTES = 256;

export class PortClosedError extends Error {}

interface Waiting {
  resolve: (s: Socket) => void;
  reject: (e: Error) => void;
}

export class PortBridge {
  private readonly waiting = new Map<string, Waiting>();
  private unnamed = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    server.on("connection", (s) => this.accept(s));
  }

  /** Listens at `path` (in a folder only the service may write; the sandbox user may connect). */
  static async listen(path: string): Promise<PortBridge> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o777);
    return new PortBridge(server);
  }

  private accept(s: Socket): void {
    this.sockets.add(s);
    s.once("close", () => this.sockets.delete(s));
    s.on("error", () => {});
    if (this.unnamed >= MAX_UNNAMED) {
      s.destroy();
      return;
    }
    this.unnamed++;
    let named = false;
    const done = () => {
      if (named) return;
      named = true;
      this.unnamed--;
    };
    const timer = setTimeout(() => {
      done();
      s.destroy();
    }, BRIDGE_TIMEOUT_MS);
    timer.unref();
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (buf.length > MAX_HELLO_BYTES) s.destroy();
        return;
      }
      s.off("data", onData);
      s.pause();
      clearTimeout(timer);
      done();
      let key: unknown;
      try {
        key = (JSON.parse(buf.subarray(0, nl).toString("utf8")) as { bridge?: unknown }).bridge;
      } catch {}
      const w = typeof key === "string" ? this.waiting.get(key) : undefined;
      if (!w) {
        s.destroy();
        return;
      }
      this.waiting.delete(key as string);
      const rest = buf.subarray(nl + 1);
      if (rest.length > 0) s.unshift(rest);
      w.resolve(s);
    };
    s.on("data", onData);
    s.once("close", () => {
      clearTimeout(timer);
      done();
    });
  }

  /** A connection to `port` inside the sandbox; PortClosedError when nothing listens there. */
  async connect(agent: AgentClient, port: number): Promise<Socket> {
    const key = randomBytes(16).toString("hex");
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<Socket>((resolve, reject) => {
      this.waiting.set(key, { resolve, reject });
      timer = setTimeout(
        () => reject(new Error(`the sandbox did not connect port ${port} in time`)),
        BRIDGE_TIMEOUT_MS,
      );
    });
    try {
      await agent.call("port", { port, key }).catch((e: Error) => {
        if (e instanceof AgentError && e.code === "port_closed") throw new PortClosedError(e.message);
        throw e;
      });
      return await arrived;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(key);
    }
  }

  close(): void {
    for (const w of this.waiting.values()) w.reject(new Error("the sandbox stopped"));
    this.waiting.clear();
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}
