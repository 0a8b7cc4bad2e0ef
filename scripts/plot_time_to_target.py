#!/usr/bin/python3
"""Simulated time to reach a target quality, per arm, vs link bandwidth.

Reads sweep.csv and sweep_steps.csv of a scripts/sweep.py bandwidth sweep, e.g.
  scripts/sweep.py scenarios/paper/fig3-curves.textproto \
      --grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps --out results/paper/fig7
  /usr/bin/python3 scripts/plot_time_to_target.py results/paper/fig7/sweep.csv \
      --out results/paper/fig7-time-to-target
Speed and quality at one operating point: for every (arm, bandwidth) the simulated time at
which the learner first published a version whose evaluated quality reached the target (the
publication time of the first evaluation at or past it; with --interpolate, the time found by
linear interpolation between the two evaluations around the crossing). The target is either an
absolute quality (--target Q) or a share of full sync's progress on the same combination
(--target-share F, default 0.8): q0 + F (q_full - q0), with q0 the untrained quality (version 0)
and q_full the final quality of the reference arm (--reference, default the first arm of
strategy `full`). Whether lower or higher is better comes from the sweep's quality metric.
Arms that never reach the target are drawn as open markers on the upper edge ("not reached").
Combinations that share a bandwidth (e.g. seeds) are averaged (mean over those that reached it,
with the 95% t-interval when there are several).
Panels: (a) time to target vs bandwidth (log-log), the "not reached" markers of several arms
side by side around their bandwidth; (b) speed-up over the reference arm -- or, when no other
arm reaches the target at any bandwidth, what each arm had reached by the time the reference
reached it: its last evaluated quality at or before that time as a share of the reference's
progress to the target, (q - q0) / (target - q0) (1 = as far as the reference).
"""
import argparse
import math
import os
import sys

import plot_common as pc
from matplotlib.lines import Line2D


def time_to_target(points, target, higher, interpolate):
    """points: sorted [(version, time, quality)] of evaluated versions. None if never reached."""
    prev = None
    for v, t, q in points:
        if (q >= target) if higher else (q <= target):
            if interpolate and prev is not None and prev[2] != q:
                _, t0, q0 = prev
                return t0 + (target - q0) / (q - q0) * (t - t0)
            return t
        prev = (v, t, q)
    return None


def quality_at(points, t):
    """The last evaluated quality at or before time t (the first evaluation's before it)."""
    q = points[0][2] if points else None
    for _, ti, qi in points:
        if ti <= t:
            q = qi
    return q


def dodge(k, n):
    """A multiplicative x offset for the k-th of n markers at one bandwidth (log axis)."""
    return 1.0 + 0.22 * (k - (n - 1) / 2)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", help="sweep.csv of a bandwidth sweep")
    p.add_argument("--steps", help="its sweep_steps.csv (default: next to sweep.csv)")
    p.add_argument("--x", default="network.worker_link.bandwidth",
                   help="column holding the bandwidth (default %(default)s)")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target", type=float, help="absolute target quality")
    g.add_argument("--target-share", type=float, default=0.8,
                   help="target as a share of the reference arm's progress (default 0.8)")
    p.add_argument("--reference", default="", help="reference arm (default: first `full` arm)")
    p.add_argument("--interpolate", action="store_true",
                   help="interpolate the crossing between evaluations")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()
    steps_path = args.steps or os.path.join(os.path.dirname(args.sweep_csv) or ".",
                                            "sweep_steps.csv")

    rows = pc.read_csv(args.sweep_csv)
    pc.require(rows, [args.x, "combo", "arm", "strategy", "final_quality"], args.sweep_csv)
    rows = pc.filter_rows(rows, args.where)
    steps = pc.read_csv(steps_path)
    pc.require(steps, ["combo", "arm", "version", "sim_time_s", "quality"], steps_path)
    higher = pc.higher_is_better(rows)
    if higher is None:
        sys.exit(f"{sys.argv[0]}: {args.sweep_csv}: no quality_metric/higher_is_better column")
    reference = args.reference or next((r["arm"] for r in rows if r["strategy"] == "full"), "")
    if args.target is None and not reference:
        sys.exit(f"{sys.argv[0]}: no arm of strategy `full` to take the target from; give "
                 "--reference ARM or --target Q")
    all_rows = rows
    rows, arms = pc.select_arms(rows, args.arms)

    curves = {}
    for r in steps:
        q = pc.num(r["quality"])
        if q is not None:
            curves.setdefault((r["combo"], r["arm"]), []).append(
                (int(r["version"]), pc.num(r["sim_time_s"]), q))
    for c in curves.values():
        c.sort()

    targets = {}
    for combo in {r["combo"] for r in all_rows}:
        if args.target is not None:
            targets[combo] = args.target
            continue
        ref = [r for r in all_rows if r["combo"] == combo and r["arm"] == reference]
        curve = curves.get((combo, reference), [])
        if not ref or not curve or curve[0][0] != 0:
            sys.exit(f"{sys.argv[0]}: combination {combo}: no {reference} row or no version-0 "
                     "quality to set the target from")
        q0, qf = curve[0][2], pc.num(ref[0]["final_quality"])
        targets[combo] = q0 + args.target_share * (qf - q0)

    # (arm, bandwidth) -> [time or None]
    data = {}
    meta = {}
    shares = {}  # (arm, bandwidth) -> [share of the reference's progress at its time to target]
    for r in rows:
        bw = pc.parse_quantity(r[args.x])
        if bw is None:
            sys.exit(f"{sys.argv[0]}: {args.x}={r[args.x]!r} is not a bandwidth")
        t = time_to_target(curves.get((r["combo"], r["arm"]), []), targets[r["combo"]], higher,
                           args.interpolate)
        data.setdefault((r["arm"], bw), []).append(t)
        meta.setdefault(r["arm"], r)
        # What the arm had reached when the reference reached the target (panel b's fallback).
        ref_curve = curves.get((r["combo"], reference), [])
        t_ref = time_to_target(ref_curve, targets[r["combo"]], higher, args.interpolate)
        own = curves.get((r["combo"], r["arm"]), [])
        if t_ref is not None and own and ref_curve:
            q0 = ref_curve[0][2]
            span = targets[r["combo"]] - q0
            q = quality_at(own, t_ref)
            if span and q is not None:
                shares.setdefault((r["arm"], bw), []).append((q - q0) / span)

    labels = [pc.arm_label(a, meta[a].get("strategy"), meta[a].get("compressor")) for a in arms]
    fig, (ax, axs), legend_ax = pc.new_figure(
        args.width, 2, full_cols=2,
        legend_rows=pc.legend_rows_needed(args.width, labels + ["not reached"]))
    tvals = [pc.mean_ci([t for t in ts if t is not None])[0] for ts in data.values()]
    finite = [t for t in tvals if not math.isnan(t) and t > 0]
    ceiling = max(finite) * 2.2 if finite else 1.0
    how = (f"absolute {args.target:g}" if args.target is not None
           else f"{args.target_share:g} of {reference}'s progress")
    print(f"target: {how} ({'higher' if higher else 'lower'} is better); per combination: " +
          ", ".join(f"{c} {v:.4g}" for c, v in sorted(targets.items())))
    print(f"{'arm':<18}{'bandwidth':>11}{'n':>3}{'reached':>8}{'time s':>11}{'95% CI +-':>11}"
          f"{'x ref':>8}")
    base = {bw: pc.mean_ci([t for t in ts if t is not None])[0]
            for (a, bw), ts in data.items() if a == reference}
    handles, any_miss, seeds = [], False, []
    missing_at = {}  # bandwidth -> arms not reaching the target there, in drawing order
    for arm in arms:
        for (a, bw), ts in data.items():
            if a == arm and not any(t is not None for t in ts):
                missing_at.setdefault(bw, []).append(arm)
    speedups = 0
    for arm in arms:
        kw = pc.arm_style(arm, meta[arm].get("strategy"), meta[arm].get("compressor"))
        pts = sorted((bw, ts) for (a, bw), ts in data.items() if a == arm)
        xs, ys, errs, miss, sx, sy = [], [], [], [], [], []
        for bw, ts in pts:
            reached = [t for t in ts if t is not None]
            m, ci, n = pc.mean_ci(reached)
            seeds.append(len(ts))
            sp = base.get(bw, float("nan")) / m if reached and m else float("nan")
            print(f"{arm:<18}{pc.format_bandwidth(bw):>11}{len(ts):>3}{len(reached):>8}"
                  f"{m:>11.4g}{ci:>11.3g}{sp:>8.2f}")
            if len(reached) < len(ts) and not reached:
                miss.append(bw)
                continue
            xs.append(bw)
            ys.append(m)
            errs.append(0 if math.isnan(ci) else ci)
            if not math.isnan(sp):
                sx.append(bw)
                sy.append(sp)
        h = ax.errorbar(xs, ys, yerr=errs if any(errs) else None, capsize=2, elinewidth=0.8,
                        **kw)
        handles.append(h.lines[0])
        if miss:
            any_miss = True
            mx = [bw * dodge(missing_at[bw].index(arm), len(missing_at[bw])) for bw in miss]
            ax.plot(mx, [ceiling] * len(miss), linestyle="none", marker=kw["marker"],
                    color=kw["color"], markerfacecolor="none", clip_on=False)
        if arm != reference and sx:
            axs.plot(sx, sy, **kw)
            speedups += 1
    ax.set_yscale("log")
    lo = min(finite) / 1.6 if finite else 0.1
    hi = ceiling * 1.15 if any_miss else (max(finite) * 1.6 if finite else 10.0)
    ax.set_ylim(lo, hi)
    pc.thin_log_axis(ax.yaxis, lo, hi)
    what = (f"quality {'≥' if higher else '≤'} {args.target:g}" if args.target is not None
            else f"{100 * args.target_share:g}% of {pc.arm_label(reference)}'s progress")
    ax.set_ylabel(f"simulated time to target (s)\n{pc.interval_note(seeds)}")
    pc.panel_title(ax, "a", f"time to {what}")
    axs.axhline(1.0, color="black", linewidth=0.6)
    if speedups:
        axs.set_yscale("log")
        lo, hi = axs.get_ylim()
        pc.thin_log_axis(axs.yaxis, lo, hi)
        axs.set_ylabel(f"speed-up over {pc.arm_label(reference)} (x)")
        pc.panel_title(axs, "b", "speed-up to the same quality")
    else:
        # No arm but the reference reaches the target: show how far each got by then.
        print(f"no arm but {reference} reaches the target; reached by {reference}'s time to "
              "target, as a share of its progress to the target:")
        print(f"{'arm':<18}{'bandwidth':>11}{'n':>3}{'share':>8}{'95% CI +-':>11}")
        share_n = []
        for arm in arms:
            if arm == reference:
                continue
            kw = pc.arm_style(arm, meta[arm].get("strategy"), meta[arm].get("compressor"))
            pts = sorted((bw, v) for (a, bw), v in shares.items() if a == arm)
            xs, ys, errs = [], [], []
            for bw, v in pts:
                m, ci, n = pc.mean_ci(v)
                share_n.append(n)
                print(f"{arm:<18}{pc.format_bandwidth(bw):>11}{n:>3}{m:>8.3f}{ci:>11.3g}")
                xs.append(bw)
                ys.append(m)
                errs.append(0 if math.isnan(ci) else ci)
            axs.errorbar(xs, ys, yerr=errs if any(errs) else None, capsize=2, elinewidth=0.8,
                         **kw)
        axs.set_ylabel(f"share of {pc.arm_label(reference)}'s progress\nreached by its time to "
                       f"target\n{pc.interval_note(share_n)}")
        pc.panel_title(axs, "b", f"reached when {pc.arm_label(reference)} hits the target")
    xs_all = [bw for (_, bw) in data]
    for a in (ax, axs):
        pc.bandwidth_axis(a, xs_all, args.width)
        a.grid(alpha=0.3, which="major")
    handles.append(Line2D([], [], color="gray", marker="o", markerfacecolor="none",
                          linestyle="none"))
    pc.put_legend(legend_ax, args.width, handles, labels + ["not reached (upper edge)"])
    if args.title:
        fig.suptitle(args.title)
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
