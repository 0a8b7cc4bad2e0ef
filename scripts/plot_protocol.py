#!/usr/bin/python3
"""Steps-to-target and AUC share of each sync scheme against full sync, from the quality protocol.

Reads protocol-table.csv written by scripts/quality_protocol.py:
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table_csv", help="protocol-table.csv of scripts/quality_protocol.py")
    p.add_argument("--x", choices=["bytes", "params"], default="bytes",
                   help="x axis: payload bytes per update, or model parameters (size grid)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.table_csv)
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
