#!/usr/bin/python3
"""Ablations of HiLo + Spar as bar charts: final quality and bytes per update per arm (figure 5).

Reads a sweep.csv written by scripts/sweep.py from a scenario whose arms are the ablation
variants (error feedback on/off, greedy vs uniform allocation, value dtype ...), optionally swept
over seeds, e.g.
  scripts/sweep.py scenarios/paper/fig5-ablations.textproto --grid seed=1,2,3 \
      --out results/paper/fig5
  /usr/bin/python3 scripts/plot_ablations.py results/paper/fig5/sweep.csv \
      --out results/paper/fig5-ablations
Bars are the mean over the sweep's combinations (e.g. seeds), error bars one standard deviation
when there are several. Panel (a) shows each arm's final quality minus that of the reference arm
(--paired, default: the first arm of strategy `full`) in the same combination: seeds change the
teacher and so the absolute quality, and the paired difference removes that. --paired '' plots
absolute quality with the `full` arms as reference lines.
"""
import argparse

import plot_common as pc
from plot_common import plt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv")
    p.add_argument("--arms", default="", help="arms to draw, in order (default all)")
    p.add_argument("--paired", default=None,
                   help="reference arm of panel (a) (default: first `full` arm; '' = absolute)")
    p.add_argument("--title", default="HiLo + Spar ablations at a fixed byte budget")
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
        stats.append((arm, rs[0]["strategy"], pc.mean(q), pc.stdev(q), pc.mean(f), pc.stdev(f),
                      rs[0].get("compressor_params", ""), rs[0].get("budget", "")))

    fig, (axq, axb) = plt.subplots(1, 2, figsize=(12, 4.8))
    bars = [s for s in stats if s[1] != "full"]
    xs = list(range(len(bars)))
    colours = [pc.style(s[0], i)[0] for i, s in enumerate(bars)]
    axq.bar(xs, [s[2] for s in bars], yerr=[s[3] for s in bars] if ncombo > 1 else None,
            color=colours, capsize=4)
    axb.bar(xs, [s[4] for s in bars], yerr=[s[5] for s in bars] if ncombo > 1 else None,
            color=colours, capsize=4)
    for s in stats:
        if s[1] == "full":
            if not paired:
                axq.axhline(s[2], color="black", linestyle="--", linewidth=1,
                            label=f"{s[0]} (full sync)")
            axb.axhline(s[4], color="black", linestyle="--", linewidth=1,
                        label=f"{s[0]} (full sync)")
    for ax in (axq, axb):
        ax.set_xticks(xs)
        ax.set_xticklabels([s[0] for s in bars], rotation=30, ha="right", fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    if paired:
        axq.axhline(0, color="black", linewidth=0.8)
        axq.set_ylabel(f"final quality − '{paired}' on the same seed\n"
                       f"({pc.quality_label(rows)})")
    else:
        qs = [s[2] for s in stats]
        lo, hi = min(qs), max(qs)
        axq.set_ylim(lo - 0.15 * (hi - lo + 1e-9), hi + 0.15 * (hi - lo + 1e-9))
        axq.set_ylabel("final " + pc.quality_label(rows))
    axq.set_title(("(a) final quality vs " + paired if paired else "(a) final quality") +
                  (f" (mean ± sd of {ncombo})" if ncombo > 1 else ""))
    axb.set_yscale("log")
    pc.log_axis(axb.yaxis)
    axb.set_ylabel("wire bytes per update (% of adapter bf16 bytes, log scale)")
    axb.set_title("(b) bytes per update")
    if any(s[1] == "full" for s in stats) and not paired:
        axq.legend(fontsize=7)
    axb.legend(fontsize=7)
    fig.suptitle(args.title)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    if paired:
        print(f"quality column: final quality minus {paired}'s on the same combination")
    print(f"{'arm':<22}{'strategy':>9}{'quality':>11}{'sd':>9}{'% adapter':>11}  params")
    for s in stats:
        print(f"{s[0]:<22}{s[1]:>9}{s[2]:>11.5g}{s[3]:>9.2g}{s[4]:>11.4g}  {s[6]} {s[7]}")
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
