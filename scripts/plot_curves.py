#!/usr/bin/python3
"""Learning curves: evaluated quality vs optimizer step and vs simulated time (figure 3).

Reads steps.csv of one `hilo-sim run` or sweep_steps.csv of scripts/sweep.py, e.g.
  /usr/bin/python3 scripts/plot_curves.py results/paper/fig3/sweep_steps.csv \
      --out results/paper/fig3-curves
One line per arm (per arm and combination when the sweep has several: colour by arm, line
style by combination). Only evaluated versions (non-empty `quality`) are drawn. Panel (a):
quality vs step (= adapter version); panel (b): the same points vs the simulated time at which
that version was published: the faster an arm's updates reach the workers, the further left its
curve. With --loss a panel (c) shows the training loss: each step's value faint, its trailing
mean over --loss-window steps drawn over it. The seeds behind the curves (from the sweep.csv or
summary.json beside the file) are named on the figure.
"""
import argparse

import plot_common as pc

LINESTYLES = ["-", "--", ":", "-."]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("steps_csv", help="steps.csv or sweep_steps.csv")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--time-scale", choices=["auto", "log", "linear"], default="auto",
                   help="x scale of the simulated-time panel (auto: log when the arms' end "
                        "times differ by more than 20x)")
    p.add_argument("--loss", action="store_true", help="add a training-loss panel")
    p.add_argument("--loss-window", type=int, default=10,
                   help="steps in the loss panel's trailing mean (default %(default)s; 1: raw)")
    p.add_argument("--ylabel", default="evaluated quality",
                   help="quality axis label (default %(default)s)")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.steps_csv)
    pc.require(rows, ["arm", "version", "sim_time_s", "quality", "loss"], args.steps_csv)
    rows = pc.filter_rows(rows, args.where)
    rows, arms = pc.select_arms(rows, args.arms)
    combos = list(dict.fromkeys(r.get("combo", "") for r in rows))

    series = []  # (label, style kwargs, [(version, time, quality)], [(version, loss)])
    for ci, combo in enumerate(combos):
        for arm in arms:
            rs = [r for r in rows if r["arm"] == arm and r.get("combo", "") == combo]
            if not rs:
                continue
            q = sorted((int(r["version"]), pc.num(r["sim_time_s"]), pc.num(r["quality"]))
                       for r in rs if pc.num(r["quality"]) is not None)
            loss = sorted((int(r["version"]), pc.num(r["loss"]))
                          for r in rs if pc.num(r["loss"]) is not None)
            if len(arms) == 1 and len(combos) > 1:
                colour, marker = pc.series_style(ci)
                kw = dict(color=colour, marker=marker, linestyle="-", markerfacecolor=colour)
                label = combo
            else:
                kw = pc.arm_style(arm)
                if len(combos) > 1:
                    kw["linestyle"] = LINESTYLES[ci % len(LINESTYLES)]
                label = pc.arm_label(arm) + (f" [{combo}]" if len(combos) > 1 else "")
            series.append((label, kw, q, loss))

    ends = [s[2][-1][1] for s in series if s[2] and s[2][-1][1]]
    log_time = args.time_scale == "log" or (
        args.time_scale == "auto" and ends and max(ends) > 20 * min(ends))

    npanels = 3 if args.loss else 2
    labels = [s[0] for s in series]
    fig, axes, legend_ax = pc.new_figure(args.width, npanels,
                                         legend_rows=pc.legend_rows_needed(args.width, labels))
    print(f"{'series':<40}{'steps':>7}{'first q':>11}{'final q':>11}{'sim time s':>12}")
    handles = []
    for label, kw, q, loss in series:
        msize = 2.5
        h, = axes[0].plot([v for v, _, _ in q], [y for _, _, y in q], markersize=msize, **kw)
        handles.append(h)
        pts = [(t, y) for _, t, y in q if t is not None and (t > 0 or not log_time)]
        axes[1].plot([t for t, _ in pts], [y for _, y in pts], markersize=msize, **kw)
        if args.loss:
            vs, ys = [v for v, _ in loss], [y for _, y in loss]
            w = max(1, args.loss_window)
            if w > 1:
                axes[2].plot(vs, ys, color=kw["color"], linestyle="-", linewidth=0.5, alpha=0.25)
            smooth = [sum(ys[max(0, i - w + 1):i + 1]) / len(ys[max(0, i - w + 1):i + 1])
                      for i in range(len(ys))]
            axes[2].plot(vs, smooth, color=kw["color"], linestyle=kw["linestyle"], linewidth=1.0)
        if q:
            print(f"{label[:39]:<40}{q[-1][0]:>7}{q[0][2]:>11.5g}{q[-1][2]:>11.5g}"
                  f"{(q[-1][1] or 0):>12.5g}")

    axes[0].set_xlabel("optimizer step (adapter version)")
    axes[0].set_ylabel(args.ylabel)
    pc.panel_title(axes[0], "a", "quality vs step")
    axes[1].set_xlabel("simulated time at publication (s" + (", log scale)" if log_time else ")"))
    axes[1].set_ylabel(args.ylabel)
    pc.panel_title(axes[1], "b", "quality vs simulated time")
    if log_time:
        axes[1].set_xscale("log")
    if args.loss:
        axes[2].set_xlabel("optimizer step (adapter version)")
        axes[2].set_ylabel("training loss on the step's rollouts")
        pc.panel_title(axes[2], "c", "training loss" + (
            f" ({args.loss_window}-step mean)" if args.loss_window > 1 else ""))
    for ax in axes:
        ax.grid(alpha=0.3, which="major")
    pc.put_legend(legend_ax, args.width, handles, labels)
    seeds = pc.seeds_beside(args.steps_csv)
    n_note = ""
    if seeds:
        n_note = (f"n = {len(seeds)} seed{'s' if len(seeds) != 1 else ''} "
                  f"({', '.join(seeds)})" +
                  (": one run per curve, no interval" if len(seeds) == 1 else ""))
    if args.title or n_note:
        fig.suptitle("; ".join(t for t in (args.title, n_note) if t), fontsize="medium")
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
