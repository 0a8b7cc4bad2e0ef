#!/usr/bin/python3
"""Update latency and step time vs link bandwidth, one line per sync arm (figure 1).

Reads a sweep.csv written by scripts/sweep.py over a bandwidth grid, e.g.
  scripts/sweep.py scenarios/paper/fig1-speedup.textproto \
      --grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps --out results/paper/fig1
  /usr/bin/python3 scripts/plot_speedup.py results/paper/fig1/sweep.csv \
      --out results/paper/fig1-speedup
Panels: (a) update latency p50 per arm (bars to p99 where any p99 exceeds p50 by over 1%), (b) mean step time, (c) speed-up of the
p50 update latency (solid) and of the step time (dotted) over the `full` arm. Log-scaled axes.
Step time: summary's step_time_s_mean, or with --steps sweep_steps.csv the steady-state step
time, the mean gap between consecutive versions' publication times from version 2 on (the first
step waits for no update, which biases a mean over few steps).
Writes OUT.png and OUT.pdf and prints the plotted numbers.
"""
import argparse
import sys

import plot_common as pc
from matplotlib.lines import Line2D

DEFAULT_ARMS = "full,train-low,hilo-dense,hilo-powersgd,hilo-spar"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv of a bandwidth sweep")
    p.add_argument("--x", default="network.worker_link.bandwidth",
                   help="column holding the bandwidth (default %(default)s)")
    p.add_argument("--arms", default=DEFAULT_ARMS,
                   help="arms to draw, in legend order (default %(default)s; '' for all)")
    p.add_argument("--steps", help="sweep_steps.csv: use the steady-state step time")
    p.add_argument("--baseline", default="full", help="arm the speed-ups divide by")
    p.add_argument("--title", default="", help="figure title (default none)")
    p.add_argument("--average", action="store_true",
                   help="average rows that share (arm, bandwidth) but differ in other grid "
                        "columns (without it that is an error: choose one with --where)")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.sweep_csv)
    pc.require(rows, [args.x, "arm", "update_latency_p50_s", "update_latency_p99_s",
                      "step_time_s_mean"], args.sweep_csv)
    rows = pc.filter_rows(rows, args.where)
    all_rows = rows
    rows, arms = pc.select_arms(rows, args.arms)
    if not arms:
        sys.exit(f"{sys.argv[0]}: no arm to plot")
    meta = {r["arm"]: r for r in rows}

    step_col = "step_time_s_mean"
    if args.steps:
        gaps = {}
        srows = pc.read_csv(args.steps)
        pc.require(srows, ["combo", "arm", "version", "sim_time_s"], args.steps)
        times = {}
        for r in srows:
            if r["version"] != "0":
                times.setdefault((r["combo"], r["arm"]), []).append(
                    (int(r["version"]), float(r["sim_time_s"])))
        for key, ts in times.items():
            ts.sort()
            d = [b - a for (_, a), (_, b) in zip(ts, ts[1:])]
            gaps[key] = sum(d) / len(d) if d else float("nan")
        step_col = "steady_step_time_s"
        for r in all_rows:
            r[step_col] = repr(gaps.get((r.get("combo", ""), r["arm"]), float("nan")))

    # (arm, bandwidth) -> list of rows (several when other grid columns vary: averaged).
    data = {}
    for r in rows:
        bw = pc.parse_quantity(r[args.x])
        if bw is None:
            sys.exit(f"{sys.argv[0]}: {args.x}={r[args.x]!r} is not a bandwidth")
        data.setdefault((r["arm"], bw), []).append(r)
    if any(len(v) > 1 for v in data.values()) and not args.average:
        others = [c for c in pc.grid_columns(args.sweep_csv, rows) if c != args.x]
        varying = [c for c in others if len({r[c] for r in rows}) > 1]
        hint = " ".join(f"--where '{c}={rows[0][c]}'" for c in varying) or "--where COLUMN=VALUE"
        print(f"{sys.argv[0]}: several rows per (arm, bandwidth)"
              + (f": {', '.join(varying)} vary" if varying else "") +
              f"; plot one value ({hint}) or pass --average", file=sys.stderr)
        return 2

    def series(arm, col):
        pts = sorted((bw, pc.mean([pc.num(r[col]) for r in rs]))
                     for (a, bw), rs in data.items() if a == arm)
        return [x for x, _ in pts], [y for _, y in pts]

    base = {}
    for r in all_rows:
        if r["arm"] == args.baseline:
            base.setdefault(pc.parse_quantity(r[args.x]), []).append(r)

    labels = [pc.arm_label(a, meta[a].get("strategy"), meta[a].get("compressor")) for a in arms]
    # An arm that ships as many bytes as the baseline lies under it: the baseline is drawn
    # hollow on top, and the legend says where the other one is.
    for i, a in enumerate(arms):
        if a != args.baseline and meta[a].get("strategy") == "hilo" and \
                meta[a].get("compressor") == "dense":
            labels[i] += f" (inside {pc.arm_label(args.baseline)}'s circles)"
    fig, axes, legend_ax = pc.new_figure(args.width, 3, legend_rows=pc.legend_rows_needed(
        args.width, labels + ["latency p50", "step time"]))
    ax_lat, ax_step, ax_speed = axes
    print(f"{'arm':<16}{'bandwidth':>12}{'lat p50 s':>12}{'lat p99 s':>12}{'step s':>10}"
          f"{'x lat':>8}{'x step':>8}")
    handles = []
    # p99 bars only where they say something: in a deterministic sweep every update of an arm
    # has the same size and p99 equals p50; the title says so instead of promising bars.
    spread = False
    for arm in arms:
        _, a50 = series(arm, "update_latency_p50_s")
        _, a99 = series(arm, "update_latency_p99_s")
        spread |= any(b > 1.01 * a for a, b in zip(a50, a99))
    seeds = sorted({r.get("seed", "") for r in rows if r.get("seed", "")})
    for arm, label in zip(arms, labels):
        kw = pc.row_style(meta[arm])
        if arm == args.baseline:  # full and hilo-dense ship the same bytes: full hollow, on top
            kw.update(markerfacecolor="none", markersize=7, zorder=3)
        xs, p50 = series(arm, "update_latency_p50_s")
        _, p99 = series(arm, "update_latency_p99_s")
        _, step = series(arm, step_col)
        if spread:
            h = ax_lat.errorbar(xs, p50, yerr=[[0] * len(xs),
                                               [max(b - a, 0) for a, b in zip(p50, p99)]],
                                capsize=2, elinewidth=0.8, **kw)
            handles.append(h.lines[0])
        else:
            handles.append(ax_lat.plot(xs, p50, **kw)[0])
        ax_step.plot(xs, step, **kw)
        sx, s_lat, s_step = [], [], []
        for x, lat, st in zip(xs, p50, step):
            b_lat = b_step = float("nan")
            if x in base:
                b_lat = pc.mean([pc.num(r["update_latency_p50_s"]) for r in base[x]])
                b_step = pc.mean([pc.num(r[step_col]) for r in base[x]])
                sx.append(x)
                s_lat.append(b_lat / lat if lat else float("nan"))
                s_step.append(b_step / st if st else float("nan"))
            print(f"{arm:<16}{pc.format_bandwidth(x):>12}{lat:>12.4g}"
                  f"{p99[xs.index(x)]:>12.4g}{st:>10.4g}"
                  f"{(b_lat / lat if lat else float('nan')):>8.1f}"
                  f"{(b_step / st if st else float('nan')):>8.1f}")
        if arm != args.baseline and sx:
            ax_speed.plot(sx, s_lat, **kw)
            ax_speed.plot(sx, s_step, **dict(kw, linestyle=":", markerfacecolor="none"))

    ticks = [bw for (_, bw) in data]
    for ax in axes:
        pc.bandwidth_axis(ax, ticks, args.width)
        ax.grid(alpha=0.3, which="major")
    for ax in (ax_lat, ax_step, ax_speed):
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        pc.thin_log_axis(ax.yaxis, lo, hi)
    ax_lat.set_ylabel("update latency (s)")
    pc.panel_title(ax_lat, "a", "update latency p50 (bar: p99)" if spread else
                   "update latency p50 (p99 within 1%)")
    ax_step.set_ylabel(("steady-state" if args.steps else "mean") + " step time (s)")
    pc.panel_title(ax_step, "b", "training step time")
    ax_speed.axhline(1.0, color="black", linewidth=0.6)
    ax_speed.set_ylabel(f"speed-up over {pc.arm_label(args.baseline)} (x)")
    pc.panel_title(ax_speed, "c", "speed-up")
    handles += [Line2D([], [], color="gray", linestyle="-"),
                Line2D([], [], color="gray", linestyle=":")]
    pc.put_legend(legend_ax, args.width, handles,
                  labels + ["(c) latency p50", "(c) step time"])
    n_note = (f"n = {len(seeds)} seed{'s' if len(seeds) != 1 else ''} "
              f"({', '.join(seeds)}) per point" if seeds else "")
    if len(seeds) == 1:
        n_note += ": one deterministic run, no interval"
    if args.title or n_note:
        fig.suptitle("; ".join(t for t in (args.title, n_note) if t), fontsize="medium")
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    sys.exit(main())
