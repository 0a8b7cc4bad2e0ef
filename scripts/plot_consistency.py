#!/usr/bin/python3
"""Replica consistency over versions: drift from the learner and hash agreement (figure 6).

Reads steps.csv and workers.csv of one `hilo-sim run` (or sweep_steps.csv and
sweep_workers.csv of scripts/sweep.py), e.g.
  /usr/bin/python3 scripts/plot_consistency.py results/paper/fig6/sweep_steps.csv \
      results/paper/fig6/sweep_workers.csv --out results/paper/fig6-consistency
Panels: (a) drift_rel_l2 = ||theta_worker - theta_learner|| / ||theta_learner|| after each
version (log scale; exactly 0 = bit-identical replicas, drawn on the floor line); (b) per arm, the
(worker, version) state-hash checks that agreed with the learner, those that did not, and the
resyncs they caused, counted over the run (a bar per arm, its counts written beside it); (c) the
evaluated quality, to see whether drift costs learning. HiLo replays the decoded gradient and
stays at 0; `delta` ships a compressed parameter delta without replay and drifts; `full` in bf16
rounds the fp32 parameters (a constant, small drift). For `delta` the hash compares each worker
with the learner's shadow copy of what replicas hold, so it stays 100% while the drift grows.
"""
import argparse
import textwrap

import plot_common as pc


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("steps_csv", help="steps.csv or sweep_steps.csv")
    p.add_argument("workers_csv", help="workers.csv or sweep_workers.csv")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--ylabel", default="evaluated quality",
                   help="quality axis label (default %(default)s)")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()

    steps = pc.read_csv(args.steps_csv)
    pc.require(steps, ["arm", "version", "drift_rel_l2", "quality"], args.steps_csv)
    workers = pc.read_csv(args.workers_csv)
    pc.require(workers, ["arm", "version", "worker", "hash_ok", "resync"], args.workers_csv)
    steps = pc.filter_rows(steps, args.where)
    workers = pc.filter_rows(workers, args.where)
    steps, arms = pc.select_arms(steps, args.arms)
    workers = [w for w in workers if w["arm"] in arms]
    combos = list(dict.fromkeys(r.get("combo", "") for r in steps))

    positive = [pc.num(r["drift_rel_l2"]) for r in steps if (pc.num(r["drift_rel_l2"]) or 0) > 0]
    floor = min(positive) / 10 if positive else 1e-8

    series = [(c, a) for c in combos for a in arms
              if any(r["arm"] == a and r.get("combo", "") == c for r in steps)]
    labels = [pc.arm_label(a) if len(combos) == 1 else f"{pc.arm_label(a)} [{c}]"
              for c, a in series]
    fig, (axd, axh, axq), legend_ax = pc.new_figure(
        args.width, 3, legend_rows=pc.legend_rows_needed(args.width, labels))
    print(f"{'series':<34}{'versions':>9}{'drift max':>11}{'drift last':>11}"
          f"{'hash ok':>10}{'resyncs':>9}{'final q':>10}")
    exact_zero, handles = [], []
    checks = []  # (label, colour, agreed, total, resyncs) per series, for panel (b)
    for idx, ((combo, arm), label) in enumerate(zip(series, labels)):
        rs = [r for r in steps if r["arm"] == arm and r.get("combo", "") == combo
              and pc.num(r["drift_rel_l2"]) is not None]
        if not rs:
            continue
        kw = pc.arm_style(arm)
        if len(combos) > 1 and len(arms) == 1:
            colour, marker = pc.series_style(idx)
            kw = dict(color=colour, marker=marker, linestyle="-", markerfacecolor=colour)
        kw["markersize"] = 2.5
        pts = sorted((int(r["version"]), pc.num(r["drift_rel_l2"])) for r in rs)
        every = max(1, len(pts) // 12)  # markers on a dozen points, not on every version
        h, = axd.plot([v for v, _ in pts], [max(d, floor) for _, d in pts], markevery=every,
                      **kw)
        handles.append(h)
        ws = [w for w in workers if w["arm"] == arm and w.get("combo", "") == combo]
        per_version = {}
        for w in ws:
            per_version.setdefault(int(w["version"]), []).append(
                (int(w["hash_ok"]), int(w["resync"])))
        vs = sorted(per_version)
        resync = [sum(s for _, s in per_version[v]) for v in vs]
        q = sorted((int(r["version"]), pc.num(r["quality"])) for r in steps
                   if r["arm"] == arm and r.get("combo", "") == combo
                   and pc.num(r["quality"]) is not None)
        axq.plot([v for v, _ in q], [y for _, y in q], **kw)
        total_ok = sum(h for v in vs for h, _ in per_version[v])
        total = sum(len(per_version[v]) for v in vs)
        if all(d == 0 for _, d in pts):
            exact_zero.append(arm)
        checks.append((label, kw["color"], total_ok, total, sum(resync)))
        print(f"{label[:33]:<34}{len(pts):>9}{max(d for _, d in pts):>11.3g}"
              f"{pts[-1][1]:>11.3g}{(f'{total_ok}/{total}'):>10}{sum(resync):>9}"
              f"{(q[-1][1] if q else float('nan')):>10.4g}")

    axd.set_yscale("log")
    axd.axhline(floor, color="gray", linestyle=":", linewidth=0.8)
    axd.text(0.01, floor * 1.3, "\n".join(textwrap.wrap(
        "exactly 0 (bit-identical)" + (": " + ", ".join(exact_zero) if exact_zero else ""), 40)),
             transform=axd.get_yaxis_transform(), fontsize="small", color="gray", va="bottom",
             in_layout=False)
    # (b): one bar per arm, agreed checks solid, disagreeing ones hatched after them; the
    # counts are written beside each bar (all agreeing is the expected, informative case).
    ys = list(range(len(checks)))[::-1]
    most = max([t for _, _, _, t, _ in checks] or [1])
    for y, (label, colour, agreed, total, resyncs) in zip(ys, checks):
        axh.barh(y, agreed, color=colour, height=0.6)
        if total > agreed:
            axh.barh(y, total - agreed, left=agreed, color="white", edgecolor=colour,
                     hatch="////", height=0.6)
        axh.text(0.02 * most, y, label, va="center", fontsize="x-small", color="white")
        axh.text(total + 0.02 * most, y, f"{agreed}/{total},\n{resyncs} resync"
                 f"{'s' if resyncs != 1 else ''}", va="center", fontsize="x-small")
    axh.set_yticks([])
    axh.set_ylim(-0.6, len(checks) - 0.4)
    axh.set_xlim(0, most * 1.45)
    axd.set_xlabel("adapter version (optimizer step)")
    axd.set_ylabel("relative L2 drift (log scale)")
    pc.panel_title(axd, "a",
                   r"drift $\|\theta_{worker}-\theta_{learner}\|\,/\,\|\theta_{learner}\|$")
    axh.set_xlabel("(worker, version) hash checks")
    # delta arms: the learner hashes its shadow copy of the workers, not its own adapter, which
    # drifts away from them (a); their checks agree while their drift grows.
    delta = any(a.startswith("delta") for _, a in series)
    pc.panel_title(axh, "b", "hash checks agreeing" + (" (delta: with the\nlearner's copy of the "
                                                       "workers)" if delta else ""))
    axq.set_xlabel("adapter version (optimizer step)")
    axq.set_ylabel(args.ylabel)
    pc.panel_title(axq, "c", "quality")
    for ax in (axd, axq):
        ax.grid(alpha=0.3)
    axh.grid(alpha=0.3, axis="x")
    pc.put_legend(legend_ax, args.width, handles, labels)
    seeds = pc.seeds_beside(args.steps_csv)
    n_workers = len({w["worker"] for w in workers})
    n_note = f"{n_workers} workers" + (f", n = {len(seeds)} seed{'s' if len(seeds) > 1 else ''} "
                                       f"({', '.join(seeds)})" if seeds else "") + \
        ", one run per arm (no interval)"
    fig.suptitle("; ".join(t for t in (args.title, n_note) if t), fontsize="medium")
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
