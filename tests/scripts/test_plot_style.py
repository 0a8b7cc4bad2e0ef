#!/usr/bin/python3
"""Renders every plot script on small committed CSVs and checks the one style (CTest:
scripts.plot_style). Needs only Python and matplotlib, no simulator.

Usage: tests/scripts/test_plot_style.py   (from the repository root)

Checks:
  1. each scripts/plot_*.py runs in this process on small committed inputs (results/paper,
     results/quality, results/workloads, results/validation/tcp-trace), its figure captured
     instead of written;
  2. every legend entry that names an arm, and every bar labelled with an arm, has the colour
     plot_common.arm_style gives that arm: one colour table for every figure;
  3. no plot script other than plot_common.py holds an arm -> colour table of its own;
  4. every figure drawn from seeds says n and the interval kind (plot_common.interval_note) in
     a title or axis label;
  5. plot_timeline's busy share is the union of a worker's busy intervals (never over 100%);
  6. colour maps drawn side by side (plot_allocation's panels) share one colour scale;
  7. no titled panel is empty (fig7's panel (b) was, when no arm reached the target).
"""
import glob
import io
import os
import re
import runpy
import sys
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import plot_common as pc  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

P = os.path.join(ROOT, "results")
# (script, arguments, drawn from seeds: must name n and the interval kind)
CASES = [
    ("plot_speedup.py", [f"{P}/paper/fig1/sweep.csv"], False),
    ("plot_pareto.py", [f"{P}/paper/fig5/sweep.csv", "--steps", f"{P}/paper/fig5/sweep_steps.csv"],
     True),
    ("plot_curves.py", [f"{P}/paper/fig3/sweep_steps.csv"], False),
    ("plot_allocation.py", [f"{P}/paper/fig4/sweep_allocation.csv"], False),  # two budgets
    ("plot_ablations.py", [f"{P}/paper/fig5/sweep.csv"], True),
    ("plot_consistency.py", [f"{P}/paper/fig6/sweep_steps.csv", f"{P}/paper/fig6/sweep_workers.csv"],
     False),
    ("plot_time_to_target.py", [f"{P}/paper/fig7/sweep.csv"], True),
    ("plot_timeline.py", [f"{P}/paper/fig8/runs/max-staleness-0"], False),
    ("plot_protocol.py", [f"{P}/quality/table.csv"], True),  # the planted grid's table
    ("plot_protocol.py", [f"{P}/quality/protocol/protocol-table.csv"], True),
    ("plot_tcp_trace.py", [f"{P}/validation/tcp-trace/100Mbps-40ms-loss0/{side}.csv"
                           for side in ("packet", "flow", "emulation")], False),
]
_checks = Checks()
check = _checks.check


def render(script, args):
    """Runs the script as __main__ with pc.save capturing the figure; returns (figures, stdout)."""
    figures = []
    saved = pc.save
    pc.save = lambda fig, out, **kw: figures.append(fig)
    argv = sys.argv
    sys.argv = [os.path.join(SCRIPTS, script)] + args + ["--out", "/nonexistent/captured"]
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            runpy.run_path(os.path.join(SCRIPTS, script), run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            figures.append(None)
    finally:
        pc.save = saved
        sys.argv = argv
    return figures, out.getvalue()


def arm_names():
    """{arm name: its expected style} over the committed sweeps and quality tables (the style
    follows the arm's strategy and compressor when the CSV names them)."""
    names = {}
    for path in glob.glob(f"{P}/paper/*/sweep.csv") + [f"{P}/quality/table.csv"]:
        for r in pc.read_csv(path, only_ok=False):
            name = r.get("arm") or r.get("scheme") or ""
            if name:
                names.setdefault(name, pc.arm_style(name, r.get("strategy"), r.get("compressor")))
    return names


def legend_colours(fig):
    """(label, hex colour) of every legend entry of the figure."""
    out = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    for leg in legends:
        handles = getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", [])
        for h, t in zip(handles, leg.get_texts()):
            colour = None
            if hasattr(h, "get_color"):
                colour = h.get_color()
            elif hasattr(h, "get_facecolor"):
                colour = h.get_facecolor()
            if colour is not None:
                out.append((t.get_text(), to_hex(colour)))
    return out


def drawn(ax):
    """Whether the axes shows data: a data-coordinate line with a finite point, a bar, an image or
    a filled collection (reference lines such as axhline do not count)."""
    import numpy as np
    for line in ax.get_lines():
        if line.get_transform() != ax.transData:
            continue
        y = np.asarray(line.get_ydata(), dtype=float)
        if y.size and np.isfinite(y).any():
            return True
    if ax.get_images() or any(p.get_height() for p in ax.patches if hasattr(p, "get_height")):
        return True
    return any(len(c.get_offsets()) or c.get_paths() for c in ax.collections)


def main():
    styles = arm_names()
    by_label = {pc.arm_label(a): a for a in styles}
    for script, args, seeded in CASES:
        figures, printed = render(script, args)
        ok = figures and all(f is not None for f in figures)
        check(ok, f"{script} renders from committed CSVs", printed[-2000:])
        if not ok:
            continue
        fig = figures[0]
        checked = 0
        for label, colour in legend_colours(fig):
            arm = by_label.get(label)
            if arm:
                checked += 1
                want = to_hex(styles[arm]["color"])
                check(colour == want, f"{script}: legend '{label}' has arm_style's colour",
                      f"{colour} != {want}")
        for ax in fig.axes:
            labels = [t.get_text() for t in ax.get_xticklabels()]
            bars = [p for p in ax.patches if hasattr(p, "get_height") and p.get_height() != 0]
            if labels and len(bars) == len(labels) and all(l in styles for l in labels):
                for label, bar in zip(labels, bars):
                    checked += 1
                    check(to_hex(bar.get_facecolor()) == to_hex(styles[label]["color"]),
                          f"{script}: bar '{label}' has arm_style's colour")
        print(f"     ({checked} arm colour(s) checked in {script})", flush=True)
        for ax in fig.axes:
            title = ax.get_title(loc="left") or ax.get_title()
            if title and ax.axison:
                check(drawn(ax), f"{script}: panel '{title}' draws data (no empty panel)")
        images = [im for ax in fig.axes for im in ax.get_images()]
        if len(images) > 1:
            check(len({im.get_clim() for im in images}) == 1,
                  f"{script}: side-by-side colour maps share one scale",
                  str([im.get_clim() for im in images]))
        if seeded:
            text = " ".join([ax.get_title(loc="left") + " " + ax.get_title() + " " +
                             ax.get_ylabel() + " " + ax.get_xlabel() for ax in fig.axes] +
                            [t.get_text() for t in fig.texts])
            check(re.search(r"n=\d", text) and (pc.INTERVAL_KIND in text or pc.BOOTSTRAP_KIND in text or
                                              "no interval" in text),
                  f"{script}: a seeded figure names n and the interval kind", text[:400])

    # 3. One colour table.
    for path in sorted(glob.glob(os.path.join(SCRIPTS, "plot_*.py"))):
        if path.endswith("plot_common.py"):
            continue
        text = open(path).read()
        own = re.findall(r'"(?:hilo|delta|primal|full|train)[\w-]*":\s*\(\s*"(?:#|tab:)', text)
        check(not own, f"{os.path.basename(path)} has no arm colour table of its own", str(own))

    # 6. Intervals cut by the frame are marked; a log drift axis shows 0 as its own floor.
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.set_ylim(0, 1)
    cut = pc.mark_clipped_intervals(ax, [(1, 0.5, 0.7, "red"), (2, 0.5, 0.1, "blue")])
    check(cut == 2 and len(ax.lines) == 2, "an interval past both edges gets two marks, one "
          "inside the frame none", f"{cut} cut, {len(ax.lines)} marks")
    plt.close(fig)
    figures, printed = render("plot_pareto.py", [f"{P}/paper/fig2/sweep.csv", "--steps",
                                                 f"{P}/paper/fig2/sweep_steps.csv", "--normalize"])
    fig = figures[0] if figures else None
    drift = [a for a in (fig.axes if fig else []) if a.get_ylabel().startswith("max drift")]
    quality = [a for a in (fig.axes if fig else []) if "progress" in a.get_ylabel()]
    if check(drift and quality, "fig2 has a quality and a drift panel"):
        marks = [l for l in quality[0].lines if l.get_marker() in ("^", "v") and
                 not l.get_clip_on()]
        check(marks, "fig2's cut intervals (HiLo + Spar at 0.25%, n=3) are marked at the frame")
        ticks = drift[0].get_yticks()
        labels = [t.get_text() for t in drift[0].get_yticklabels()]
        check(labels and labels[0] == "0" and all(l != "0" for l in labels[1:]) and
              ticks[1] >= 10 * ticks[0], "the drift axis's floor is labelled 0, a decade "
              "below its first number", str(list(zip(ticks, labels))))
        check("(rel. L2)" in drift[0].get_ylabel(), "the drift axis names its unit")

    # 5. The timeline's busy share.
    sys.modules.pop("plot_timeline", None)
    import plot_timeline
    check(plot_timeline.union_length([(0, 2), (1, 3), (5, 6)]) == 4.0 and
          plot_timeline.union_length([(0, 4), (1, 2)]) == 4.0,
          "plot_timeline's busy time counts overlapping intervals once")
    figures, printed = render("plot_timeline.py", [f"{P}/paper/fig8/runs/max-staleness-1"])
    shares = [float(l.split()[-2]) for l in printed.splitlines() if re.search(r"\sw\d+\s", l)]
    check(shares and max(shares) <= 100.0, "no worker is busy more than 100% of the time",
          printed)

    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())
