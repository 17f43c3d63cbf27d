// envd's filesystem service (filesystem.Filesystem) over the sandbox agent. Paths are resolved
// by the agent inside the sandbox (relative ones against /home/user), so a path can only ever
// name what the sandbox itself sees.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AgentEntry, AgentEvent } from "../agent/client.js";
import {
  ConnectError,
  keepaliveMs,
  ServerStream,
  timeoutMs,
  toConnectError,
  writeStreamError,
} from "../connect/protocol.js";
import type { EnvdContext } from "./context.js";

const EVENT_TYPES: Record<string, string> = {
  create: "EVENT_TYPE_CREATE",
  write: "EVENT_TYPE_WRITE",
  remove: "EVENT_TYPE_REMOVE",
  chmod: "EVENT_TYPE_CHMOD",
};

/** The agent's entry as envd's EntryInfo in proto3 JSON (int64 as a string, enums by name). */
export function entryInfo(e: AgentEntry): Record<string, unknown> {
  return {
    name: e.name,
    type: e.type === "dir" ? "FILE_TYPE_DIRECTORY" : "FILE_TYPE_FILE",
    path: e.path,
    size: String(e.size),
    mode: e.mode,
    permissions: e.permissions,
    owner: e.owner,
    group: e.group,
    modifiedTime: new Date(Math.floor(e.mtime / 1e6)).toISOString(),
    ...(e.symlink !== undefined ? { symlinkTarget: e.symlink } : {}),
    ...(e.meta && Object.keys(e.meta).length > 0 ? { metadata: e.meta } : {}),
  };
}

function path(v: unknown, what = "path"): string {
  if (typeof v !== "string" || v === "") throw new ConnectError("invalid_argument", `${what} is required`);
  if (v.length > 4096 || v.includes("\0"))
    throw new ConnectError("invalid_argument", `${what} is not a valid path`);
  return v;
}

/** Watchers made with CreateWatcher, polled with GetWatcherEvents (per sandbox runtime). */
const polled = new WeakMap<object, Map<string, { events: Array<Record<string, unknown>>; wid: string }>>();

/**
 * A watch event in envd's JSON. The entry comes from the agent (the sandbox's user could send
 * anything in its place): one that does not convert is left out, never thrown in the stream.
 */
export function fsEvent(ev: Extract<AgentEvent, { ev: "fs" }>): Record<string, unknown> {
  let entry: Record<string, unknown> | undefined;
  try {
    entry = ev.entry && typeof ev.entry === "object" ? entryInfo(ev.entry) : undefined;
  } catch {
    entry = undefined;
  }
  return {
    name: String(ev.name),
    type: EVENT_TYPES[ev.type] ?? "EVENT_TYPE_UNSPECIFIED",
    ...(entry ? { entry } : {}),
  };
}

export async function unary(
  ctx: EnvdContext,
  method: string,
  msg: Record<string, unknown>,
): Promise<unknown> {
  const agent = ctx.runtime.agent;
  switch (method) {
    case "Stat":
      return { entry: entryInfo(await agent.call<AgentEntry>("stat", { path: path(msg.path) })) };
    case "MakeDir": {
      const e = await agent.call<AgentEntry>("mkdir", { path: path(msg.path) });
      ctx.audit("file", { op: "mkdir", path: e.path });
      return { entry: entryInfo(e) };
    }
    case "Move": {
      const e = await agent.call<AgentEntry>("move", {
        source: path(msg.source, "source"),
        destination: path(msg.destination, "destination"),
      });
      ctx.audit("file", { op: "move", path: String(msg.source), to: e.path });
      return { entry: entryInfo(e) };
    }
    case "ListDir": {
      const depth = msg.depth === undefined ? 1 : Number(msg.depth);
      if (!Number.isInteger(depth) || depth < 0 || depth > 64)
        throw new ConnectError("invalid_argument", "depth must be 0..64");
      const r = await agent.call<{ entries: AgentEntry[] }>("list", {
        path: path(msg.path),
        depth: depth || 1,
      });
      return { entries: r.entries.map(entryInfo) };
    }
    case "Remove":
      await agent.call("remove", { path: path(msg.path) });
      ctx.audit("file", { op: "remove", path: String(msg.path) });
      return {};
    case "CreateWatcher": {
      const events: Array<Record<string, unknown>> = [];
      const wid = await ctx.runtime.watch(path(msg.path), msg.recursive === true, (ev) => {
        if (ev.ev === "fs" && events.length < 10_000) events.push(fsEvent(ev));
      });
      const map = polled.get(ctx.runtime) ?? new Map();
      polled.set(ctx.runtime, map);
      map.set(wid, { events, wid });
      return { watcherId: wid };
    }
    case "GetWatcherEvents": {
      const w = polled.get(ctx.runtime)?.get(String(msg.watcherId));
      if (!w) throw new ConnectError("not_found", `watcher ${String(msg.watcherId)} not found`);
      return { events: w.events.splice(0) };
    }
    case "RemoveWatcher": {
      const id = String(msg.watcherId);
      if (!polled.get(ctx.runtime)?.delete(id))
        throw new ConnectError("not_found", `watcher ${id} not found`);
      ctx.runtime.unwatch(id);
      return {};
    }
    default:
      throw new ConnectError("unimplemented", `filesystem.Filesystem/${method} is not implemented`);
  }
}

export const STREAMING = new Set(["WatchDir"]);

export async function watchDir(
  ctx: EnvdContext,
  msg: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let stream: ServerStream | undefined;
  const pending: AgentEvent[] = [];
  const onEvent = (ev: AgentEvent) => {
    if (!stream) {
      pending.push(ev);
      return;
    }
    if (ev.ev === "fs") stream.send({ filesystem: fsEvent(ev) });
    else if (ev.ev === "fs_end") stream.end(new ConnectError("not_found", ev.err));
  };
  let wid: string;
  try {
    // allowNetworkMounts (envd 0.6.4) asks envd not to refuse NFS/FUSE folders, whose inotify
    // is unreliable; this watch polls, on any filesystem, so it is accepted and changes nothing.
    wid = await ctx.runtime.watch(path(msg.path), msg.recursive === true, onEvent, msg.includeEntry === true);
  } catch (e) {
    writeStreamError(res, toConnectError(e));
    return;
  }
  stream = new ServerStream(res, keepaliveMs(req), { keepalive: {} });
  stream.send({ start: {} });
  for (const ev of pending.splice(0)) onEvent(ev);
  const deadline = timeoutMs(req);
  const timer =
    deadline !== undefined && deadline > 0
      ? setTimeout(
          () => stream?.end(new ConnectError("deadline_exceeded", "the watch's timeout was reached")),
          deadline,
        )
      : undefined;
  await stream.closed;
  if (timer) clearTimeout(timer);
  ctx.runtime.unwatch(wid);
}
