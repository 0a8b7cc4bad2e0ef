"""Shared helpers of the scripts/plot_*.py figure scripts (matplotlib only; they read CSVs only).

The plotters read the CSVs written by `hilo-sim run` (steps.csv, workers.csv, allocation.csv) or
their concatenations written by scripts/sweep.py (sweep.csv, sweep_steps.csv, sweep_workers.csv,
sweep_allocation.csv, which carry a `combo` column and one column per grid path in front).
"""
import csv
import math
import os
import re
import shlex
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# One colour and marker per well-known arm name, so every figure uses the same legend.
ARM_STYLE = {
    "full": ("black", "o"),
    "full-bf16": ("black", "o"),
    "full-fp32": ("dimgray", "s"),
    "train-low": ("tab:brown", "v"),
    "hilo-dense": ("tab:blue", "s"),
    "hilo-powersgd": ("tab:purple", "D"),
    "hilo-spar": ("tab:red", "^"),
    "hilo-topk": ("tab:green", "P"),
    "hilo-randk": ("tab:olive", "X"),
    "hilo-quant": ("tab:cyan", "*"),
    "delta-spar": ("tab:orange", "<"),
    "delta-topk": ("tab:pink", ">"),
}
_FALLBACK = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
             "tab:pink", "tab:gray", "tab:olive", "tab:cyan"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]


def style(name, index=0):
    """(colour, marker) of a series."""
    if name in ARM_STYLE:
        return ARM_STYLE[name]
    return _FALLBACK[index % len(_FALLBACK)], _MARKERS[index % len(_MARKERS)]


def read_csv(path):
    """All rows of a CSV as dicts; exits with a message when the file is missing or empty.
    Lines starting with '#' (the "# command: ..." provenance lines of our CSVs) are skipped."""
    if not os.path.exists(path):
        sys.exit(f"{sys.argv[0]}: {path}: no such file")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        sys.exit(f"{sys.argv[0]}: {path}: no rows")
    return rows


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


def format_bandwidth(bps):
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} bps"


def grid_columns(rows, known):
    """The override columns a sweep CSV carries: those between `combo` and the first known
    (run-written) column."""
    cols = list(rows[0].keys())
    if "combo" not in cols:
        return []
    out = []
    for c in cols[cols.index("combo") + 1:]:
        if c in known:
            break
        out.append(c)
    return out


def add_output_args(parser):
    """The options every sweep plot shares: --where row filters and the --out path."""
    parser.add_argument("--where", action="append",
                        help="keep rows with COLUMN=VALUE (repeatable)")
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


def quality_label(rows):
    """Axis label of final_quality / quality from the quality_metric column when present."""
    metric = rows[0].get("quality_metric") or ""
    hib = rows[0].get("higher_is_better")
    if metric == "reverse_kl" or (not metric and hib == "false"):
        return "reverse KL to teacher (nats/token, lower is better)"
    if metric == "mean_reward":
        return "mean reward (higher is better)"
    if metric:
        return metric + (" (higher is better)" if hib == "true" else
                         " (lower is better)" if hib == "false" else "")
    return "quality"


def command_line():
    return "/usr/bin/python3 " + " ".join(shlex.quote(a) for a in sys.argv)


def save(fig, out, note=True):
    """Writes OUT.png and OUT.pdf (OUT may end in .png or .pdf), with the command that made the
    figure in small print at the bottom."""
    stem = re.sub(r"\.(png|pdf)$", "", out)
    d = os.path.dirname(stem)
    if d:
        os.makedirs(d, exist_ok=True)
    if note:
        fig.text(0.005, 0.003, "made by: " + command_line(), fontsize=5, color="gray",
                 ha="left", va="bottom")
    fig.savefig(stem + ".png", dpi=150)
    fig.savefig(stem + ".pdf")
    plt.close(fig)
    print(f"wrote {stem}.png and {stem}.pdf", file=sys.stderr)


def log_axis(axis):
    """Readable log-scale ticks: 1, 2, 5, 10, 20, 50 ... labelled as plain numbers."""
    from matplotlib.ticker import LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(plain_formatter())
    axis.set_minor_formatter(NullFormatter())


def plain_formatter():
    """Tick labels like 3, 30, 0.5 instead of 3x10^0 on log axes."""
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _pos: f"{v:g}")


def mean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(xs) / len(xs) if xs else float("nan")


def stdev(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
