#!/usr/bin/python3
"""Plots the workload learning curves written by `workload-curves` (results/workloads/*.csv).

Reads only CSV. Usage:
  /usr/bin/python3 scripts/plot_workloads.py results/workloads/curve-*.csv \
      --out results/workloads/learning-curves
Writes OUT.png and OUT.pdf (OUT may end in .png).
"""
import argparse

import plot_common as pc


def read_curve(path):
    """Returns (label, metric, steps, quality, step_cpu_s) for one CSV file."""
    rows = pc.read_csv(path)
    pc.require(rows, ["kind", "preset", "metric", "step", "quality", "step_cpu_s"], path)
    label = f"{rows[0]['kind']} / {rows[0]['preset']}"
    metric = rows[0]["metric"]
    steps = [int(r["step"]) for r in rows if r["quality"]]
    quality = [float(r["quality"]) for r in rows if r["quality"]]
    cpu = [float(r["step_cpu_s"]) for r in rows if r["step_cpu_s"]]
    return label, metric, steps, quality, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="learning-curve CSVs")
    pc.add_output_args(parser)
    args = parser.parse_args()

    curves = [read_curve(p) for p in args.csv]
    metrics = sorted({c[1] for c in curves})
    labels = [f"{c[0]} ({pc.mean(c[4]):.3f} CPU s/step)" for c in curves]
    fig, axes, legend_ax = pc.new_figure(args.width, len(metrics), full_cols=2,
                                         legend_rows=pc.legend_rows_needed(args.width, labels))
    handles = []
    for i, (ax, metric) in enumerate(zip(axes, metrics)):
        for j, (label, m, steps, quality, cpu) in enumerate(curves):
            if m != metric:
                continue
            colour, marker = pc.series_style(j)
            h, = ax.plot(steps, quality, color=colour, marker=marker, markersize=2.5)
            handles.append((j, h))
        ax.set_xlabel("optimizer step (full-state sync)")
        ax.set_ylabel(metric + (" (lower is better)" if metric == "reverse_kl" else
                                " (higher is better)" if metric == "mean_reward" else ""))
        pc.panel_title(ax, "abcdefgh"[i], metric)
        ax.grid(alpha=0.3)
    handles = [h for _, h in sorted(handles, key=lambda t: t[0])]
    pc.put_legend(legend_ax, args.width, handles, labels)
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
