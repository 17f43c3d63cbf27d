// The memory map: a scope's chunks counted by layer × importance (one cell per bucket, however
// many chunks), a cell's chunks on demand, one chunk's stand-in, originals and history, what the
// last context held and why, the moves over time, and the map replayed to any point of the log.
import type { Chunk, Layer, MapCell, MoveRow } from "@hands/memory";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import type {
  ContextPayload,
  MemoryMapPayload,
  MovesPayload,
  ReplayPayload,
  SnapshotsPayload,
} from "../../../src/api-types.js";
import { getJson, query } from "../api.js";
import { Chart } from "../components/Chart.js";
import { ErrorBox } from "../components/Problems.js";
import { virtualRowStyle } from "../components/virtualRow.js";
import { fmtInt, fmtTime, fmtTokens } from "../format.js";

const LAYERS: Layer[] = ["working", "short_term", "long_term", "archived"];
type CellChunk = Omit<Chunk, "content"> & { preview: string };

function Grid({
  cells,
  buckets,
  picked,
  onPick,
}: {
  cells: MapCell[];
  buckets: number;
  picked?: { layer: string; bucket: number };
  onPick?: (layer: Layer, bucket: number) => void;
}) {
  const max = Math.max(1, ...cells.map((c) => c.chunks));
  const at = new Map(cells.map((c) => [`${c.layer}/${c.bucket}`, c]));
  return (
    <table className="heat" data-testid="memory-grid">
      <thead>
        <tr>
          <th>layer \ importance</th>
          {Array.from({ length: buckets }, (_, b) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positions
            <th key={b}>{(b / buckets).toFixed(1)}+</th>
          ))}
          <th>total</th>
        </tr>
      </thead>
      <tbody>
        {LAYERS.map((layer) => {
          const row = cells.filter((c) => c.layer === layer);
          return (
            <tr key={layer}>
              <th>{layer}</th>
              {Array.from({ length: buckets }, (_, b) => {
                const c = at.get(`${layer}/${b}`);
                const level = c ? 0.12 + 0.88 * (Math.log1p(c.chunks) / Math.log1p(max)) : 0;
                const isPicked = picked?.layer === layer && picked.bucket === b;
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positions
                  <td key={b} className={isPicked ? "picked" : ""}>
                    {c ? (
                      <button
                        type="button"
                        data-testid="memory-cell"
                        data-layer={layer}
                        data-bucket={b}
                        style={{
                          background: `rgba(37, 99, 235, ${level})`,
                          color: level > 0.55 ? "white" : "inherit",
                        }}
                        title={`${c.chunks} chunks, ${c.tokens} tokens, ${c.accesses} accesses, ${c.standIns} with a stand-in, ${c.summaries} summaries, ${c.compressed} compressed`}
                        onClick={() => onPick?.(layer, b)}
                        disabled={!onPick}
                      >
                        {fmtInt(c.chunks)}
                      </button>
                    ) : null}
                  </td>
                );
              })}
              <td className="num">{fmtInt(row.reduce((n, c) => n + c.chunks, 0))}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function CellList({
  base,
  layer,
  bucket,
  onChunk,
}: {
  base: Record<string, string | undefined>;
  layer: Layer;
  bucket: number;
  onChunk: (id: string) => void;
}) {
  const [chunks, setChunks] = useState<CellChunk[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const loading = useRef(false);
  const load = (offset: number) => {
    if (loading.current) return;
    loading.current = true;
    getJson<{ total: number; chunks: CellChunk[] }>(
      `/api/memory/cell${query({ ...base, layer, bucket, offset, limit: 200 })}`,
    ).then(
      (r) => {
        loading.current = false;
        setTotal(r.total);
        setChunks((c) => (offset === 0 ? r.chunks : [...c, ...r.chunks]));
      },
      (e: Error) => {
        loading.current = false;
        setError(e.message);
      },
    );
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new cell starts over
  useEffect(() => {
    setChunks([]);
    load(0);
  }, [layer, bucket, base.scope, base.file]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: chunks.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 52,
    overscan: 8,
  });
  const items = virtual.getVirtualItems();
  const lastShown = items[items.length - 1]?.index ?? 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: load the next page near the end
  useEffect(() => {
    if (chunks.length && lastShown >= chunks.length - 20 && chunks.length < total) load(chunks.length);
  }, [lastShown, chunks.length, total]);
  if (error) return <ErrorBox message={error} />;
  return (
    <div className="cell-list">
      <h3>
        {layer}, importance {(bucket / 10).toFixed(1)}–{((bucket + 1) / 10).toFixed(1)}: {fmtInt(total)}{" "}
        chunks (most important first)
      </h3>
      <div className="scroller small-scroller" ref={scroller} data-testid="cell-chunks">
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {items.map((v) => {
            const c = chunks[v.index]!;
            return (
              <button
                type="button"
                key={c.id}
                className="chunk-row"
                data-testid="chunk-row"
                onClick={() => onChunk(c.id)}
                style={virtualRowStyle(v)}
              >
                <span className="mono">{c.id}</span> <span className="tag">{c.type}</span>{" "}
                {c.importance.toFixed(2)} · {c.tokens} t · {c.accessCount} accesses
                {c.sources.length ? ` · summary of ${c.sources.length}` : ""}
                {c.parent ? ` · compressed into ${c.parent}` : ""}
                <div className="ellipsis muted">{c.short ?? c.preview}</div>
              </button>
            );
          })}
        </div>
      </div>
    </div>
  );
}

function ChunkPanel({ base, id }: { base: Record<string, string | undefined>; id: string }) {
  const [data, setData] = useState<{ chunk: Chunk; originals: Chunk[]; history: MoveRow[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setData(null);
    getJson<{ chunk: Chunk; originals: Chunk[]; history: MoveRow[] }>(
      `/api/memory/chunk${query({ file: base.file, id })}`,
    ).then(setData, (e: Error) => setError(e.message));
  }, [id, base.file]);
  if (error) return <ErrorBox message={error} />;
  if (!data) return <p className="muted">Loading {id}…</p>;
  const c = data.chunk;
  return (
    <div className="chunk-panel" data-testid="chunk-panel">
      <h3 className="mono">{c.id}</h3>
      <dl className="facts">
        <dt>scope</dt>
        <dd>{c.scope}</dd>
        <dt>type / layer</dt>
        <dd>
          {c.type} · {c.layer}
        </dd>
        <dt>importance</dt>
        <dd>
          {c.importance.toFixed(3)} (confidence {c.confidence.toFixed(2)}, {c.verification})
        </dd>
        <dt>tokens</dt>
        <dd>
          {c.tokens}
          {c.shortTokens ? ` (stand-in ${c.shortTokens})` : ""}
        </dd>
        <dt>accesses</dt>
        <dd>
          {c.accessCount}
          {c.lastAccess ? `, last ${fmtTime(c.lastAccess)}` : ""}
        </dd>
        {c.parent ? (
          <>
            <dt>stands for it</dt>
            <dd className="mono">{c.parent}</dd>
          </>
        ) : null}
      </dl>
      {c.short ? (
        <>
          <div className="label">stand-in</div>
          <pre className="content">{c.short}</pre>
        </>
      ) : null}
      <div className="label">content</div>
      <pre className="content">{c.content}</pre>
      {data.originals.length ? (
        <>
          <div className="label">originals (pointers)</div>
          <ul>
            {data.originals.map((o) => (
              <li key={o.id} className="mono">
                {o.id} · {o.type} · {o.layer}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <div className="label">history</div>
      <table className="small">
        <tbody>
          {data.history.map((h) => (
            <tr key={h.seq}>
              <td>#{h.seq}</td>
              <td>{fmtTime(h.time)}</td>
              <td>{h.kind}</td>
              <td>{h.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const MOVE_KINDS = [
  "created",
  "scored",
  "promoted",
  "demoted",
  "compressed",
  "recalled",
  "accessed",
  "verified",
  "archived",
  "deleted",
];
const COLORS = [
  "#2563eb",
  "#9333ea",
  "#16a34a",
  "#dc2626",
  "#d97706",
  "#0891b2",
  "#64748b",
  "#65a30d",
  "#78716c",
  "#111827",
];

function MovesChart({ base }: { base: Record<string, string | undefined> }) {
  const [moves, setMoves] = useState<MovesPayload | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<MovesPayload>(`/api/memory/moves${query(base)}`).then(setMoves, (e: Error) =>
      setError(e.message),
    );
  }, [base]);
  const { options, data } = useMemo(() => {
    const map = { moves: moves ?? { binMs: 0, bins: [] } };
    const times = [...new Set(map.moves.bins.map((b) => b.time))].sort((a, b) => a - b);
    const kinds = MOVE_KINDS.filter((k) => map.moves.bins.some((b) => b.kind === k));
    const index = new Map(times.map((t, i) => [t, i]));
    const cols = kinds.map(() => times.map(() => 0));
    for (const b of map.moves.bins) {
      const k = kinds.indexOf(b.kind);
      const i = index.get(b.time);
      if (k >= 0 && i !== undefined) cols[k]![i] = b.count;
    }
    const opts: Omit<uPlot.Options, "width" | "height"> = {
      scales: { x: { time: true } },
      axes: [{}, { label: "moves", size: 50 }],
      series: [
        {},
        ...kinds.map((k) => ({
          label: k,
          stroke: COLORS[MOVE_KINDS.indexOf(k)],
          fill: `${COLORS[MOVE_KINDS.indexOf(k)]}55`,
          paths: uPlot.paths.bars!({ size: [0.8, 40] }),
          points: { show: false },
        })),
      ],
    };
    return { options: opts, data: [times.map((t) => t / 1000), ...cols] as uPlot.AlignedData };
  }, [moves]);
  if (error) return <ErrorBox message={error} />;
  if (!moves) return <p className="muted">Loading…</p>;
  if (!moves.bins.length) return <p className="muted">No moves logged.</p>;
  return <Chart options={options} data={data} label="memory moves over time" height={180} />;
}

type ReplayTo = { seq: number; scope?: string } | { step: number };

function Replay({
  base,
  lastSeq,
  buckets,
}: {
  base: Record<string, string | undefined>;
  lastSeq: number;
  buckets: number;
}) {
  // Replaying a large log takes a while: only once someone picks a point.
  const [to, setTo] = useState<ReplayTo | undefined>();
  // The result with the point it was asked for: the caption never describes a newer request.
  const [replay, setReplay] = useState<(ReplayPayload & { to: ReplayTo }) | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [snapshots, setSnapshots] = useState<SnapshotsPayload | null>(null);
  const [stepText, setStepText] = useState("");
  useEffect(() => {
    setTo(undefined);
    setReplay(null);
    getJson<SnapshotsPayload>(`/api/memory/snapshots${query(base)}`).then(setSnapshots, (e: Error) =>
      setError(e.message),
    );
  }, [base]);
  useEffect(() => {
    if (to === undefined) return;
    const ctl = new AbortController();
    const params =
      "step" in to
        ? { ...base, step: to.step, buckets }
        : { ...base, ...(to.scope ? { scope: to.scope } : {}), seq: to.seq, buckets };
    const timer = setTimeout(
      () =>
        getJson<ReplayPayload>(`/api/memory/replay${query(params)}`, ctl.signal).then(
          (r) => {
            setError(null);
            setReplay({ ...r, to });
          },
          (e: Error) => {
            if (e.name !== "AbortError") setError(e.message);
          },
        ),
      150,
    );
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [to, base, buckets]);
  const seq = to && "seq" in to ? to.seq : replay?.seq;
  const steps = snapshots?.steps;
  return (
    <div className="replay" data-testid="memory-replay">
      <h3>Snapshots</h3>
      {snapshots && snapshots.marks.length === 0 ? (
        <p className="muted" data-testid="no-snapshots">
          No snapshots marked{base.scope ? " in this scope" : ""} (a run with memory marks one at each
          compaction point and when it ends).
        </p>
      ) : null}
      {snapshots?.marks.length ? (
        <div className="snapshots">
          <table className="small" data-testid="snapshot-list">
            <thead>
              <tr>
                <th>when</th>
                <th>why</th>
                <th>scope</th>
                <th>step</th>
                <th>move</th>
                {LAYERS.map((l) => (
                  <th key={l}>{l}</th>
                ))}
                <th>chunks</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {snapshots.marks.map((m) => (
                <tr
                  key={m.id}
                  data-testid="snapshot-row"
                  data-seq={m.seq}
                  className={to && "seq" in to && to.seq === m.seq ? "picked" : ""}
                >
                  <td>{fmtTime(m.time)}</td>
                  <td>{m.reason}</td>
                  <td className="mono ellipsis">{m.scope}</td>
                  <td>{m.step ?? "–"}</td>
                  <td>#{m.seq}</td>
                  {LAYERS.map((l) => (
                    <td key={l} className="num" data-layer={l}>
                      {fmtInt(m.layers[l])}
                    </td>
                  ))}
                  <td className="num" data-testid="snapshot-chunks">
                    {fmtInt(m.chunks)}
                  </td>
                  <td>
                    <button
                      type="button"
                      className="link"
                      onClick={() => setTo({ seq: m.seq, scope: m.scope })}
                    >
                      replay
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <h3>Replay the log</h3>
      <label>
        to move #{seq ?? "–"} of {lastSeq}{" "}
        <input
          type="range"
          min={1}
          max={Math.max(1, lastSeq)}
          value={seq}
          onChange={(e) => setTo({ seq: Number(e.target.value) })}
          aria-label="replay to move"
        />
      </label>{" "}
      {base.scope && steps ? (
        <form
          className="inline"
          data-testid="replay-step"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(stepText);
            if (Number.isInteger(n) && n >= 0) setTo({ step: n });
          }}
        >
          <label>
            or to step{" "}
            <input
              type="number"
              min={0}
              max={steps.last}
              value={stepText}
              placeholder={`${steps.first}–${steps.last}`}
              onChange={(e) => setStepText(e.target.value)}
              aria-label="replay to step"
            />
          </label>{" "}
          <button type="submit">replay</button>
        </form>
      ) : base.scope ? null : (
        <span className="muted">(pick a scope to replay to one of its steps)</span>
      )}
      {error ? <ErrorBox message={error} /> : null}
      {to === undefined ? (
        <p className="muted">Pick a snapshot, a move or a step to see the map as it was then.</p>
      ) : null}
      {replay ? (
        <div data-testid="replay-result">
          <p className="muted" data-testid="replay-caption">
            {"step" in replay.to ? `The map once memory had stored step ${replay.to.step}: ` : ""}
            after move #{replay.seq}, {fmtInt(replay.cells.reduce((n, c) => n + c.chunks, 0))} chunks
            {"scope" in replay.to && replay.to.scope ? ` of ${replay.to.scope}` : ""}
          </p>
          {replay.from > 1 ? (
            <div className="warning">
              The log starts at move #{replay.from} (a snapshot was loaded): earlier states are not kept.
            </div>
          ) : null}
          <Grid cells={replay.cells} buckets={buckets} />
        </div>
      ) : null}
    </div>
  );
}

function LastContext({ base }: { base: Record<string, string | undefined> }) {
  const [ctx, setCtx] = useState<ContextPayload | null | undefined>(undefined);
  useEffect(() => {
    getJson<ContextPayload | null>(`/api/memory/context${query(base)}`).then(setCtx, () => setCtx(null));
  }, [base]);
  if (ctx === undefined) return null;
  if (!ctx)
    return (
      <p className="muted">
        No context recorded yet for this scope (one is kept when a run with memory ends).
      </p>
    );
  return (
    <div data-testid="last-context">
      <p>
        The last context ({ctx.scope}, {fmtTime(ctx.time)}, {ctx.mode}): {ctx.items.length} items,{" "}
        {fmtInt(ctx.tokens)} tokens.
      </p>
      <table className="small">
        <thead>
          <tr>
            <th>chunk</th>
            <th>layer</th>
            <th>importance</th>
            <th>form</th>
            <th>pointer</th>
            <th>why</th>
          </tr>
        </thead>
        <tbody>
          {ctx.items.map((i) => (
            <tr key={i.id}>
              <td className="mono">{i.id}</td>
              <td>{i.layer ?? "(gone)"}</td>
              <td>{i.importance?.toFixed(2) ?? "–"}</td>
              <td>{i.form}</td>
              <td>{i.originals ? `recall ${i.id} (${i.originals} originals)` : `recall ${i.id}`}</td>
              <td>{i.why}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function MemoryPage() {
  const [file, setFile] = useState<string | undefined>();
  const [scope, setScope] = useState("");
  const [map, setMap] = useState<MemoryMapPayload | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cell, setCell] = useState<{ layer: Layer; bucket: number } | undefined>();
  const [chunk, setChunk] = useState<string | undefined>();
  const base = useMemo(() => ({ file, scope: scope || undefined }), [file, scope]);

  useEffect(() => {
    setError(null);
    getJson<MemoryMapPayload>(`/api/memory/map${query(base)}`).then(setMap, (e: Error) =>
      setError(e.message),
    );
  }, [base]);

  return (
    <section className="page memory-page">
      <header className="page-head">
        <h1>Memory map</h1>
        {map ? (
          <div className="filters">
            <select value={map.file} onChange={(e) => setFile(e.target.value)} aria-label="Memory file">
              {map.files.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name} ({fmtInt(f.bytes / 1024)} KiB)
                </option>
              ))}
            </select>
            <select
              value={scope}
              onChange={(e) => {
                setScope(e.target.value);
                setCell(undefined);
                setChunk(undefined);
              }}
              aria-label="Scope"
            >
              <option value="">all scopes</option>
              {map.scopes.map((s) => (
                <option key={s.scope} value={s.scope}>
                  {s.scope} ({fmtInt(s.chunks)})
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </header>
      {error ? <ErrorBox message={error} /> : null}
      {map ? (
        <>
          <p data-testid="memory-totals">
            {fmtInt(map.chunks)} chunks · {fmtTokens(map.tokens)} tokens · {fmtInt(map.events)} moves logged
            (last #{map.lastSeq})
          </p>
          <Grid
            cells={map.cells}
            buckets={map.buckets}
            picked={cell}
            onPick={(layer, bucket) => {
              setCell({ layer, bucket });
              setChunk(undefined);
            }}
          />
          <div className="memory-drill">
            {cell ? (
              <CellList base={base} layer={cell.layer} bucket={cell.bucket} onChunk={setChunk} />
            ) : (
              <p className="muted">Click a cell to see its chunks.</p>
            )}
            {chunk ? <ChunkPanel base={base} id={chunk} /> : null}
          </div>
          <h2>What the last context included, and why</h2>
          <LastContext base={base} />
          <h2>Moves over time</h2>
          <MovesChart base={base} />
          <h2>Snapshots and replay</h2>
          {map.lastSeq ? (
            <Replay base={base} lastSeq={map.lastSeq} buckets={map.buckets} />
          ) : (
            <p className="muted">Nothing logged yet.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
