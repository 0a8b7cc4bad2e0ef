#!/usr/bin/python3
"""Share of full sync's progress vs bytes per update, per sync scheme and workload (results/quality).

Reads the table.csv (and, with --runs, the runs.csv) written by scripts/quality_sweep.py:
  /usr/bin/python3 scripts/plot_quality.py results/quality/table.csv \
      --runs results/quality/runs.csv --out results/quality/quality-vs-bytes
One panel per workload: x = measured payload bytes per update as % of the adapter's bf16 bytes
(log scale), y = final quality as a share of full sync's progress on the same seed (mean over
seeds, with the 95% interval as error bars; with --runs every seed as a faint dot). Budgeted
schemes are lines; lossless ones (budget "lossless") single points. The goal of 0.98 at 1.6% is
the dashed corner. Colours and markers are the project's one style (plot_common.arm_style: the
compressor sets the colour, the strategy the line); --width column|full sizes the figure; the
y range follows the data (below 0 when a scheme does worse than no training). Prints the plotted
table.
"""
import argparse

import plot_common as pc


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table_csv", help="table.csv of scripts/quality_sweep.py")
    p.add_argument("--runs", help="runs.csv: draw every seed too")
    p.add_argument("--schemes", default="", help="schemes to draw (comma-separated; default all)")
    p.add_argument("--title", default="", help="figure title (default none)")
    p.add_argument("--task-note", default="planted teachers: a low-rank teacher delta the project "
                   "chose (quality_sweep.py's workloads)",
                   help="what the tasks are, above the panels (default: %(default)s; '' for none)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.table_csv)
    pc.require(rows, ["workload", "scheme", "budget", "fraction_pct", "share_mean", "share_ci95"],
               args.table_csv)
    rows = pc.filter_rows(rows, args.where)
    runs = pc.filter_rows(pc.read_csv(args.runs), args.where) if args.runs else []
    wanted = [s for s in args.schemes.split(",") if s]
    schemes = [s for s in dict.fromkeys(r["scheme"] for r in rows)
               if s != "full" and (not wanted or s in wanted)]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))

    labels = [pc.arm_label(s) for s in schemes] + ["full sync", "goal: 0.98 at 1.6%"]
    fig, axes, legend_ax = pc.new_figure(args.width, len(workloads), full_cols=2,
                                         legend_rows=pc.legend_rows_needed(args.width, labels))
    print(f"{'workload':<9}{'scheme':<18}{'budget':>9}{'% adapter':>11}{'share':>8}{'+-95%':>8}"
          f"{'n':>3}")
    handles = {}
    for ax, workload in zip(axes, workloads):
        ys_all, ns, bars = [1.0], [], []
        for scheme in schemes:
            kw = pc.arm_style(scheme)
            rs = [r for r in rows if r["workload"] == workload and r["scheme"] == scheme]
            rs.sort(key=lambda r: float(r["fraction_pct"]))
            if not rs:
                continue
            xs = [float(r["fraction_pct"]) for r in rs]
            ys = [float(r["share_mean"]) for r in rs]
            es = [float(r["share_ci95"]) for r in rs]
            ys_all += ys
            ns += [r.get("n", "") for r in rs]
            if len(rs) == 1:
                kw = dict(kw, linestyle="none")
            h = ax.errorbar(xs, ys, yerr=es, capsize=2, elinewidth=0.8, **kw)
            bars += [(x, y, e, kw["color"]) for x, y, e in zip(xs, ys, es) if e]
            handles.setdefault(scheme, h.lines[0])
            for r in rs:
                print(f"{workload:<9}{scheme:<18}{r['budget']:>9}{float(r['fraction_pct']):>11.3g}"
                      f"{float(r['share_mean']):>8.3f}{float(r['share_ci95']):>8.3f}{r['n']:>3}")
            pts = [r for r in runs if r["workload"] == workload and r["scheme"] == scheme]
            ax.scatter([float(r["fraction_pct"]) for r in pts],
                       [float(r["share_of_full"]) for r in pts], color=kw["color"], s=5,
                       alpha=0.3, lw=0)
        pc.share_axes(ax, handles, ys_all)
        pc.mark_clipped_intervals(ax, bars)
        ax.set_xlabel("payload per update (% of adapter bf16 bytes)")
        metric = "reverse KL gap closed" if workload == "distill" else "reward gain"
        ax.set_ylabel(f"final {metric},\nshare of full sync's")
        note = pc.interval_note(ns)
        pc.panel_title(ax, "abcdefgh"[axes.index(ax) % 8], workload + (f" ({note})" if note else ""))
        ax.grid(True, which="major", alpha=0.3)
    order = [s for s in schemes if s in handles] + ["_full", "_goal"]
    pc.put_legend(legend_ax, args.width, [handles[k] for k in order],
                  [pc.arm_label(s) for s in schemes if s in handles] +
                  ["full sync", "goal: 0.98 at 1.6%"])
    head = "; ".join(t for t in (args.title, args.task_note) if t)
    if head:
        fig.suptitle(head, fontsize="medium")
    pc.save(fig, args.out, note=not args.no_note, width=args.width)


if __name__ == "__main__":
    main()
