// Everything one step holds: the request, the model's reasoning, text and tool calls, each call's
// approval, result and timing, memory moves, retries, notices and corrections.
import { useState } from "react";
import type { SentMessage, SentMessagesPayload } from "../../../src/api-types.js";
import { formatIdList } from "../../../src/id-list.js";
import type { StepView, ToolView } from "../../../src/timeline.js";
import { getJson, getText } from "../api.js";
import { fmtCost, fmtInt, fmtMs, pretty } from "../format.js";
import { href } from "../route.js";

function FullOutput({ runId, tool }: { runId: string; tool: ToolView }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!tool.end?.fullOutputPath) return null;
  if (text !== null)
    return (
      <pre className="output full" data-testid="full-output">
        {text}
      </pre>
    );
  return (
    <>
      <button
        type="button"
        className="link"
        onClick={() =>
          getText(
            `/api/runs/${encodeURIComponent(runId)}/output?call=${encodeURIComponent(tool.callId)}`,
          ).then(setText, (e: Error) => setError(e.message))
        }
      >
        show the full output ({fmtInt(tool.end.resultChars)} characters)
      </button>
      {error ? <span className="error-inline">{error}</span> : null}
    </>
  );
}

function Tool({ runId, tool }: { runId: string; tool: ToolView }) {
  const e = tool.end;
  const a = tool.approval;
  return (
    <div className={`tool ${e?.isError ? "tool-error" : ""}`} data-testid="tool-call">
      <div className="tool-head">
        <strong>{tool.name}</strong>
        {a ? (
          <span className={`tag ${a.allow ? "ok" : "warn"}`} title={a.reason ?? a.rule ?? ""}>
            {a.allow ? "allowed" : "denied"} by {a.source}
            {a.rule ? ` (${a.rule})` : ""}
          </span>
        ) : null}
        {e ? (
          <span className="muted">
            {e.isError ? "error · " : ""}
            {fmtMs(e.durationMs)}
            {e.approvalMs !== undefined ? ` · waited ${fmtMs(e.approvalMs)} for approval` : ""}
            {e.truncated ? ` · capped, ${fmtInt(e.resultChars)} characters in full` : ""}
            {e.data && typeof e.data.sandbox === "string" ? ` · sandbox ${e.data.sandbox}` : ""}
          </span>
        ) : (
          <span className="tag">running…</span>
        )}
      </div>
      {tool.subagent ? <SubagentLink sub={tool.subagent} /> : null}
      <div className="cols">
        <div>
          <div className="label">arguments</div>
          <pre className="args">{pretty(tool.args)}</pre>
        </div>
        <div>
          <div className="label">output{e?.truncated ? " (as the model got it)" : ""}</div>
          <pre className="output">{e ? e.output : ""}</pre>
          <FullOutput runId={runId} tool={tool} />
        </div>
      </div>
    </div>
  );
}

/** The child run a task call started: its trace is a run of its own on this dashboard. */
function SubagentLink({ sub }: { sub: NonNullable<ToolView["subagent"]> }) {
  const id = sub.tracePath
    ?.split("/")
    .pop()
    ?.replace(/\.jsonl$/, "");
  return (
    <div className="muted" data-testid="subagent-link">
      sub-agent {sub.runId} on {sub.model}
      {sub.status ? ` · ${sub.status}` : " · running…"}
      {sub.usage
        ? ` · ${fmtInt(sub.usage.inputTokens + sub.usage.outputTokens)} tokens, ${fmtCost(sub.usage.costUsd ?? 0)}`
        : ""}
      {id ? (
        <>
          {" · "}
          <a href={href.run(id)}>its trace</a>
        </>
      ) : null}
    </div>
  );
}

function FullMessage({ runId, message }: { runId: string; message: SentMessage }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (text !== null) return <pre data-testid="full-message">{text}</pre>;
  return (
    <>
      <pre>{message.content}</pre>
      {message.chars > message.content.length ? (
        <button
          type="button"
          className="link"
          onClick={() =>
            getText(`/api/runs/${encodeURIComponent(runId)}/message?id=${message.id}`).then(
              setText,
              (e: Error) => setError(e.message),
            )
          }
        >
          show all {fmtInt(message.chars)} characters
        </button>
      ) : null}
      {error ? <span className="error-inline">{error}</span> : null}
    </>
  );
}

/** The messages a request sent: fetched from the trace when asked for (a request may send hundreds). */
function SentMessages({ runId, step }: { runId: string; step: StepView }) {
  const [sent, setSent] = useState<SentMessagesPayload | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!step.sent)
    return step.messageCount !== undefined ? (
      <span className="muted" data-testid="sent-not-recorded">
        {" "}
        · the messages were not recorded (a trace from an older version)
      </span>
    ) : null;
  if (!sent)
    return (
      <>
        {" "}
        <button
          type="button"
          className="link"
          data-testid="show-sent"
          onClick={() =>
            getJson<SentMessagesPayload>(
              `/api/runs/${encodeURIComponent(runId)}/messages?ids=${formatIdList(step.sent!)}`,
            ).then(setSent, (e: Error) => setError(e.message))
          }
        >
          show the messages sent
        </button>
        {error ? <span className="error-inline">{error}</span> : null}
      </>
    );
  return (
    <div className="sent-messages" data-testid="sent-messages">
      {sent.missing.length ? (
        <div className="warning">
          {sent.missing.length} of the messages are not in the trace (a damaged trace): ids{" "}
          {sent.missing.slice(0, 20).join(", ")}
        </div>
      ) : null}
      {sent.messages.map((m, i) => (
        <div
          // biome-ignore lint/suspicious/noArrayIndexKey: a message may be sent twice in one request
          key={`${m.id}-${i}`}
          className={`sent-message role-${m.role}`}
          data-testid="sent-message"
          data-role={m.role}
        >
          <div className="label">
            {m.role}
            {m.name ? ` · ${m.name}` : ""}
            {m.isError ? " · error" : ""} · {fmtInt(m.chars)} characters
          </div>
          {m.thinking ? (
            <details>
              <summary>reasoning sent back</summary>
              <pre className="thinking">{m.thinking}</pre>
            </details>
          ) : null}
          <FullMessage runId={runId} message={m} />
          {m.toolCalls?.map((c) => (
            <div key={c.id} className="muted" data-testid="sent-tool-call">
              calls <strong>{c.name}</strong> <code>{c.arguments.slice(0, 400)}</code>
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}

export function StepDetail({ runId, step }: { runId: string; step: StepView }) {
  const r = step.response;
  return (
    <div className="step-detail" data-testid="step-detail">
      <dl className="facts">
        <dt>request</dt>
        <dd>
          {step.messageCount !== undefined
            ? `${step.messageCount} messages, ${fmtInt(step.chars ?? 0)} characters`
            : "–"}
          <SentMessages runId={runId} step={step} />
        </dd>
        {step.choice ? (
          <>
            <dt>model</dt>
            <dd data-testid="model-choice">
              {step.choice.model} ({step.choice.role}: {step.choice.reason})
            </dd>
          </>
        ) : null}
        {r ? (
          <>
            <dt>tokens</dt>
            <dd>
              {fmtInt(r.usage.inputTokens)} in ({fmtInt(r.usage.cachedInputTokens ?? 0)} cached) ·{" "}
              {fmtInt(r.usage.outputTokens)} out
              {r.usage.reasoningTokens ? ` (${fmtInt(r.usage.reasoningTokens)} reasoning)` : ""}
            </dd>
            <dt>cost</dt>
            <dd>{fmtCost(r.usage.costUsd ?? 0)}</dd>
            <dt>latency</dt>
            <dd>{fmtMs(r.durationMs)}</dd>
            <dt>finish</dt>
            <dd>{r.finishReason}</dd>
          </>
        ) : null}
      </dl>
      {step.retries.map((x) => (
        <div key={`${x.attempt}-${x.time}`} className="warning">
          retry {x.attempt} after {fmtMs(x.delayMs)}: {x.error}
        </div>
      ))}
      {step.hooks.map((h) => (
        <div
          key={`${h.event}-${h.hook}-${h.outcome}-${h.message ?? ""}`}
          className={h.outcome === "failed" ? "warning" : "notice"}
        >
          hook {h.event} {h.hook}: {h.outcome}
          {h.message ? ` — ${h.message}` : ""}
        </div>
      ))}
      {step.notices.map((n) => (
        <div key={n} className="notice">
          {n}
        </div>
      ))}
      {step.thinking ? (
        <details>
          <summary>
            reasoning{step.thinking.tokens ? ` (${fmtInt(step.thinking.tokens)} tokens)` : ""}
          </summary>
          <pre className="thinking">
            {step.thinking.redacted ? "(redacted by the provider)" : step.thinking.text}
          </pre>
        </details>
      ) : null}
      {r?.content ? (
        <>
          <div className="label">the model said</div>
          <pre className="content">{r.content}</pre>
        </>
      ) : null}
      {step.tools.map((t) => (
        <Tool key={t.callId} runId={runId} tool={t} />
      ))}
      {step.corrections.map((c) => (
        <div key={c} className="warning">
          correction sent to the model: {c}
        </div>
      ))}
      {step.memory.length ? (
        <details>
          <summary>{step.memory.length} memory moves</summary>
          <table className="small">
            <tbody>
              {step.memory.map((m) => (
                <tr key={m.seq}>
                  <td>#{m.seq}</td>
                  <td>{m.action}</td>
                  <td>
                    <code>{m.chunkId}</code>
                  </td>
                  <td>{m.layer ?? ""}</td>
                  <td>{m.importance !== undefined ? m.importance.toFixed(2) : ""}</td>
                  <td>{m.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
    </div>
  );
}
