// A matplotlib figure as E2B's structured chart (the Chart types of @e2b/code-interpreter):
// line, scatter, bar, pie, box-and-whisker, a "superchart" of several axes, or "unknown" with no
// elements. Read from the figure's artists after a draw (tick labels exist only then); box plots
// from the statistics Axes.bxp was given (its artists keep only their drawn outline).
// Python, part of the kernel's IPython start-up (python-startup.ts), inside a function body.
export const CHARTS_SOURCE = String.raw`
import datetime, math, re

def _patch_bxp():
    try:
        from matplotlib.axes import Axes
    except Exception:
        return
    real = Axes.bxp
    if getattr(real, "_hands", False):
        return
    def bxp(self, bxpstats, *args, **kwargs):
        stats = [dict(s) for s in bxpstats]
        out = real(self, bxpstats, *args, **kwargs)
        self._hands_boxes = getattr(self, "_hands_boxes", []) + [(stats, out)]
        return out
    bxp._hands = True
    Axes.bxp = bxp

_patch_bxp()

def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f) or math.isinf(f):
        return None
    return int(f) if f.is_integer() and abs(f) < 2 ** 53 else f

def axis_scale(ax, axis):
    a = ax.xaxis if axis == "x" else ax.yaxis
    conv = type(a.get_converter() if hasattr(a, "get_converter") else a.converter).__name__
    if "Date" in conv:
        return "datetime"
    if "StrCategory" in conv:
        return "categorical"
    return (ax.get_xscale() if axis == "x" else ax.get_yscale()) or "linear"

def as_date(v):
    from matplotlib import dates
    return dates.num2date(float(v)).isoformat()

def value(v, scale):
    if scale == "datetime":
        if isinstance(v, (datetime.date, datetime.datetime)):
            if not isinstance(v, datetime.datetime):
                v = datetime.datetime(v.year, v.month, v.day)
            if v.tzinfo is None:
                v = v.replace(tzinfo=datetime.timezone.utc)
            return v.isoformat()
        try:
            return as_date(v)
        except Exception:
            return str(v)
    if scale == "categorical" and isinstance(v, str):
        return v
    return num(v)

def unit_of(label):
    m = re.search(r"[\(\[]([^\)\]]+)[\)\]]\s*$", label or "")
    return m.group(1) if m else None

def text_or_none(t):
    return t if t else None

def axes_2d(ax):
    xl, yl = ax.get_xlabel(), ax.get_ylabel()
    return {"x_label": text_or_none(xl), "y_label": text_or_none(yl), "x_unit": unit_of(xl), "y_unit": unit_of(yl)}

def ticks(ax):
    out = {}
    for axis in ("x", "y"):
        scale = axis_scale(ax, axis)
        locs = ax.get_xticks() if axis == "x" else ax.get_yticks()
        labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
        out[axis + "_scale"] = scale
        out[axis + "_ticks"] = [as_date(t) if scale == "datetime" else num(t) for t in locs]
        out[axis + "_tick_labels"] = [t.get_text() for t in labels]
    return out

def label_of(artist):
    l = artist.get_label()
    return "" if not l or l.startswith("_") else str(l)

def tick_label_at(ax, axis, pos):
    locs = ax.get_xticks() if axis == "x" else ax.get_yticks()
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    for loc, lab in zip(locs, labels):
        if abs(float(loc) - pos) < 1e-9:
            return lab.get_text()
    return str(num(pos))

def chart_of_axes(ax):
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    from matplotlib.patches import Wedge
    title = text_or_none(ax.get_title())
    boxes = getattr(ax, "_hands_boxes", [])
    wedges = [p for p in ax.patches if isinstance(p, Wedge)]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    box_lines = set()
    for _, arts in boxes:
        for group in arts.values():
            box_lines.update(id(a) for a in group)
    lines = [l for l in ax.get_lines() if id(l) not in box_lines and len(l.get_xdata()) > 0]
    scatters = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) > 0]
    if wedges:
        return {"type": "pie", "title": title, "elements": [
            {"label": label_of(w), "angle": round(abs(w.theta2 - w.theta1), 3), "radius": num(w.r)} for w in wedges]}
    if boxes:
        elements = []
        for stats, _ in boxes:
            for i, s in enumerate(stats):
                elements.append({"label": str(s.get("label", i + 1)), "min": num(s["whislo"]), "first_quartile": num(s["q1"]),
                                 "median": num(s["med"]), "third_quartile": num(s["q3"]), "max": num(s["whishi"]),
                                 "outliers": [num(v) for v in s.get("fliers", [])]})
        return dict({"type": "box_and_whisker", "title": title, "elements": elements}, **axes_2d(ax))
    if bars:
        elements = []
        for c in bars:
            horizontal = getattr(c, "orientation", "vertical") == "horizontal"
            for r in c.patches:
                if horizontal:
                    label, v = tick_label_at(ax, "y", r.get_y() + r.get_height() / 2), r.get_width()
                else:
                    label, v = tick_label_at(ax, "x", r.get_x() + r.get_width() / 2), r.get_height()
                elements.append({"label": label, "value": num(v), "group": label_of(c)})
        return dict({"type": "bar", "title": title, "elements": elements}, **axes_2d(ax))
    if lines and not scatters:
        xs, ys = axis_scale(ax, "x"), axis_scale(ax, "y")
        elements = [{"label": label_of(l), "points": [[value(x, xs), value(y, ys)] for x, y in zip(l.get_xdata(), l.get_ydata())]}
                    for l in lines]
        return dict({"type": "line", "title": title, "elements": elements}, **axes_2d(ax), **ticks(ax))
    if scatters and not lines:
        xs, ys = axis_scale(ax, "x"), axis_scale(ax, "y")
        elements = [{"label": label_of(c), "points": [[value(p[0], xs), value(p[1], ys)] for p in c.get_offsets()]}
                    for c in scatters]
        return dict({"type": "scatter", "title": title, "elements": elements}, **axes_2d(ax), **ticks(ax))
    return {"type": "unknown", "title": title, "elements": []}

def chart_of_figure(fig):
    if not hasattr(fig, 'canvas'):
        return None  # the class itself, not a figure
    fig.canvas.draw()
    axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.get_label() != "<colorbar>"]
    if not axes:
        return None
    sup = getattr(fig, "_suptitle", None)
    sup = text_or_none(sup.get_text()) if sup is not None else None
    if len(axes) == 1:
        chart = chart_of_axes(axes[0])
        if chart["title"] is None:
            chart["title"] = sup
        return chart
    return {"type": "superchart", "title": sup, "elements": [chart_of_axes(ax) for ax in axes]}
`;
