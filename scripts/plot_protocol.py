#!/usr/bin/python3
"""Quality of each sync scheme against full sync, from scripts/quality_protocol.py's tables.

Reads protocol-table.csv (any grid but planted) or table.csv (the planted grid), both written by
scripts/quality_protocol.py:
  /usr/bin/python3 scripts/plot_protocol.py results/quality/protocol-full/protocol-table.csv \
      --out results/quality/protocol-full/stt-vs-bytes
  /usr/bin/python3 scripts/plot_protocol.py results/quality/size-trend/protocol-table.csv \
      --x params --out results/quality/size-trend/share-vs-size
One panel per workload (--x bytes) or one per metric (--x params). y = stt_full (the steps full
sync needs to reach the arm's final quality, over the arm's steps: 1 = full sync's pace) and, as a
second panel row, the area-under-curve share; mean over seeds with the bootstrap 95% interval of
the mean as asymmetric error bars. x = measured payload bytes per update as % of the adapter's
bf16 bytes (log), or the base model's parameters (log; the size grid, one scheme). The research
goal, stt_full >= 0.98 at <= 1.6%, is the dashed corner. Colours: plot_common.arm_style. Prints
the plotted table.

The planted grid's table.csv (each run against the full-sync run of its own seed):
  /usr/bin/python3 scripts/plot_protocol.py results/quality/table.csv \
      --runs results/quality/runs.csv --out results/quality/quality-vs-bytes
One panel per workload: x as above, y = final quality as a share of full sync's progress on the
same seed (mean over seeds, with the 95% t-interval as error bars; with --runs every seed as a
faint dot). Budgeted schemes are lines; lossless ones (budget "lossless") single points; the y
range follows the data (below 0 when a scheme does worse than no training).
"""
import argparse
import os
import sys

import plot_common as pc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality_protocol import MODEL_PARAMS  # noqa: E402

METRICS = (("stt_full", "steps-to-target share\n(full sync = 1)"),
           ("auc_share", "area-under-curve share\n(full sync = 1)"))


def errbars(rs, k):
    ys = [float(r[k]) for r in rs]
    return ys, [[y - float(r[k + "_lo"]) for y, r in zip(ys, rs)],
                [float(r[k + "_hi"]) - y for y, r in zip(ys, rs)]]


def plot_same_seed(args, rows):
    """The planted grid's share of the same seed's full-sync progress against bytes."""
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table_csv", help="protocol-table.csv, or the planted grid's table.csv, of "
                   "scripts/quality_protocol.py")
    p.add_argument("--x", choices=["bytes", "params"], default="bytes",
                   help="x axis: payload bytes per update, or model parameters (size grid)")
    p.add_argument("--runs", help="planted table.csv only: its runs.csv, to draw every seed too")
    p.add_argument("--schemes", default="",
                   help="planted table.csv only: schemes to draw (comma-separated; default all)")
    p.add_argument("--title", default="", help="planted table.csv only: figure title")
    p.add_argument("--task-note", default="planted teachers: a low-rank teacher delta the project "
                   "chose (quality_protocol.py --grid planted)",
                   help="planted table.csv only: what the tasks are, above the panels (default: "
                        "%(default)s; '' for none)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.table_csv)
    if "share_mean" in rows[0]:
        if args.x != "bytes":
            sys.exit(f"plot_protocol: {args.table_csv} is a planted table.csv: --x bytes only")
        return plot_same_seed(args, rows)
    if args.runs or args.schemes or args.title:
        sys.exit(f"plot_protocol: --runs, --schemes and --title are for the planted grid's "
                 f"table.csv; {args.table_csv} is a protocol table")
    pc.require(rows, ["workload", "scheme", "budget", "n", "fraction_pct", "stt_full",
                      "stt_full_lo", "stt_full_hi", "auc_share", "auc_share_lo",
                      "auc_share_hi"], args.table_csv)
    rows = [r for r in pc.filter_rows(rows, args.where) if r["scheme"] != "full"]
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    if args.x == "params":
        unknown = [w for w in workloads if w not in MODEL_PARAMS]
        if unknown:
            sys.exit(f"plot_protocol: --x params: no parameter count for {unknown}")
        panels = [(None, k, label) for k, label in METRICS]
    else:
        panels = [(w, k, label) for k, label in METRICS for w in workloads]

    labels = [pc.arm_label(s) for s in schemes] + ["full sync", "goal"]
    fig, axes, legend_ax = pc.new_figure(args.width, len(panels),
                                         full_cols=len(panels) // len(METRICS),
                                         legend_rows=pc.legend_rows_needed(args.width, labels))
    cell = lambda r, k: f"{float(r[k]):.3f} [{float(r[k + '_lo']):.3f}, {float(r[k + '_hi']):.3f}]"
    print(f"{'workload':<16}{'scheme':<15}{'budget':>7}{'% bytes':>9}  {'stt_full':<22}"
          f"{'auc_share':<23}{'n':>3}")
    for r in rows:
        print(f"{r['workload']:<16}{r['scheme']:<15}{r['budget']:>7}"
              f"{float(r['fraction_pct']):>9.3g}  {cell(r, 'stt_full'):<22}"
              f"{cell(r, 'auc_share'):<23}{r['n']:>3}")
    handles = {}
    for i, (ax, (workload, k, label)) in enumerate(zip(axes, panels)):
        ys_all, ns, nb = [0.0, 1.0], [], []
        for scheme in schemes:
            rs = [r for r in rows if r["scheme"] == scheme and
                  (workload is None or r["workload"] == workload)]
            if args.x == "params":
                rs.sort(key=lambda r: MODEL_PARAMS[r["workload"]])
                xs = [MODEL_PARAMS[r["workload"]] / 1e6 for r in rs]
            else:
                rs.sort(key=lambda r: float(r["fraction_pct"]))
                xs = [float(r["fraction_pct"]) for r in rs]
            if not rs:
                continue
            ys, err = errbars(rs, k)
            ys_all += [y + e for y, e in zip(ys, err[1])] + [y - e for y, e in zip(ys, err[0])]
            ns += [r["n"] for r in rs]
            nb += [(r["n"], r["budget"] if args.x == "bytes" else r["workload"]) for r in rs]
            kw = pc.arm_style(scheme)
            if len(rs) == 1:
                kw = dict(kw, linestyle="none")
            h = ax.errorbar(xs, ys, yerr=err, capsize=2, elinewidth=0.8, **kw)
            handles.setdefault(scheme, h.lines[0])
        pc.share_axes(ax, handles, ys_all, goal=args.x == "bytes" and k == "stt_full")
        ax.set_xlabel("base model parameters (millions)" if args.x == "params"
                      else "payload per update\n(% of adapter bf16 bytes)")
        ax.set_ylabel(label)
        note = pc.interval_note(ns, pc.BOOTSTRAP_KIND)
        # Two lines: the workload and n, then what the points are (three panels side by side
        # leave no room for all of it on one). Where n differs between points, which has which.
        what, _, n = note.rpartition(", ")
        if len({x for x, _ in nb}) > 1:
            # "n=10 at 1.6%; 3 elsewhere": the most common n is "elsewhere".
            counts = {k: len({b for x, b in nb if x == k}) for k in {x for x, _ in nb}}
            common = max(counts, key=lambda k: (counts[k], -int(k)))
            n = "n=" + "; ".join(
                f"{k} at {', '.join(sorted({b for x, b in nb if x == k}, key=pc.num_or_text))}"
                for k in sorted(counts, key=int, reverse=True) if k != common) + \
                f"; {common} elsewhere"
        title = (workload if workload else "real-text distillation at 1.6%") + (
            f"\n{n}\n{what}" if n.startswith("n=") else "\n" + note)
        pc.panel_title(ax, "abcdefghijkl"[i], title)
        ax.grid(True, which="major", alpha=0.3)
    order = [s for s in schemes if s in handles] + [k for k in ("_full", "_goal") if k in handles]
    names = {"_full": "full sync", "_goal": "goal: 0.98 at 1.6%"}
    pc.put_legend(legend_ax, args.width, [handles[k] for k in order],
                  [names.get(k) or pc.arm_label(k) for k in order])
    pc.save(fig, args.out, note=not args.no_note, width=args.width)


if __name__ == "__main__":
    main()
