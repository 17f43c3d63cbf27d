// IPython start-up code of the Python kernel (an IPython profile start-up file, run in the
// kernel before the first cell): extra display formats that E2B's SDK reads — a matplotlib
// figure's chart as structured data (charts.ts), a pandas DataFrame's rows as `data` — and PIL
// images that show() or save() themselves as results, as in E2B's sandboxes (no image viewer).
// A format that raises is dropped by IPython with a note on stderr; it never fails the cell.
import { CHARTS_SOURCE } from "./charts.js";

/** Python source indented to sit inside a function body. */
const indented = (src: string) => src.replace(/^(?=.)/gm, "    ");

export const PYTHON_STARTUP_SOURCE = `
def __hands_setup():
    import json, os, sys
    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    ip = get_ipython()
    if ip is None:
        return
    df = ip.display_formatter

    def add_format(mime, attr):
        class Fmt(BaseFormatter):
            format_type = Unicode(mime)
            print_method = ObjectName(attr)
            _return_type = dict
        f = Fmt(parent=df)
        df.formatters[mime] = f
        if mime not in df.active_types:
            df.active_types.append(mime)
        return f

    charts = add_format("application/vnd.hands.chart+json", "_repr_hands_chart_")
    data = add_format("application/vnd.hands.data+json", "_repr_hands_data_")

${indented(CHARTS_SOURCE)}

    # A method of Figure, not a printer registered for its type: matplotlib's inline backend
    # drops every formatter's Figure printer when it switches itself on.
    try:
        from matplotlib.figure import Figure
        Figure._repr_hands_chart_ = chart_of_figure
    except Exception:
        pass

    def frame_data(frame):
        # JSON through pandas itself: NaN and NaT become null, timestamps ISO text.
        return json.loads(frame.to_json(orient="split", date_format="iso", default_handler=str))
    data.for_type_by_name("pandas.core.frame", "DataFrame", frame_data)

    try:
        from PIL import Image as PILImage
        from IPython.display import display
    except Exception:
        return
    real_save = PILImage.Image.save
    def show(self, *args, **kwargs):
        display(self)
    def save(self, fp, *args, **kwargs):
        out = real_save(self, fp, *args, **kwargs)
        # A file the user's code saved (not the PNG matplotlib writes through PIL).
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if isinstance(fp, (str, os.PathLike)) and not caller.startswith(("matplotlib", "PIL")):
            display(self)
        return out
    PILImage.Image.show = show
    PILImage.Image.save = save

__hands_setup()
del __hands_setup
`;
