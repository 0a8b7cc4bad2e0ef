#!/usr/bin/python3
"""Share of full sync's progress vs bytes per update, per sync scheme and workload (results/quality).

Reads the table.csv (and, with --runs, the runs.csv) written by scripts/quality_sweep.py:
  /usr/bin/python3 scripts/plot_quality.py results/quality/table.csv \
      --runs results/quality/runs.csv --out results/quality/quality-vs-bytes
One panel per workload: x = measured payload bytes per update as % of the adapter's bf16 bytes
(log scale), y = final quality as a share of full sync's progress on the same seed (mean over
seeds, with the 95% interval as error bars; with --runs every seed as a faint dot). Budgeted
schemes are lines; lossless ones (budget "lossless") single points. The goal of 0.98 at 1.6% is
the dashed corner. Prints the plotted table.
"""
import argparse

import plot_common as pc
from plot_common import plt

STYLE = {
    "hilo-spar": ("tab:red", "^"),
    "delta-spar": ("tab:orange", "<"),
    "primal-spar": ("tab:purple", "D"),
    "hilo-sparq": ("tab:blue", "s"),
    "primal-sparq": ("tab:green", "o"),
    "delta-pulse": ("tab:gray", "X"),
    "primal-pulse": ("tab:brown", "P"),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table_csv", help="table.csv of scripts/quality_sweep.py")
    p.add_argument("--runs", help="runs.csv: draw every seed too")
    p.add_argument("--schemes", default="", help="schemes to draw (comma-separated; default all)")
    p.add_argument("--title", default="Final quality vs bytes per update (share of full sync's "
                   "progress, mean and 95% interval over seeds)")
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

    fig, axes = plt.subplots(1, len(workloads), figsize=(6.2 * len(workloads), 4.8), squeeze=False)
    print(f"{'workload':<9}{'scheme':<14}{'budget':>9}{'% adapter':>11}{'share':>8}{'+-95%':>8}"
          f"{'n':>3}")
    for ax, workload in zip(axes[0], workloads):
        for i, scheme in enumerate(schemes):
            colour, marker = STYLE.get(scheme, pc.style(scheme, i))
            rs = [r for r in rows if r["workload"] == workload and r["scheme"] == scheme]
            rs.sort(key=lambda r: float(r["fraction_pct"]))
            if not rs:
                continue
            xs = [float(r["fraction_pct"]) for r in rs]
            ys = [float(r["share_mean"]) for r in rs]
            es = [float(r["share_ci95"]) for r in rs]
            ax.errorbar(xs, ys, yerr=es, color=colour, marker=marker, ms=5, capsize=2,
                        lw=1.3 if len(rs) > 1 else 0, label=scheme)
            for r in rs:
                print(f"{workload:<9}{scheme:<14}{r['budget']:>9}{float(r['fraction_pct']):>11.3g}"
                      f"{float(r['share_mean']):>8.3f}{float(r['share_ci95']):>8.3f}{r['n']:>3}")
            pts = [r for r in runs if r["workload"] == workload and r["scheme"] == scheme]
            ax.scatter([float(r["fraction_pct"]) for r in pts],
                       [float(r["share_of_full"]) for r in pts], color=colour, s=7, alpha=0.3,
                       lw=0)
        ax.axhline(1.0, color="black", lw=1, label="full sync (bf16)")
        ax.plot([1.6, 1.6, 0.3], [0.0, 0.98, 0.98], color="black", ls="--", lw=0.8,
                label="goal: 0.98 at 1.6%")
        ax.set_xscale("log")
        pc.log_axis(ax.xaxis)
        ax.set_xlim(0.3, 250)
        ax.set_ylim(0.0, 1.08)
        ax.set_xlabel("payload bytes per update (% of the adapter's bf16 bytes)")
        metric = "reverse KL gap closed" if workload == "distill" else "reward gain"
        ax.set_ylabel(f"final {metric}, share of full sync's")
        ax.set_title(workload, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(args.title, fontsize=10)
    fig.tight_layout(rect=(0, 0.02, 1, 0.96))
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
