#!/usr/bin/python3
"""Update latency and step time vs link bandwidth, one line per sync arm (figure 1).

Reads a sweep.csv written by scripts/sweep.py over a bandwidth grid, e.g.
  scripts/sweep.py scenarios/paper/fig1-speedup.textproto \
      --grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps --out results/paper/fig1
  /usr/bin/python3 scripts/plot_speedup.py results/paper/fig1/sweep.csv \
      --out results/paper/fig1-speedup
Panels: (a) update latency p50 per arm (bars to p99), (b) mean step time, (c) speed-up of the
p50 update latency and of the step time over the `full` arm. Log-scaled bandwidth axis.
Step time: summary's step_time_s_mean, or with --steps sweep_steps.csv the steady-state step
time, the mean gap between consecutive versions' publication times from version 2 on (the first
step waits for no update, which biases a mean over few steps).
Writes OUT.png and OUT.pdf and prints the plotted numbers.
"""
import argparse
import sys

import plot_common as pc
from plot_common import plt

DEFAULT_ARMS = "full,train-low,hilo-dense,hilo-powersgd,hilo-spar"
LABELS = {
    "full": "full sync (bf16 adapter)",
    "train-low": "train low (full sync, rank 4)",
    "hilo-dense": "HiLo + dense gradient",
    "hilo-powersgd": "HiLo + PowerSGD",
    "hilo-spar": "HiLo + Spar",
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv of a bandwidth sweep")
    p.add_argument("--x", default="network.worker_link.bandwidth",
                   help="column holding the bandwidth (default %(default)s)")
    p.add_argument("--arms", default=DEFAULT_ARMS,
                   help="arms to draw, in legend order (default %(default)s; '' for all)")
    p.add_argument("--steps", help="sweep_steps.csv: use the steady-state step time")
    p.add_argument("--baseline", default="full", help="arm the speed-ups divide by")
    p.add_argument("--title", default="Update latency and step time vs WAN bandwidth")
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
    if any(len(v) > 1 for v in data.values()):
        print(f"{sys.argv[0]}: warning: several rows per (arm, bandwidth); plotting their mean "
              "(fix other grid columns with --where)", file=sys.stderr)

    def series(arm, col):
        pts = sorted((bw, pc.mean([pc.num(r[col]) for r in rs]))
                     for (a, bw), rs in data.items() if a == arm)
        return [x for x, _ in pts], [y for _, y in pts]

    base = {}
    for (a, bw), rs in data.items():
        if a == args.baseline:
            base[bw] = rs
    if not base:  # the baseline may be filtered out by --arms: look in all rows
        for r in all_rows:
            if r["arm"] == args.baseline:
                base.setdefault(pc.parse_quantity(r[args.x]), []).append(r)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    ax_lat, ax_step, ax_speed = axes
    print(f"{'arm':<16}{'bandwidth':>12}{'lat p50 s':>12}{'lat p99 s':>12}{'step s':>10}"
          f"{'x lat':>8}{'x step':>8}")
    for i, arm in enumerate(arms):
        colour, marker = pc.style(arm, i)
        label = LABELS.get(arm, arm)
        # full and hilo-dense ship the same bytes and overlap: full is drawn on top, hollow.
        kw = dict(color=colour, marker=marker, zorder=3 if arm == args.baseline else 2,
                  markerfacecolor="none" if arm == args.baseline else colour,
                  markersize=8 if arm == args.baseline else 6,
                  linestyle=":" if arm == args.baseline else "-")
        xs, p50 = series(arm, "update_latency_p50_s")
        _, p99 = series(arm, "update_latency_p99_s")
        _, step = series(arm, step_col)
        ax_lat.errorbar(xs, p50, yerr=[[0] * len(xs), [max(b - a, 0) for a, b in zip(p50, p99)]],
                        capsize=3, label=label, **kw)
        ax_step.plot(xs, step, label=label, **kw)
        sx, s_lat, s_step = [], [], []
        for x, lat, st in zip(xs, p50, step):
            if x in base:
                b_lat = pc.mean([pc.num(r["update_latency_p50_s"]) for r in base[x]])
                b_step = pc.mean([pc.num(r[step_col]) for r in base[x]])
                sx.append(x)
                s_lat.append(b_lat / lat if lat else float("nan"))
                s_step.append(b_step / st if st else float("nan"))
            else:
                b_lat = b_step = float("nan")
            print(f"{arm:<16}{pc.format_bandwidth(x):>12}{lat:>12.4g}"
                  f"{p99[xs.index(x)]:>12.4g}{st:>10.4g}"
                  f"{(b_lat / lat if lat else float('nan')):>8.1f}"
                  f"{(b_step / st if st else float('nan')):>8.1f}")
        if arm != args.baseline and sx:
            ax_speed.plot(sx, s_lat, color=colour, marker=marker, label=label + ": latency p50")
            ax_speed.plot(sx, s_step, color=colour, marker=marker, linestyle="--",
                          markerfacecolor="none", label=label + ": step time")

    ticks = sorted({bw for (_, bw) in data})
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(ticks)
        ax.set_xticklabels([pc.format_bandwidth(t) for t in ticks], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("per-worker WAN link bandwidth (log scale)")
        ax.grid(alpha=0.3, which="both")
    ax_lat.set_yscale("log")
    ax_lat.set_ylabel("update latency p50, bar to p99 (s, log scale)")
    ax_lat.set_title("(a) update latency (gradient -> worker ready)")
    ax_step.set_yscale("log")
    for ax in (ax_lat, ax_step):
        pc.log_axis(ax.yaxis)
    ax_step.set_ylabel(("steady-state" if args.steps else "mean") +
                       " step time (simulated s, log scale)")
    ax_step.set_title("(b) RL step time")
    ax_speed.set_yscale("log")
    ax_speed.axhline(1.0, color="black", linewidth=0.8)
    ax_speed.set_ylabel(f"speed-up over '{args.baseline}' (x, log scale)")
    ax_speed.set_title("(c) speed-up (solid: latency, dashed: step)")
    pc.log_axis(ax_speed.yaxis)
    ax_lat.legend(fontsize=7)
    # colours as in (a); the title says which line is which
    fig.suptitle(args.title)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
