"""Shared helpers of the scripts/plot_*.py figure scripts (matplotlib only; they read CSVs only).

The plotters read the CSVs written by `hilo-sim run` (steps.csv, workers.csv, rollouts.csv,
allocation.csv) or a sweep of scripts/sweep.py (sweep.csv; and sweep_steps.csv,
sweep_workers.csv, sweep_rollouts.csv, sweep_allocation.csv -- written with --concatenate, or joined
here from the sweep's runs/ when absent -- which carry a `combo` column and one
column per grid path in front; sweep.csv also has a `status` column, and only `ok` rows are
plotted). Provenance lives in sidecar files (a sweep's sweep.json, a CSV's NAME.csv.meta.json),
never in the CSVs.

One plotting style for every figure:
  - an arm's colour and marker depend only on its name, or on its strategy and compressor, never
    on its position in a figure (see arm_style): the same arm looks the same everywhere;
  - --width column|full sizes a figure for a paper's column (3.3 in) or full text width (7 in),
    with fonts that stay readable at that size; panels go side by side at full width and are
    stacked at column width; legends get their own row under the panels, never over the data.
"""
import hashlib
import json
import math
import os
import re
import shlex
import sys
import textwrap

import matplotlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_helper  # noqa: E402  (scripts/stats_helper.py)
import hilo_runs  # noqa: E402  (scripts/hilo_runs.py)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.layout_engine import ConstrainedLayoutEngine  # noqa: E402

# --- the one style -------------------------------------------------------------------------------

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), one per
# compressor; the strategy sets line style and marker fill: `hilo` solid and filled, `delta`
# dashed and hollow, `primal` dash-dotted and filled, `full` black. Every plotter takes an arm's
# colour from here (arm_style); none has a colour table of its own.
COMPRESSOR_STYLE = {
    "spar": ("#D55E00", "^"),      # vermillion
    "topk": ("#009E73", "P"),      # bluish green
    "powersgd": ("#CC79A7", "D"),  # reddish purple
    "dense": ("#0072B2", "s"),     # blue
    "randk": ("#E69F00", "X"),     # orange
    "quant": ("#56B4E9", "*"),     # sky blue
    "sparq": ("#882255", "v"),     # wine (Tol)
    "pulse": ("#44AA99", "h"),     # teal (Tol)
}
# Arms known by name whose look is not their strategy + compressor.
NAMED_STYLE = {
    "full": ("black", "o"),
    "full-bf16": ("black", "o"),
    "full-fp32": ("#666666", "s"),
    "train-low": ("#8C510A", "v"),
}
STRATEGIES = ("hilo", "delta", "primal", "full")
# Arms of no known kind: a colour and marker chosen by a hash of the name (stable everywhere).
_EXTRA_COLOURS = ["#999933", "#882255", "#44AA99", "#332288", "#AA4499", "#117733", "#88CCEE",
                  "#DDCC77"]
_EXTRA_MARKERS = ["h", "p", "8", "<", ">", "d", "H", "1"]

WIDTHS_IN = {"column": 3.3, "full": 7.0}
FONT_PT = {"column": 7.0, "full": 8.0}


def parse_arm_name(name):
    """(strategy, compressor) read from a name like 'hilo-spar' or 'delta-topk-ef'; None when
    the name does not say."""
    parts = name.split("-")
    if len(parts) >= 2 and parts[0] in STRATEGIES and parts[1] in COMPRESSOR_STYLE:
        return parts[0], parts[1]
    return None, None


def arm_style(name, strategy=None, compressor=None):
    """matplotlib keyword arguments (color, marker, linestyle, markerfacecolor) of an arm: by its
    name when it is a known one, else by its strategy and compressor (given, or read from a name
    like 'delta-spar'), else by a hash of the name."""
    if name in NAMED_STYLE:
        colour, marker = NAMED_STYLE[name]
        dashed = name == "full-fp32"
        return dict(color=colour, marker=marker, linestyle="--" if dashed else "-",
                    markerfacecolor=colour)
    if not (strategy and compressor):
        s, c = parse_arm_name(name)
        strategy, compressor = strategy or s, compressor or c
    if strategy == "full":
        return dict(color="black", marker="o", linestyle="-", markerfacecolor="black")
    if compressor in COMPRESSOR_STYLE and strategy in ("hilo", "delta", "primal"):
        colour, marker = COMPRESSOR_STYLE[compressor]
        # One colour per compressor; the strategy is the line and the marker's fill: hilo solid
        # and filled, delta dashed and hollow, primal dash-dotted and half filled.
        hollow = strategy == "delta"
        line = {"hilo": "-", "delta": "--", "primal": "-."}[strategy]
        kw = dict(color=colour, marker=marker, linestyle=line,
                  markerfacecolor="white" if hollow else colour)
        if strategy == "primal":
            kw.update(fillstyle="bottom", markerfacecoloralt="white")
        return kw
    h = int(hashlib.sha1(name.encode()).hexdigest(), 16)
    colour = _EXTRA_COLOURS[h % len(_EXTRA_COLOURS)]
    marker = _EXTRA_MARKERS[(h // len(_EXTRA_COLOURS)) % len(_EXTRA_MARKERS)]
    return dict(color=colour, marker=marker, linestyle="-", markerfacecolor=colour)


def style(name, strategy=None, compressor=None):
    """(colour, marker) of an arm (see arm_style)."""
    s = arm_style(name, strategy, compressor)
    return s["color"], s["marker"]


def row_style(row):
    """arm_style of a CSV row that has arm (and maybe strategy, compressor) columns."""
    return arm_style(row.get("arm", ""), row.get("strategy"), row.get("compressor"))


def series_style(index):
    """A colour and marker for the index-th of several series that are not arms (combinations,
    runs): a fixed sequence, the same in every figure."""
    colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
               "#999933"]
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    return colours[index % len(colours)], markers[index % len(markers)]


# Ablation variants of one arm (figure 5's arms: spar, spar-no-ef, ...): the label that says what
# changed against the default, by the name's suffix after the compressor.
VARIANT_LABELS = {
    "": "default (EF, greedy, bf16)",
    "no-ef": "no error feedback",
    "uniform": "uniform ranks",
    "fp32": "fp32 values",
    "fp16": "fp16 values",
    "int8": "int8 values",
}


def variant_label(name, compressor):
    """'no error feedback' for spar-no-ef (compressor spar); the name itself for an unknown
    variant."""
    rest = name[len(compressor):].lstrip("-") if name.startswith(compressor) else None
    if rest is None:
        return name
    return VARIANT_LABELS.get(rest, rest)


ARM_LABELS = {
    "full": "full sync",
    "full-bf16": "full sync (bf16)",
    "full-fp32": "full sync (fp32)",
    "train-low": "train low (full sync, low rank)",
}
STRATEGY_LABELS = {"hilo": "HiLo", "delta": "delta", "primal": "primal"}
COMPRESSOR_LABELS = {"spar": "Spar", "topk": "top-k", "powersgd": "PowerSGD", "dense": "dense",
                     "randk": "rand-k", "quant": "quant", "sparq": "sparq", "pulse": "pulse"}


def arm_label(name, strategy=None, compressor=None):
    """A legend label: 'HiLo + Spar' for hilo-spar, 'delta + top-k' for delta-topk; other names
    as they are."""
    if name in ARM_LABELS:
        return ARM_LABELS[name]
    s, c = parse_arm_name(name)
    if not s:
        return name
    label = f"{STRATEGY_LABELS.get(s, s)} + {COMPRESSOR_LABELS.get(c, c)}"
    rest = name[len(f"{s}-{c}"):].lstrip("-")
    return f"{label} ({rest})" if rest else label


def setup_style(width):
    """rcParams for a figure of the given width ('column' or 'full')."""
    pt = FONT_PT[width]
    matplotlib.rcParams.update({
        "font.size": pt,
        "axes.titlesize": pt,
        "axes.labelsize": pt,
        "xtick.labelsize": pt - 1,
        "ytick.labelsize": pt - 1,
        "legend.fontsize": pt - 1,
        "figure.titlesize": pt + 1,
        "lines.linewidth": 1.2,
        "lines.markersize": 4 if width == "column" else 5,
        "axes.linewidth": 0.6,
        "grid.linewidth": 0.5,
        "xtick.major.width": 0.6,
        "ytick.major.width": 0.6,
        "legend.frameon": False,
        "legend.handlelength": 2.2,
        "pdf.fonttype": 42,  # editable text in the PDF
        "ps.fonttype": 42,
    })


def panel_grid(width, n, full_cols=None):
    """(rows, cols) of n panels: side by side at full width (at most full_cols, default 3, per
    row), stacked at column width."""
    if width == "column":
        return n, 1
    cols = min(n, full_cols or 3)
    return math.ceil(n / cols), cols


def new_figure(width, n_panels, panel_h_in=None, full_cols=None, legend_rows=0,
               sharex=False):
    """A figure of n_panels axes laid out for `width`, plus an axis-less legend row of
    legend_rows text lines under them (legend_ax is None when legend_rows is 0).
    Returns (fig, axes list, legend_ax)."""
    setup_style(width)
    rows, cols = panel_grid(width, n_panels, full_cols)
    w = WIDTHS_IN[width]
    if panel_h_in is None:
        panel_h_in = 2.0 if width == "column" else 2.4
    legend_h = legend_rows * FONT_PT[width] * 1.45 / 72 + (0.08 if legend_rows else 0)
    fig = plt.figure(figsize=(w, rows * panel_h_in + legend_h),
                     layout=ConstrainedLayoutEngine(h_pad=0.02, w_pad=0.02))
    heights = [panel_h_in] * rows + ([legend_h] if legend_rows else [])
    gs = fig.add_gridspec(len(heights), cols, height_ratios=heights)
    axes = []
    for i in range(n_panels):
        r, c = divmod(i, cols)
        kw = {"sharex": axes[0]} if sharex and axes else {}
        axes.append(fig.add_subplot(gs[r, c], **kw))
    legend_ax = None
    if legend_rows:
        legend_ax = fig.add_subplot(gs[rows, :])
        legend_ax.axis("off")
    return fig, axes, legend_ax


def figure_with_legend(width, body_h_in, legend_rows):
    """A figure of the given width whose body (a GridSpec cell to subdivide, returned as a
    SubplotSpec) is body_h_in tall, plus an axis-less legend row (None when legend_rows is 0).
    Returns (fig, body, legend_ax)."""
    setup_style(width)
    legend_h = legend_rows * FONT_PT[width] * 1.45 / 72 + (0.08 if legend_rows else 0)
    fig = plt.figure(figsize=(WIDTHS_IN[width], body_h_in + legend_h),
                     layout=ConstrainedLayoutEngine(h_pad=0.02, w_pad=0.02))
    heights = [body_h_in] + ([legend_h] if legend_rows else [])
    gs = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    legend_ax = None
    if legend_rows:
        legend_ax = fig.add_subplot(gs[1, 0])
        legend_ax.axis("off")
    return fig, gs[0, 0], legend_ax


def legend_columns(width, labels):
    """How many legend columns fit the width given the longest label."""
    longest = max((len(t) for t in labels), default=10)
    chars_per_col = longest + 6  # handle + padding
    chars = WIDTHS_IN[width] * 72 / (FONT_PT[width] * 0.55)
    return max(1, min(len(labels), int(chars // chars_per_col)))


def legend_rows_needed(width, labels):
    return math.ceil(len(labels) / legend_columns(width, labels)) if labels else 0


def put_legend(legend_ax, width, handles, labels):
    """Draws the legend in its own row (see new_figure)."""
    if legend_ax is None or not handles:
        return
    legend_ax.legend(handles, labels, loc="center", ncol=legend_columns(width, labels),
                     borderaxespad=0, columnspacing=1.2, handletextpad=0.5)


def collect_legend(axes):
    """Unique (handles, labels) of all axes, in order of first appearance."""
    seen, handles, labels = set(), [], []
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in seen and not l.startswith("_"):
                seen.add(l)
                handles.append(h)
                labels.append(l)
    return handles, labels


def panel_title(ax, letter, text):
    ax.set_title(f"({letter}) {text}", loc="left")


# --- reading -------------------------------------------------------------------------------------

# The sweep_*.csv names the plotters accept for a sweep folder without them: each joins that file
# of every finished run (see scripts/sweep.py).
JOINED_FILES = {"sweep_steps.csv": "steps.csv", "sweep_workers.csv": "workers.csv",
                "sweep_rollouts.csv": "rollouts.csv", "sweep_allocation.csv": "allocation.csv"}


def read_joined(sweep_dir, run_file):
    """Rows of run_file joined over the finished runs of the sweep in sweep_dir (None when the
    folder has no sweep.json), as sweep.py --concatenate would write them."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sweep  # noqa: E402  (scripts/sweep.py)

    joined = sweep.concatenate_sweep(sweep_dir, run_file)
    if joined is None:
        return None
    header, rows = joined
    return [{h: ("" if r.get(h) is None else str(r.get(h))) for h in header} for r in rows]


def read_csv(path, only_ok=True):
    """All rows of a CSV as dicts; exits with a message when the file is missing or empty.
    When the file has a `status` column (sweep.csv), rows whose status is not `ok` (failed,
    interrupted or not-run combinations) are dropped with a warning naming them and their logs,
    unless only_ok is False. Leading '#' lines, which older files of this project carried, are
    skipped (their provenance now lives in NAME.csv.meta.json)."""
    joined = JOINED_FILES.get(os.path.basename(path))
    if not os.path.exists(path) and joined:
        rows = read_joined(os.path.dirname(path) or ".", joined)
        if rows is None:
            sys.exit(f"{sys.argv[0]}: {path}: no such file, and no sweep.json next to it")
    else:
        if not os.path.exists(path):
            sys.exit(f"{sys.argv[0]}: {path}: no such file")
        rows = hilo_runs.read_csv(path)
    if not rows:
        sys.exit(f"{sys.argv[0]}: {path}: no rows")
    if only_ok and "status" in rows[0]:
        bad = [r for r in rows if r["status"] != "ok"]
        if bad:
            shown = {r.get("combo", "?"): (r["status"], r.get("log", "")) for r in bad}
            print(f"{sys.argv[0]}: warning: {path}: {len(shown)} combination(s) not plotted "
                  "(did not finish): " + "; ".join(f"{c} ({s}, log {l})"
                                                   for c, (s, l) in list(shown.items())[:5]) +
                  (" ..." if len(shown) > 5 else ""), file=sys.stderr)
        rows = [r for r in rows if r["status"] == "ok"]
        if not rows:
            sys.exit(f"{sys.argv[0]}: {path}: no finished combination")
    return rows


def seeds_beside(steps_csv):
    """The seeds of the runs behind steps_csv: the sweep.csv beside a sweep_steps.csv, or the
    summary.json beside a run's steps.csv; [] when neither is there."""
    d = os.path.dirname(os.path.abspath(steps_csv))
    sweep = os.path.join(d, "sweep.csv")
    if os.path.basename(steps_csv).startswith("sweep_") and os.path.exists(sweep):
        return sorted({r["seed"] for r in read_csv(sweep) if r.get("seed")}, key=int)
    summary = os.path.join(d, "summary.json")
    if os.path.exists(summary):
        with open(summary, encoding="utf-8") as f:
            seed = json.load(f).get("seed")
        return [str(seed)] if seed is not None else []
    return []


def read_meta(csv_path):
    """The provenance sidecar of a CSV: NAME.csv.meta.json next to it, or the sweep.json of the
    sweep folder it belongs to; {} when there is none."""
    for p in (csv_path + ".meta.json",
              os.path.join(os.path.dirname(csv_path) or ".", "sweep.json")):
        if os.path.exists(p):
            try:
                with open(p) as f:
                    return json.load(f)
            except ValueError:
                return {}
    return {}


def grid_columns(csv_path, rows):
    """The grid columns of a sweep CSV, from its sweep.json (paths of --cross and --grid)."""
    meta = read_meta(csv_path)
    paths = [a["path"] for a in meta.get("cross", []) + meta.get("grid", [])]
    return [p for p in paths if p in rows[0]]


def combo_label(row, grid_cols):
    """A short label of a sweep row's combination from its grid values: 'budget 1.6%' for
    arms[hilo-spar].budget=1.6%; the combo slug when the grid columns are unknown."""
    if not grid_cols:
        return row.get("combo", "")
    parts = []
    for c in grid_cols:
        name = [x for x in re.split(r"[.\[\]]+", c) if x][-1]
        parts.append(f"{name} {row.get(c, '')}")
    return ", ".join(parts)


def require(rows, columns, path):
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        sys.exit(f"{sys.argv[0]}: {path}: missing column(s) {', '.join(missing)}; "
                 f"has {', '.join(rows[0].keys())}")


def num(text):
    """float of a CSV cell; None when empty or not a number."""
    if text is None or text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return None


_UNITS = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def num_or_text(text):
    """A sort key: the number a cell starts with ('1.6%' -> 1.6), text after every number."""
    m = re.match(r"[-+]?\d*\.?\d+(e[-+]?\d+)?", text or "")
    return (0, float(m.group(0)), text) if m else (1, 0.0, text or "")


def parse_quantity(text):
    """Numeric value of a cell that may carry a unit: '100Mbps' -> 1e8 (bit/s), '40ms' -> 0.04 (s),
    '1.6%' -> 1.6, '64KiB' -> 65536; plain numbers pass through. None when it cannot be read."""
    if text is None:
        return None
    t = text.strip()
    v = num(t)
    if v is not None:
        return v
    m = re.fullmatch(r"([0-9.eE+-]+)\s*([A-Za-z%]*)", t)
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    if unit == "%":
        return value
    m2 = re.fullmatch(r"([kKMGT]?)(bps|Bps)", unit)
    if m2:
        return value * _UNITS[m2.group(1)] * (8 if m2.group(2) == "Bps" else 1)
    times = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}
    if unit in times:
        return value * times[unit]
    m3 = re.fullmatch(r"([kKMGT]?)(i?)B", unit)
    if m3:
        base = 1024 if m3.group(2) else 1000
        power = {"": 0, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4}[m3.group(1)]
        return value * base ** power
    return None


def format_bandwidth(bps, compact=False):
    """'100 Mbps', or compact '100M' (for tick labels under an axis label that names bit/s)."""
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g}{unit[0]}" if compact else f"{bps / scale:g} {unit}"
    return f"{bps:g}" if compact else f"{bps:g} bps"


def add_output_args(parser):
    """The options every plot shares: --where row filters, --width and the --out path."""
    parser.add_argument("--where", action="append",
                        help="keep rows with COLUMN=VALUE (repeatable)")
    parser.add_argument("--width", choices=sorted(WIDTHS_IN), default="full",
                        help="figure width: a paper's column (3.3 in) or full text width (7 in); "
                             "default %(default)s")
    parser.add_argument("--no-note", action="store_true",
                        help="no 'made by' command line in small print (it stays in the "
                             "PNG/PDF metadata)")
    parser.add_argument("--out", required=True,
                        help="output path without extension (.png and .pdf)")


def filter_rows(rows, where):
    """Keeps rows whose columns equal the given values; `where` is a list of 'COLUMN=VALUE'."""
    for cond in where or []:
        if "=" not in cond:
            sys.exit(f"{sys.argv[0]}: --where {cond!r}: expected COLUMN=VALUE")
        col, value = cond.split("=", 1)
        if col not in rows[0]:
            sys.exit(f"{sys.argv[0]}: --where {cond!r}: no column {col!r}")
        rows = [r for r in rows if r[col] == value]
        if not rows:
            sys.exit(f"{sys.argv[0]}: --where {cond!r}: no row matches")
    return rows


def select_arms(rows, arms):
    """Rows of the listed arms (comma-separated, in that order); all arms when empty."""
    if not arms:
        return rows, list(dict.fromkeys(r["arm"] for r in rows))
    wanted = [a for a in arms.split(",") if a]
    present = set(r["arm"] for r in rows)
    missing = [a for a in wanted if a not in present]
    if missing:
        print(f"{sys.argv[0]}: warning: arm(s) {', '.join(missing)} not in the data "
              f"(has {', '.join(sorted(present))})", file=sys.stderr)
    return [r for r in rows if r["arm"] in wanted], [a for a in wanted if a in present]


def higher_is_better(rows):
    """From the quality_metric / higher_is_better columns; None when they do not say."""
    hib = rows[0].get("higher_is_better")
    if hib in ("true", "false"):
        return hib == "true"
    metric = rows[0].get("quality_metric") or ""
    if metric == "reverse_kl":
        return False
    if metric == "mean_reward":
        return True
    return None


def quality_label(rows, short=False):
    """Axis label of final_quality / quality from the quality_metric column when present."""
    metric = rows[0].get("quality_metric") or ""
    hib = rows[0].get("higher_is_better")
    if metric == "reverse_kl" or (not metric and hib == "false"):
        return "reverse KL (lower is better)" if short else \
            "reverse KL to teacher (nats/token, lower is better)"
    if metric == "mean_reward":
        return "mean reward (higher is better)"
    if metric:
        return metric + (" (higher is better)" if hib == "true" else
                         " (lower is better)" if hib == "false" else "")
    return "quality"


def workload_name(rows):
    metric = rows[0].get("quality_metric") or ""
    return {"reverse_kl": "distillation", "mean_reward": "GRPO"}.get(metric, metric or "workload")


# --- statistics ----------------------------------------------------------------------------------

# Means and intervals come from the one helper (scripts/stats_helper.py, scipy).
t975 = stats_helper.t_quantile
mean_ci = stats_helper.mean_ci
mean = stats_helper.mean
stdev = stats_helper.stdev
INTERVAL_KIND = stats_helper.INTERVAL_KIND
BOOTSTRAP_KIND = stats_helper.BOOTSTRAP_KIND


def interval_note(ns, kind=None):
    """What a figure's points are, for its caption or axis: 'mean, 95% t-interval, n=3' (n: the
    seeds per point, a range when they differ; `kind` names another interval), or 'n=1 seed, no
    interval'."""
    ns = sorted({int(n) for n in ns if n})
    if not ns:
        return ""
    if ns == [1]:
        return "n=1 seed, no interval"
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    return f"mean, {kind or INTERVAL_KIND}, n={n}"


# --- adapter layout names ------------------------------------------------------------------------

LORA_TARGETS = ("q", "k", "v", "o", "up", "down")  # models/tiny-lm.cc: LoraTargetNames()


def matrix_names(n, targets=LORA_TARGETS):
    """Short names ('L0 q.A') of the n matrices of an adapter in layout order: per layer, per
    target in `targets` order, factor A then B (the order of models/tiny-lm.cc). None when n is
    not a whole number of layers."""
    per_layer = 2 * len(targets)
    if n <= 0 or n % per_layer:
        return None
    return [f"L{i // per_layer} {targets[(i % per_layer) // 2]}.{'AB'[i % 2]}" for i in range(n)]


def short_matrix_name(name):
    """'layers.0.attn.q.lora_A' (allocation.csv's matrix_name) -> 'L0 q.A'; other names as
    they are."""
    m = re.match(r"^layers\.(\d+)\.(?:attn|mlp)?\.?(\w+)\.lora_([AB])$", name)
    return f"L{m.group(1)} {m.group(2)}.{m.group(3)}" if m else name


# --- axes and saving -----------------------------------------------------------------------------

def command_line():
    return "/usr/bin/python3 " + " ".join(shlex.quote(a) for a in sys.argv)


def save(fig, out, note=True, width=None):
    """Writes OUT.png and OUT.pdf (OUT may end in .png or .pdf). The command that made the figure
    goes into both files' metadata and, unless note is False, in small print under the figure,
    wrapped to its width."""
    stem = re.sub(r"\.(png|pdf)$", "", out)
    d = os.path.dirname(stem)
    if d:
        os.makedirs(d, exist_ok=True)
    cmd = command_line()
    if note:
        w_in, h_in = fig.get_size_inches()
        pt = 4.5
        chars = int(w_in * 72 / (pt * 0.52))
        text = "\n".join(textwrap.wrap("made by: " + cmd, chars, break_long_words=True,
                                       break_on_hyphens=False))
        lines = text.count("\n") + 1
        frac = (lines * pt * 1.25 + 3) / 72 / h_in
        engine = fig.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(rect=(0, frac, 1, 1 - frac))
        else:
            fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, frac + 0.08))
        fig.text(0.005, 0.002, text, fontsize=pt, color="gray", ha="left", va="bottom",
                 linespacing=1.1)
    declutter_ticks(fig)
    fig.savefig(stem + ".png", dpi=200, metadata={"Software": "matplotlib", "Description": cmd})
    fig.savefig(stem + ".pdf", metadata={"Subject": cmd})
    plt.close(fig)
    print(f"wrote {stem}.png and {stem}.pdf", file=sys.stderr)


def declutter_ticks(fig, pad_pt=2.0):
    """Blanks tick labels that would overlap their neighbour (keeping the first, then every
    label clear of the last kept one), on every axis of the figure; the ticks stay."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    pad = pad_pt * fig.dpi / 72
    for ax in fig.axes:
        if not ax.axison:
            continue
        for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
            lo, hi = sorted(axis.get_view_interval())
            ticks = [t for t in axis.get_major_ticks()
                     if lo - 1e-12 * abs(lo) <= t.get_loc() <= hi + 1e-12 * abs(hi)]
            shown = [t for t in ticks if t.label1.get_visible() and t.label1.get_text()]
            if len(shown) < 2 or (horizontal and shown[0].label1.get_rotation() % 180):
                continue  # slanted labels (rotated on purpose) do not collide side by side
            boxes = [t.label1.get_window_extent(renderer) for t in shown]
            order = sorted(range(len(shown)), key=lambda i: boxes[i].x0 if horizontal
                           else boxes[i].y0)
            keep, last = set(), None
            for i in order:
                b = boxes[i]
                start, end = (b.x0, b.x1) if horizontal else (b.y0, b.y1)
                if last is None or start >= last + pad:
                    keep.add(i)
                    last = end
            if len(keep) == len(shown):
                continue
            locs = [t.get_loc() for t in ticks]
            text = {t.get_loc(): t.label1.get_text() for t in ticks}
            hidden = {shown[i].get_loc() for i in range(len(shown)) if i not in keep}
            axis.set_ticks(locs)
            axis.set_ticklabels(["" if x in hidden else text[x] for x in locs])


def share_axes(ax, handles, ys, goal=True):
    """A share-of-full-sync panel: the full-sync line at 1, optionally the goal corner (0.98 at
    1.6% of the bytes), a readable log x axis and a y range padded around `ys`. Adds the lines'
    handles to `handles` under "_full" and "_goal"."""
    handles.setdefault("_full", ax.axhline(1.0, color="black", lw=0.8))
    if goal:
        handles.setdefault("_goal", ax.plot([1.6, 1.6, 0.3], [min(ys), 0.98, 0.98],
                                            color="black", ls="--", lw=0.8)[0])
    ax.set_xscale("log")
    log_axis(ax.xaxis)
    lo, hi = min(ys), max(ys)
    pad = 0.06 * (hi - lo if hi > lo else 1.0)
    ax.set_ylim(lo - pad, hi + pad)


def mark_clipped_intervals(ax, bars, note=True):
    """Marks every interval the frame cuts: a small arrowhead in the arm's colour at the edge it
    leaves through (bars: (x, mean, half-width, colour)), and, when any is cut, a note in the
    panel. Call after the y range is final. Returns the number of cut intervals."""
    lo, hi = ax.get_ylim()
    cut = 0
    for x, m, half, colour in bars:
        for end, edge, marker in ((m + half, hi, "^"), (m - half, lo, "v")):
            beyond = end > edge if marker == "^" else end < edge
            if beyond:
                ax.plot([x], [edge], marker=marker, color=colour, markersize=4, linestyle="none",
                        clip_on=False, zorder=4)
                cut += 1
    if cut and note:
        ax.text(0.995, 0.02, "\u25b2\u25bc interval cut at the frame", transform=ax.transAxes,
                ha="right", va="bottom", fontsize="x-small", color="dimgray")
    return cut


def axis_break(ax, y):
    """Two short diagonal strokes across the left spine at data height y: the axis is not
    continuous there (e.g. a log axis whose floor stands for 0)."""
    from matplotlib.transforms import blended_transform_factory
    t = blended_transform_factory(ax.transAxes, ax.transData)
    for dx in (-0.006, 0.006):
        ax.plot([dx - 0.008, dx + 0.008], [y / 1.35, y * 1.35], transform=t, color="black",
                linewidth=0.8, clip_on=False, zorder=5)


def log_axis(axis, subs=(1.0, 2.0, 5.0)):
    """Readable log-scale ticks: 1, 2, 5, 10, 20, 50 ... labelled as plain numbers."""
    from matplotlib.ticker import LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(plain_formatter())
    axis.set_minor_formatter(NullFormatter())


def thin_log_axis(axis, lo, hi, max_ticks=6):
    """Log ticks 1-2-5 per decade, or 1-per-decade (or fewer) when that would crowd the axis."""
    decades = math.log10(max(hi, 1e-300) / max(lo, 1e-300)) if lo > 0 and hi > 0 else 1
    if decades * 3 <= max_ticks:
        log_axis(axis, (1.0, 2.0, 5.0))
    elif decades * 2 <= max_ticks:
        log_axis(axis, (1.0, 3.0))
    else:
        log_axis(axis, (1.0,))


def plain_formatter():
    """Tick labels like 3, 30, 0.5 instead of 3x10^0 on log axes."""
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _pos: f"{v:g}")


def bandwidth_axis(ax, values, width, label="link bandwidth"):
    """A log x axis with one labelled tick per bandwidth value ('100M' = 100 Mbit/s when the
    full labels would crowd the axis)."""
    ticks = sorted(set(values))
    ax.set_xscale("log")
    ax.set_xticks(ticks)
    compact = width == "column" or len(ticks) > 3
    crowded = len(ticks) > 4  # every value keeps its label: tilted rather than dropped
    ax.set_xticklabels([format_bandwidth(t, compact=compact) for t in ticks],
                       rotation=40 if crowded else 0, ha="right" if crowded else "center",
                       rotation_mode="anchor" if crowded else "default")
    ax.minorticks_off()
    ax.set_xlabel(label + (" (bit/s, log scale)" if compact else " (log scale)"))
    if len(ticks) > 1:
        lo, hi = min(ticks), max(ticks)
        pad = (hi / lo) ** 0.06
        ax.set_xlim(lo / pad, hi * pad)
