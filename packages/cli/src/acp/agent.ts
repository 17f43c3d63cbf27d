// `hands acp`: Hands as an Agent Client Protocol agent, for editors (Zed, JetBrains, Neovim…).
// A front end like the interactive CLI: each ACP session is a composition-root session
// (openSession: trust, sandbox, policy, approvals, memory, session file), its events become
// session updates, its approval questions permission requests. Nothing here wires a session.
import { realpath } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import {
  type AgentApp,
  type AgentContext,
  agent,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionModeState,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import {
  type AgentEvent,
  APPROVAL_MODES,
  type ApprovalMode,
  type ApprovalPrompt,
  newSessionId,
  type RunResult,
  SessionStore,
  type UserAnswer,
} from "@hands/agent";
import { isInside } from "@hands/sandbox/base";
import { dataDir, type HandsSession, openSession, realFolder, SettingsError } from "@hands/sdk/root";
import type { CliArgs } from "../args.js";
import { cliVersion } from "../cli-version.js";
import { acpEditorAccess, type EditorTerminals } from "./editor-access.js";
import { answerOf, permissionRequest } from "./permission.js";
import { promptText } from "./prompt-text.js";
import { replayUpdates } from "./replay.js";
import { UpdateMapper } from "./updates.js";

export interface AcpAgentOptions {
  /** Settings from the command line (`hands acp --model …`): they win over env and config. */
  flags: CliArgs;
  env: NodeJS.ProcessEnv;
  /** Where notices go (stderr: stdout is the protocol). */
  log: (text: string) => void;
  /** Where run_command runs: Hands' sandbox (the default), or the editor's terminal when it offers one. */
  terminal?: "sandbox" | "editor";
}

const MODES: SessionModeState["availableModes"] = [
  { id: "ask", name: "Ask", description: "Every write and command asks for your permission" },
  {
    id: "auto",
    name: "Auto",
    description: "Writes and commands run; the command policy still refuses or asks",
  },
  { id: "read-only", name: "Read-only", description: "Nothing is written or run" },
];

const STOP: Record<RunResult["status"], StopReason | undefined> = {
  done: "end_turn",
  aborted: "cancelled",
  max_steps: "max_turn_requests",
  token_budget: "max_tokens",
  error: undefined,
};

/** JSON-RPC "resource not found" (ACP uses it for an unknown session). */
const NOT_FOUND = -32002;

interface Live {
  session: HandsSession;
  /** The running prompt turn's abort, while one runs. */
  running: AbortController | undefined;
  /** Calls started and not ended: a permission request names the call it is about. */
  started: { callId: string; name: string; args: unknown }[];
  /** Updates not yet written, and the loop writing them (a prompt answers once they are out). */
  queue: SessionUpdate[];
  /** Warnings from opening the session, sent as notices with the first prompt's updates. */
  warnings: string[];
  flushing: Promise<void> | undefined;
  /** The editor's terminals: shown in their tool calls, kept ones released on close. */
  terminals: EditorTerminals;
  /** The terminal each call's command ran in (its final update shows it too). */
  terminalOf: Map<string, string>;
}

/** The ACP agent app: one per connection (each holds its own sessions). */
export function handsAcpAgent(options: AcpAgentOptions): { app: AgentApp; closeAll(): Promise<void> } {
  const sessions = new Map<string, Live>();
  let client: AgentContext | undefined;
  let caps: ClientCapabilities = {};
  const data = dataDir(options.env);

  // Updates go out one at a time, in order; text that streams in while one is being written
  // joins the queued chunk of its kind (one update, not hundreds, when the model outpaces the pipe).
  const send = (live: Live, update: SessionUpdate) => {
    const last = live.queue.at(-1);
    if (last && mergeable(last, update)) last.content.text += (update as TextChunk).content.text;
    else live.queue.push(update);
    live.flushing ??= flush(live);
  };
  const flush = async (live: Live) => {
    for (let u = live.queue.shift(); u; u = live.queue.shift())
      await client
        ?.notify(methods.client.session.update, { sessionId: live.session.id, update: u })
        .catch(() => {});
    live.flushing = undefined;
  };
  const sent = async (live: Live) => {
    while (live.flushing) await live.flushing;
  };

  const ask =
    (holder: { live?: Live }) =>
    async (p: ApprovalPrompt): Promise<UserAnswer> => {
      const live = holder.live;
      if (!live || !client) return { answer: "no", reason: "no editor to ask" };
      const same = JSON.stringify(p.args);
      const call =
        live.started.findLast((c) => c.name === p.name && JSON.stringify(c.args) === same) ??
        live.started.findLast((c) => c.name === p.name);
      const buffer = await bufferOf(live, p);
      const req = permissionRequest(live.session.id, call?.callId ?? `approval-${Date.now()}`, p, buffer);
      await sent(live);
      try {
        const r = await client.request(methods.client.session.requestPermission, req, {
          cancellationSignal: p.signal,
        });
        return answerOf(r, req.options);
      } catch (e) {
        return { answer: "no", reason: `the editor did not answer (${(e as Error).message})` };
      }
    };

  /** The editor's buffer of a write's target, for its permission diff: only a file inside the workspace. */
  const bufferOf = async (live: Live, p: ApprovalPrompt): Promise<string | undefined> => {
    const abs = p.kind === "write" ? p.preview?.abs : undefined;
    if (!abs || !caps.fs?.readTextFile || !client) return undefined;
    try {
      const real = await realpath(abs);
      if (!isInside(live.session.workspace, real)) return undefined;
      const r = await client.request(
        methods.client.fs.readTextFile,
        { sessionId: live.session.id, path: real },
        { cancellationSignal: p.signal },
      );
      return r.content;
    } catch {
      return undefined;
    }
  };

  async function open(cwd: string, mcpServers: McpServer[] | undefined, resume?: string): Promise<Live> {
    if (!isAbsolute(cwd))
      throw RequestError.invalidParams(undefined, `cwd must be an absolute path, got ${cwd}`);
    const holder: { live?: Live } = {};
    const warnings: string[] = [];
    const servers = mcpServers?.length ? { mcpServers: mcpConfig(mcpServers) } : {};
    // The id is chosen first: the editor's file and terminal requests name the session.
    const id = resume ?? newSessionId();
    const terminalOf = new Map<string, string>();
    const terminals: EditorTerminals = {
      kept: [],
      show: (callId, terminalId) => {
        terminalOf.set(callId, terminalId);
        const live = holder.live;
        if (live)
          send(live, {
            sessionUpdate: "tool_call_update",
            toolCallId: callId,
            content: [{ type: "terminal", terminalId }],
          });
      },
    };
    const warn = (text: string) => {
      options.log(`hands: warning: ${text}\n`);
      if (caps.session?.notices) warnings.push(text);
    };
    const wantsTerminal = options.terminal === "editor";
    if (wantsTerminal && !caps.terminal)
      warn("--terminal editor: this editor offers no terminal; commands run in Hands' sandbox");
    else if (wantsTerminal)
      warn("commands run in the editor's terminal (--terminal editor): unisolated, as you, on your machine");
    const editor = client && acpEditorAccess(client, id, cwd, caps, wantsTerminal ? terminals : undefined);
    let session: HandsSession;
    try {
      session = await openSession({
        workspace: cwd,
        flags: { ...options.flags, ...servers },
        env: options.env,
        approvalDefault: "ask",
        askUser: ask(holder),
        // The todo tool (its checklist reaches the editor as plan updates, from its tool_end);
        // --plan's execution brings its own.
        ...(options.flags.plan ? {} : { onTodos: () => {} }),
        report: (level, text) => {
          options.log(`${text.trimEnd()}\n`);
          // Warnings (an untrusted folder's ignored settings, a sandbox that does not isolate)
          // reach the editor too, as notices, when it shows them.
          if (level === "warning" && caps.session?.notices)
            warnings.push(text.trim().replace(/^hands: warning: /, ""));
        },
        save: true,
        ...(editor ? { editor } : {}),
        ...(resume ? { resume } : { id }),
      });
    } catch (e) {
      if (e instanceof SettingsError && resume && /no session/.test(e.message))
        throw new RequestError(NOT_FOUND, e.message);
      if (e instanceof SettingsError) throw RequestError.invalidParams(undefined, e.message);
      throw new RequestError(-32603, (e as Error).message);
    }
    const live: Live = {
      session,
      running: undefined,
      started: [],
      queue: [],
      flushing: undefined,
      warnings,
      terminals,
      terminalOf,
    };
    holder.live = live;
    return live;
  }

  /** Closes a session and releases the terminals it kept. */
  const close = async (live: Live) => {
    await Promise.all(live.terminals.kept.splice(0).map((t) => t.release().catch(() => {})));
    await live.session.close();
  };

  const liveSession = (id: string): Live => {
    const live = sessions.get(id);
    if (!live)
      throw new RequestError(
        NOT_FOUND,
        `no session ${id} on this connection (session/new or session/load first)`,
      );
    return live;
  };

  const modes = (s: HandsSession): SessionModeState => ({ currentModeId: s.mode, availableModes: MODES });

  const app = agent({ name: "hands" })
    .onConnect((conn) => {
      client = conn.client;
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      caps = params.clientCapabilities ?? {};
      return {
        protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {} },
        },
        agentInfo: { name: "hands", title: "Hands", version: cliVersion() },
        authMethods: [],
      };
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      const live = await open(params.cwd, params.mcpServers);
      sessions.set(live.session.id, live);
      return { sessionId: live.session.id, modes: modes(live.session) };
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      const old = sessions.get(params.sessionId);
      if (old?.running) throw RequestError.invalidRequest(undefined, "that session has a prompt running");
      if (old) {
        sessions.delete(params.sessionId);
        await close(old);
      }
      const live = await open(params.cwd, params.mcpServers, params.sessionId);
      const saved = live.session.writer?.meta.workspace;
      if (saved && saved !== live.session.workspace) {
        await live.session.close();
        throw RequestError.invalidParams(
          undefined,
          `session ${params.sessionId} belongs to ${saved}, not ${params.cwd}`,
        );
      }
      sessions.set(live.session.id, live);
      // The conversation is replayed before the answer, as the protocol asks.
      for (const update of replayUpdates(live.session.history)) send(live, update);
      await sent(live);
      return { modes: modes(live.session) };
    })
    .onRequest(methods.agent.session.list, ({ params }) => {
      const store = new SessionStore(join(data, "sessions"));
      let cwd: string | undefined;
      if (params.cwd) {
        try {
          cwd = realFolder(params.cwd, "cwd");
        } catch {
          return { sessions: [] };
        }
      }
      return {
        sessions: store
          .list()
          .filter((s) => cwd === undefined || s.workspace === cwd)
          .slice(0, 200)
          .map((s) => ({
            sessionId: s.id,
            cwd: s.workspace,
            title: s.firstRequest.slice(0, 120),
            updatedAt: new Date(s.updated).toISOString(),
          })),
      };
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const live = liveSession(params.sessionId);
      if (!(APPROVAL_MODES as string[]).includes(params.modeId))
        throw RequestError.invalidParams(
          undefined,
          `unknown mode ${params.modeId} (${APPROVAL_MODES.join(", ")})`,
        );
      live.session.mode = params.modeId as ApprovalMode;
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => {
      const live = liveSession(params.sessionId);
      if (live.running)
        throw RequestError.invalidRequest(
          undefined,
          "a prompt is already running in this session: cancel it or wait",
        );
      const controller = new AbortController();
      live.running = controller;
      const stop = () => controller.abort();
      signal.addEventListener("abort", stop);
      try {
        const task = await promptText(params.prompt as ContentBlock[], {
          workspace: live.session.workspace,
          ...(caps.fs?.readTextFile && client
            ? { readThroughEditor: editorReader(client, live.session.id) }
            : {}),
        });
        if (!task) throw RequestError.invalidParams(undefined, "the prompt is empty");
        const mapper = new UpdateMapper(live.session.workspace);
        for (const w of live.warnings.splice(0))
          send(live, {
            sessionUpdate: "notice",
            severity: "warning",
            title: w.split("\n")[0]!.slice(0, 200),
            description: w,
          });
        const onEvent = (e: AgentEvent) => {
          if (e.type === "tool_start") live.started.push({ callId: e.callId, name: e.name, args: e.args });
          if (e.type === "tool_end") live.started = live.started.filter((c) => c.callId !== e.callId);
          for (const u of mapper.map(e)) send(live, withTerminal(u, live.terminalOf));
        };
        const run = { signal: controller.signal, onEvent };
        const result = options.flags.plan
          ? await (await import("../plan-run.js")).runWithPlan(live.session, task, run, () => {})
          : await live.session.run(task, run);
        await sent(live);
        if (controller.signal.aborted) return { stopReason: "cancelled" as const };
        const stopReason = STOP[result.status];
        if (!stopReason) throw new RequestError(-32603, `the run failed: ${result.reason ?? result.status}`);
        return { stopReason };
      } catch (e) {
        // A cancelled turn answers "cancelled", whatever the abort made fail on the way.
        if (controller.signal.aborted) return { stopReason: "cancelled" as const };
        throw e;
      } finally {
        signal.removeEventListener("abort", stop);
        live.started = [];
        live.running = undefined;
      }
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.running?.abort();
    });

  return {
    app,
    async closeAll() {
      for (const live of sessions.values()) live.running?.abort();
      await Promise.all([...sessions.values()].map((l) => close(l).catch(() => {})));
      sessions.clear();
    },
  };
}

/** The editor's buffer of a file (unsaved changes included) through fs/read_text_file. */
function editorReader(client: AgentContext, sessionId: string) {
  return async (path: string) =>
    (await client.request(methods.client.fs.readTextFile, { sessionId, path })).content;
}

/** The MCP servers an editor passes, as Hands' mcpServers setting. */
function mcpConfig(servers: McpServer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of servers) {
    if ("command" in s)
      out[s.name] = {
        command: s.command,
        args: s.args,
        env: Object.fromEntries(s.env.map((e) => [e.name, e.value])),
      };
    else if (s.type === "http")
      out[s.name] = { url: s.url, headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])) };
    else throw RequestError.invalidParams(undefined, `MCP server ${s.name}: SSE transport is not supported`);
  }
  return out;
}

/** A finished command's update keeps showing the editor terminal it ran in. */
function withTerminal(u: SessionUpdate, terminalOf: Map<string, string>): SessionUpdate {
  if (u.sessionUpdate !== "tool_call_update" || !u.status || u.status === "in_progress") return u;
  const terminalId = terminalOf.get(u.toolCallId);
  if (!terminalId) return u;
  terminalOf.delete(u.toolCallId);
  const shown: ToolCallContent = { type: "terminal", terminalId };
  return { ...u, content: [shown, ...(u.content ?? [])] };
}

type TextChunk = SessionUpdate & { content: { type: "text"; text: string } };

/** Whether `next` can be appended to the queued `last`: text chunks of the same kind. */
function mergeable(last: SessionUpdate, next: SessionUpdate): last is TextChunk {
  return (
    (last.sessionUpdate === "agent_message_chunk" || last.sessionUpdate === "agent_thought_chunk") &&
    next.sessionUpdate === last.sessionUpdate &&
    last.content.type === "text" &&
    next.content.type === "text"
  );
}
