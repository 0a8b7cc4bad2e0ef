#!/usr/bin/python3
"""Final learning quality vs bytes per update (% of the adapter's bytes), per compressor (figure 2).

Reads a sweep.csv written by scripts/sweep.py over budgets (and compressors), e.g.
  scripts/sweep.py scenarios/paper/fig2-pareto.textproto --zip \
      --grid arms[hilo-spar].budget=0.5%,1.6%,5% --grid arms[hilo-topk].budget=0.5%,1.6%,5% \
      --out results/paper/fig2
  /usr/bin/python3 scripts/plot_pareto.py results/paper/fig2/sweep.csv --out results/paper/fig2-pareto
One point per (combination, arm) at x = measured wire bytes per update as % of the adapter's
bf16 bytes (log scale), y = final quality; points of one arm are joined in order of bytes.
Arms of strategy `full` are drawn as horizontal lines (their mean over combinations) instead.
With --steps sweep_steps.csv the untrained quality (version 0) is drawn as a dotted line.
"""
import argparse

import plot_common as pc
from plot_common import plt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv")
    p.add_argument("--steps", help="sweep_steps.csv: draw the version-0 (untrained) quality")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--title", default="Learning quality vs bytes per update")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.sweep_csv)
    pc.require(rows, ["arm", "strategy", "compressor", "fraction_of_adapter_bytes",
                      "final_quality"], args.sweep_csv)
    rows = pc.filter_rows(rows, args.where)
    rows, arms = pc.select_arms(rows, args.arms)

    fig, ax = plt.subplots(figsize=(7.5, 5))
    print(f"{'arm':<18}{'% adapter':>11}{'final quality':>15}  combo")
    for i, arm in enumerate(arms):
        colour, marker = pc.style(arm, i)
        rs = [r for r in rows if r["arm"] == arm]
        if rs[0]["strategy"] == "full":
            q = pc.mean([pc.num(r["final_quality"]) for r in rs])
            frac = pc.mean([pc.num(r["fraction_of_adapter_bytes"]) for r in rs])
            rank = rs[0].get("training_rank", "")
            ax.axhline(q, color=colour, linestyle="--" if i else "-", linewidth=1.2,
                       label=f"{arm}: full sync, rank {rank} ({100 * frac:.3g}% of adapter bytes)")
            print(f"{arm:<18}{100 * frac:>11.4g}{q:>15.5g}  (mean of {len(rs)})")
            continue
        pts = sorted((100 * pc.num(r["fraction_of_adapter_bytes"]), pc.num(r["final_quality"]),
                      r.get("combo", "")) for r in rs)
        for x, y, c in pts:
            print(f"{arm:<18}{x:>11.4g}{y:>15.5g}  {c}")
        ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], color=colour, marker=marker,
                label=f"{arm} ({rs[0]['strategy']} + {rs[0]['compressor']})")

    if args.steps:
        steps = pc.read_csv(args.steps)
        q0 = [pc.num(r["quality"]) for r in steps if r["version"] == "0" and r["quality"]]
        if q0:
            ax.axhline(pc.mean(q0), color="gray", linestyle=":", label="untrained (version 0)")
    ax.set_xscale("log")
    pc.log_axis(ax.xaxis)
    ax.set_xlabel("wire bytes per update (% of the adapter's bf16 bytes, log scale)")
    ax.set_ylabel("final " + pc.quality_label(rows))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    ax.set_title(args.title)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
