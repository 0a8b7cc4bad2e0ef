#!/usr/bin/python3
"""Compares existing run folders: their summaries side by side with ratios, and their curves
overlaid.

Usage: scripts/compare_runs.py A B [C ...] [--labels 'a;b;c'] [--arms hilo-spar,full]
                               [--out STEM] [--no-plot]

A, B, ... are folders `hilo-sim run ... --out DIR` (or hilo-emu, or one run of a sweep) wrote. For
every arm of A that another run has too (matched by name), one block: each summary.json
figure (update latency p50/p99, bytes per update, step time, simulated time, final quality, ...)
in one column per run, and after each run but A its ratio to A (B/A). Runs nothing.
Figure STEM.png / STEM.pdf (default results/runs/compare-runs/curves, ignored by git): (a) the
learning curve (steps.csv's quality vs simulated time) and (b) the update-latency CDF
(workers.csv) of every run and arm, one colour per arm (the shared style), one line style per
run. Exit codes: 0, 2 when a folder is not a finished run or no arm is shared.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hilo_runs  # noqa: E402

FIELDS = [
    ("update_latency_s.p50", "update latency p50 (s)"),
    ("update_latency_s.p99", "update latency p99 (s)"),
    ("update_latency_s.max", "update latency max (s)"),
    ("wire_bytes_per_update_mean", "wire bytes per update"),
    ("fraction_of_adapter_bytes", "fraction of adapter bytes"),
    ("step_time_s_mean", "step time mean (s)"),
    ("sim_time_s", "simulated time (s)"),
    ("final_quality", "final quality"),
    ("hash_mismatches", "hash mismatches"),
    ("resyncs", "resyncs"),
    ("steps", "steps"),
]
LINESTYLES = ["-", "--", ":", "-."]


def value(arm, path):
    """A numeric summary.json value by its dotted path; None when absent or not a number."""
    v = hilo_runs.summary_field(arm, path)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def num(v):
    return "" if v is None else f"{v:.4g}"


def table(runs, labels, arms):
    """The side-by-side text: per arm a header and one line per field."""
    cols = [labels[0]]
    for lab in labels[1:]:
        cols += [lab, f"{lab}/{labels[0]}" if len(labels) > 2 else "B/A"]
    lines = []
    width = max(len(f) for _, f in FIELDS) + 2
    for arm in arms:
        lines.append(f"arm {arm}")
        lines.append(" " * width + "".join(f"{c:>14}" for c in cols))
        for path, name in FIELDS:
            vals = [value(r.arm(arm), path) for r in runs]
            if all(v is None for v in vals):
                continue
            cells = [num(vals[0])]
            for v in vals[1:]:
                ratio = (hilo_runs.ratio(v, vals[0]) if v is not None and vals[0] is not None
                         else None)
                cells += [num(v), "" if ratio is None else f"{ratio:.3f}"]
            lines.append(f"{name:<{width}}" + "".join(f"{c:>14}" for c in cells))
        lines.append("")
    return "\n".join(lines)


def plot(runs, labels, arms, out):
    import plot_common as pc
    pc.setup_style("full")
    fig, axes, _ = pc.new_figure("full", 2)
    ax_q, ax_l = axes[0], axes[1]
    metric = ""
    for i, (run, lab) in enumerate(zip(runs, labels)):
        ls = LINESTYLES[i % len(LINESTYLES)]
        for arm in arms:
            st = pc.arm_style(arm, run.arm(arm).get("strategy"), run.arm(arm).get("compressor"))
            metric = run.arm(arm).get("quality_metric", metric)
            if "steps" in run.tables:
                rows = [r for r in run.steps.where(arm=arm) if r.get("quality")]
                ax_q.plot([float(r["sim_time_s"]) for r in rows],
                          [float(r["quality"]) for r in rows], color=st["color"], linestyle=ls,
                          marker=st["marker"], markersize=3, markerfacecolor=st["markerfacecolor"],
                          label=f"{pc.arm_label(arm)}, {lab}")
            if "workers" in run.tables:
                xs = sorted(x for x in run.workers.where(arm=arm, hash_ok="1").column("latency_s")
                            if x is not None)
                if xs:
                    ax_l.step(xs, [(k + 1) / len(xs) for k in range(len(xs))], where="post",
                              color=st["color"], linestyle=ls)
    pc.panel_title(ax_q, "a", "learning curve")
    ax_q.set_xlabel("simulated time (s)")
    ax_q.set_ylabel(metric or "quality")
    pc.panel_title(ax_l, "b", "update latency CDF")
    ax_l.set_xlabel("update latency (s)")
    ax_l.set_ylabel("fraction of (version, worker)")
    for ax in (ax_q, ax_l):
        ax.grid(alpha=0.3)
    ax_q.legend(fontsize="x-small")
    pc.save(fig, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", metavar="RUN_DIR")
    ap.add_argument("--labels", default="", help="';'-separated, one per run (default A;B;C...)")
    ap.add_argument("--arms", default="", help="comma-separated (default: every shared arm)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "results", "runs", "compare-runs", "curves"),
        help="figure path without extension (default results/runs/compare-runs/curves)")
    ap.add_argument("--no-plot", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    if len(args.runs) < 2:
        ap.error("needs at least two run folders")
    labels = args.labels.split(";") if args.labels else [chr(ord("A") + i)
                                                         for i in range(len(args.runs))]
    if len(labels) != len(args.runs):
        ap.error(f"--labels names {len(labels)} runs, {len(args.runs)} given")
    try:
        runs = [hilo_runs.load_run(d) for d in args.runs]
    except FileNotFoundError as e:
        print(f"compare_runs.py: {e}", file=sys.stderr)
        return 2
    arms = [a for a in runs[0].arms if all(a in r.arms for r in runs[1:])]
    if args.arms:
        want = args.arms.split(",")
        missing = [a for a in want if a not in arms]
        if missing:
            print(f"compare_runs.py: arm(s) {', '.join(missing)} not in every run (shared: "
                  f"{', '.join(arms) or 'none'})", file=sys.stderr)
            return 2
        arms = want
    if not arms:
        print("compare_runs.py: the runs share no arm (" +
              "; ".join(f"{d}: {', '.join(r.arms)}" for d, r in zip(args.runs, runs)) + ")",
              file=sys.stderr)
        return 2
    for lab, d in zip(labels, args.runs):
        print(f"{lab}: {d}")
    print()
    print(table(runs, labels, arms))
    if not args.no_plot:
        plot(runs, labels, arms, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
