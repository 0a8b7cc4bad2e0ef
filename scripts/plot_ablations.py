#!/usr/bin/python3
"""Ablations of HiLo + Spar as bar charts: final quality and bytes per update per arm (figure 5).

Reads a sweep.csv written by scripts/sweep.py from a scenario whose arms are the ablation
variants (error feedback on/off, greedy vs uniform allocation, value dtype ...), optionally swept
over seeds, e.g.
  scripts/sweep.py scenarios/paper/fig5-ablations.textproto --grid seed=1,2,3 \
      --out results/paper/fig5
  /usr/bin/python3 scripts/plot_ablations.py results/paper/fig5/sweep.csv \
      --out results/paper/fig5-ablations
Bars are the mean over the sweep's combinations (e.g. seeds), error bars the 95% t-interval of
that mean when there are several. Panel (a) shows each arm's final quality minus that of the
reference arm (--paired, default: the first arm of strategy `full`) in the same combination:
seeds change the teacher and so the absolute quality, and the paired difference removes that.
--paired '' plots absolute quality with the `full` arms as reference lines.
"""
import argparse

import math

import plot_common as pc


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv")
    p.add_argument("--arms", default="", help="arms to draw, in order (default all)")
    p.add_argument("--paired", default=None,
                   help="reference arm of panel (a) (default: first `full` arm; '' = absolute)")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.sweep_csv)
    pc.require(rows, ["arm", "strategy", "final_quality", "fraction_of_adapter_bytes",
                      "wire_bytes_per_update_mean"], args.sweep_csv)
    rows = pc.filter_rows(rows, args.where)
    rows, arms = pc.select_arms(rows, args.arms)
    ncombo = len({r.get("combo", "") for r in rows})

    paired = args.paired
    if paired is None:
        paired = next((r["arm"] for r in rows if r["strategy"] == "full"), "")
    ref = {r.get("combo", ""): pc.num(r["final_quality"]) for r in rows if r["arm"] == paired}
    stats = []
    for arm in arms:
        rs = [r for r in rows if r["arm"] == arm]
        q = [pc.num(r["final_quality"]) - (ref[r.get("combo", "")] if paired else 0.0)
             for r in rs]
        f = [100 * pc.num(r["fraction_of_adapter_bytes"]) for r in rs]
        qm, qci, _ = pc.mean_ci(q)
        fm, fci, _ = pc.mean_ci(f)
        stats.append(dict(arm=arm, strategy=rs[0]["strategy"], q=qm, qci=qci, f=fm, fci=fci,
                          compressor=rs[0].get("compressor", ""),
                          params=rs[0].get("compressor_params", ""),
                          budget=rs[0].get("budget", ""), style=pc.row_style(rs[0])))

    fig, (axq, axb), legend_ax = pc.new_figure(args.width, 2, full_cols=2, legend_rows=1)
    bars = [s for s in stats if s["strategy"] != "full"]
    xs = list(range(len(bars)))
    # The variants of one arm share its arm colour: each bar gets the shared series colour of its
    # position instead, and a label that says what the variant changes.
    same = len({s["style"]["color"] for s in bars}) < len(bars)
    colours = ([pc.series_style(i)[0] for i in range(len(bars))] if same
               else [s["style"]["color"] for s in bars])
    names = [pc.variant_label(s["arm"], s["compressor"]) if same else s["arm"] for s in bars]

    def err(key):
        e = [0 if math.isnan(s[key]) else s[key] for s in bars]
        return e if ncombo > 1 and any(e) else None

    axq.bar(xs, [s["q"] for s in bars], yerr=err("qci"), color=colours, capsize=3,
            error_kw=dict(elinewidth=0.8))
    axb.bar(xs, [s["f"] for s in bars], yerr=err("fci"), color=colours, capsize=3,
            error_kw=dict(elinewidth=0.8))
    handles, handle_labels = [], []
    for s in stats:
        if s["strategy"] == "full":
            line = axb.axhline(s["f"], color="black", linestyle="--", linewidth=1)
            if not paired:
                axq.axhline(s["q"], color="black", linestyle="--", linewidth=1)
            handles.append(line)
            handle_labels.append(f"{pc.arm_label(s['arm'])} ({s['arm']}): {s['f']:.3g}% of the "
                                 "adapter's bytes" + ("" if paired else ", its final quality"))
    for ax in (axq, axb):
        ax.set_xticks(xs)
        ax.set_xticklabels(names, rotation=35, ha="right")
        ax.grid(alpha=0.3, axis="y")
    if paired:
        axq.axhline(0, color="black", linewidth=0.6)
        axq.set_ylabel(f"arm − {pc.arm_label(paired)}\n" +
                       pc.quality_label(rows, short=True))
    else:
        qs = [s["q"] for s in stats]
        lo, hi = min(qs), max(qs)
        axq.set_ylim(lo - 0.15 * (hi - lo + 1e-9), hi + 0.15 * (hi - lo + 1e-9))
        axq.set_ylabel("final " + pc.quality_label(rows, short=True))
    what = (f"{pc.STRATEGY_LABELS.get(bars[0]['strategy'], bars[0]['strategy'])} + "
            f"{pc.COMPRESSOR_LABELS.get(bars[0]['compressor'], bars[0]['compressor'])}"
            if same and bars else "arms")
    pc.panel_title(axq, "a", (f"{what}: quality vs {pc.arm_label(paired)}" if paired
                              else f"{what}: final quality"))
    axq.set_xlabel(f"final quality, paired by seed; {pc.interval_note([ncombo])}" if paired
                   else pc.interval_note([ncombo]))
    axb.set_ylim(0, None)  # bars start at 0: their heights compare
    axb.set_ylabel("wire bytes (% of adapter)")
    pc.panel_title(axb, "b", "bytes per update")
    if handles:
        pc.put_legend(legend_ax, args.width, handles, handle_labels)
    if args.title:
        fig.suptitle(args.title)
    if paired:
        print(f"quality column: final quality minus {paired}'s on the same combination")
    print(f"{'arm':<22}{'strategy':>9}{'quality':>11}{'95% CI +-':>11}{'% adapter':>11}  params")
    for s in stats:
        print(f"{s['arm']:<22}{s['strategy']:>9}{s['q']:>11.5g}{s['qci']:>11.2g}{s['f']:>11.4g}"
              f"  {s['params']} {s['budget']}")
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
