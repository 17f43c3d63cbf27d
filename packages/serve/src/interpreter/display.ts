// The kernel's rich output (Python, run inside the kernel before any cell): an object's
// notebook formats — `_repr_mimebundle_` and the `_repr_html_`/`_repr_png_`/… methods —
// become the fields of an E2B result (text, html, markdown, svg, png, jpeg, pdf, latex, json,
// javascript; other MIME types in `extra`); `display()` sends extra results; matplotlib
// figures are sent as PNG results when a cell ends or calls plt.show(). What user code hands
// over is untrusted: a format that raises, has the wrong type, is not JSON (NaN included) or is
// too big is dropped or cut with a note on stderr, and never fails the cell or the stream.
//
// Needs from the kernel: `emit(obj)` (one protocol line) and `sync_output(wait)`.
export const DISPLAY_SOURCE = String.raw`
import base64, builtins, importlib.util, io, types

# One result message stays well under the host's 8 MiB line limit.
MAX_RESULT_CHARS = 4 << 20
MIME_KEYS = {"text/plain": "text", "text/html": "html", "text/markdown": "markdown",
             "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg", "application/pdf": "pdf",
             "text/latex": "latex", "application/json": "json", "application/javascript": "javascript"}
REPR_METHODS = (("html", "_repr_html_"), ("markdown", "_repr_markdown_"), ("svg", "_repr_svg_"),
                ("png", "_repr_png_"), ("jpeg", "_repr_jpeg_"), ("pdf", "_repr_pdf_"),
                ("latex", "_repr_latex_"), ("json", "_repr_json_"), ("javascript", "_repr_javascript_"))
BINARY = ("png", "jpeg", "pdf")

def note(msg):
    try:
        sys.stderr.write("[display] %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass

def as_json(v):
    """v as JSON text, or None when it is not plain JSON (NaN and Infinity are not)."""
    try:
        return json.dumps(v, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None

def format_value(key, v):
    """One format's value as the wire carries it, or None (with a note) when it cannot be."""
    if isinstance(v, tuple) and v:
        v = v[0]  # (data, metadata)
    if v is None:
        return None
    if key in BINARY:
        if isinstance(v, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(v)).decode()
        if isinstance(v, str):
            return v  # already base64, as IPython takes it
    elif key == "json":
        if isinstance(v, (dict, list)) and as_json(v) is not None:
            return v
    elif isinstance(v, str):
        return v
    elif isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    note("%s format dropped: %s is not %s" % (key, type(v).__name__, "bytes" if key in BINARY else "JSON" if key == "json" else "text"))
    return None

def plain_text(obj):
    try:
        text = repr(obj)
    except Exception as e:
        return "<%s object: repr() raised %s: %s>" % (type(obj).__name__, type(e).__name__, e)
    if not isinstance(text, str):
        return "<%s object>" % type(obj).__name__
    # As E2B's interpreter does: a string's quotes are not part of its text.
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text

def formats_of(obj):
    """An object's formats as {key: value} (+ "extra": {mime: value}), text/plain included."""
    out, extra = {}, {}
    methods = not isinstance(obj, type)  # a class's _repr_*_ are unbound functions
    bundle = getattr(obj, "_repr_mimebundle_", None) if methods else None
    if callable(bundle):
        try:
            b = bundle(include=None, exclude=None)
            b = b[0] if isinstance(b, tuple) and b else b
            for mime, v in (b.items() if isinstance(b, dict) else ()):
                key = MIME_KEYS.get(mime)
                if key is None:
                    if isinstance(mime, str) and as_json(v) is not None:
                        extra[mime] = v
                    continue
                v = format_value(key, v)
                if v is not None:
                    out[key] = v
        except Exception as e:
            note("_repr_mimebundle_() raised %s: %s" % (type(e).__name__, e))
    for key, name in REPR_METHODS if methods else ():
        if key in out:
            continue
        try:
            f = getattr(obj, name, None)
            if not callable(f):
                continue
            v = format_value(key, f())
        except Exception as e:
            note("%s() raised %s: %s" % (name, type(e).__name__, e))
            continue
        if v is not None:
            out[key] = v
    if "text" not in out:
        out["text"] = plain_text(obj)
    if extra:
        out["extra"] = extra
    return out

def fit(formats):
    """Keeps a result under MAX_RESULT_CHARS: text first, then the smaller formats; a textual
    format that does not fit is cut, an image, a PDF or a JSON value is left out."""
    left = MAX_RESULT_CHARS
    sized = sorted(formats.items(), key=lambda kv: (kv[0] != "text", len(kv[1]) if isinstance(kv[1], str) else len(as_json(kv[1]) or "")))
    kept = {}
    for key, v in sized:
        size = len(v) if isinstance(v, str) else len(as_json(v) or "") * (2 if key == "extra" else 1)
        if size <= left:
            kept[key] = v
            left -= size
        elif isinstance(v, str) and key not in BINARY and left > 1024:
            keep = left - 80  # room for the note below
            kept[key] = v[:keep] + "\n[... %d characters cut: the result is over %d MiB]" % (size - keep, MAX_RESULT_CHARS >> 20)
            note("%s cut to %d of %d characters" % (key, keep, size))
            left = 0
        else:
            note("%s (%d characters) left out: the result is over %d MiB" % (key, size, MAX_RESULT_CHARS >> 20))
    return kept

def send_result(formats, main):
    sync_output(1)  # what the cell printed before this result arrives before it
    msg = dict(fit(formats))
    # Other MIME types go both in "extra" (E2B's Python SDK reads it) and at the top level
    # (its JS SDK collects unknown keys); fit() counted them twice.
    for mime, v in (msg.get("extra") or {}).items():
        msg.setdefault(mime, v)
    msg["type"] = "result"
    msg["is_main_result"] = main
    if as_json(msg) is None:  # cannot happen after format_value; never lose the stream if it does
        msg = {"type": "result", "text": str(formats.get("text", ""))[:MAX_RESULT_CHARS], "is_main_result": main}
    emit(msg)

def display(*objs, raw=False, include=None, exclude=None, **_ignored):
    """IPython's display(): each object as a result of its own (not the cell's main result)."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            f = {}
            for mime, v in obj.items():
                key = MIME_KEYS.get(mime)
                v = format_value(key, v) if key else None
                if v is not None:
                    f[key] = v
        else:
            f = formats_of(obj)
        if include:
            f = {k: v for k, v in f.items() if k in include or k == "text"}
        if exclude:
            f = {k: v for k, v in f.items() if k not in exclude}
        if f:
            send_result(f, False)

builtins.display = display

# IPython.display for cells written for notebooks, when IPython itself is not installed.
class DisplayObject:
    _key = None
    def __init__(self, data=None, url=None, filename=None, metadata=None, **_ignored):
        if filename is not None:
            with open(filename, "rb" if self._key in BINARY else "r") as f:
                data = f.read()
        self.data, self.url, self.metadata = data, url, metadata
    def __repr__(self):
        return "<IPython.core.display.%s object>" % type(self).__name__
    def _repr_mimebundle_(self, include=None, exclude=None):
        v = self.data
        if self._key == "json" and isinstance(v, str):
            v = json.loads(v)
        return {[m for m, k in MIME_KEYS.items() if k == self._key][0]: v}

def _display_class(name, key):
    return type(name, (DisplayObject,), {"_key": key})

class Image(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, format=None, **kw):
        fmt = (format or (filename or "").rsplit(".", 1)[-1] or "png").lower()
        self._key = "jpeg" if fmt in ("jpg", "jpeg") else "png"
        super().__init__(data=data, url=url, filename=filename, **kw)

def _install_ipython_display():
    if importlib.util.find_spec("IPython") is not None:
        return
    mod = types.ModuleType("IPython.display")
    mod.display, mod.DisplayObject, mod.Image = display, DisplayObject, Image
    for name, key in (("HTML", "html"), ("Markdown", "markdown"), ("SVG", "svg"), ("Latex", "latex"),
                      ("JSON", "json"), ("Javascript", "javascript")):
        setattr(mod, name, _display_class(name, key))
    pkg = types.ModuleType("IPython")
    pkg.display = mod
    pkg.get_ipython = lambda: None  # matplotlib asks, when it finds an "IPython" module
    pkg.__path__ = []
    sys.modules["IPython"], sys.modules["IPython.display"] = pkg, mod

_install_ipython_display()

# matplotlib: figures become PNG results, on plt.show() or when the cell ends, as a notebook's
# inline backend does. The backend is chosen when matplotlib is first imported (nothing is
# loaded before), and not at all if the user has picked one with MPLBACKEND.
def flush_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        figs = [plt.figure(n) for n in plt.get_fignums()]
    except Exception:
        return
    for fig in figs:
        try:
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            send_result({"text": plain_text(fig), "png": base64.b64encode(buf.getvalue()).decode()}, False)
        except Exception as e:
            note("a figure could not be drawn: %s: %s" % (type(e).__name__, e))
    try:
        plt.close("all")
    except Exception:
        pass

_backend = types.ModuleType("hands_inline_backend")
_backend.show = lambda *a, **k: flush_figures()
sys.modules["hands_inline_backend"] = _backend

def _fill_backend():
    from matplotlib.backend_bases import FigureManagerBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    _backend.FigureCanvas, _backend.FigureManager = FigureCanvasAgg, FigureManagerBase

class _PickBackendOnImport:
    # Stays in place until matplotlib is really loaded: find_spec alone (importlib.util.find_spec,
    # as a cell may call it) loads nothing.
    busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib" or self.busy:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        real = loader.exec_module
        hook = self
        def exec_module(module):
            if hook in sys.meta_path:
                sys.meta_path.remove(hook)
            real(module)
            if not os.environ.get("MPLBACKEND"):
                _fill_backend()
                module.use("module://hands_inline_backend")
        loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _PickBackendOnImport())

`;
