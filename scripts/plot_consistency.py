#!/usr/bin/python3
"""Replica consistency over versions: drift from the learner and hash agreement (figure 6).

Reads steps.csv and workers.csv of one `hilo-sim run` (or sweep_steps.csv and
sweep_workers.csv of scripts/sweep.py), e.g.
  /usr/bin/python3 scripts/plot_consistency.py results/paper/fig6/sweep_steps.csv \
      results/paper/fig6/sweep_workers.csv --out results/paper/fig6-consistency
Panels: (a) drift_rel_l2 = ||theta_worker - theta_learner|| / ||theta_learner|| after each
version (log scale; exactly 0 = bit-identical replicas, drawn on the floor line); (b) the fraction
of workers whose state hash matched the learner's for that version, and the resyncs; (c) the
evaluated quality, to see whether drift costs learning. HiLo replays the decoded gradient and
stays at 0; `delta` ships a compressed parameter delta without replay and drifts; `full` in bf16
rounds the fp32 parameters (a constant, small drift). For `delta` the hash compares each worker
with the learner's shadow copy of what replicas hold, so it stays 100% while the drift grows.
"""
import argparse

import plot_common as pc
from plot_common import plt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("steps_csv", help="steps.csv or sweep_steps.csv")
    p.add_argument("workers_csv", help="workers.csv or sweep_workers.csv")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--title", default="Replica consistency: HiLo replay vs parameter deltas")
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

    fig, (axd, axh, axq) = plt.subplots(1, 3, figsize=(17, 4.8))
    print(f"{'series':<34}{'versions':>9}{'drift max':>11}{'drift last':>11}"
          f"{'hash ok':>10}{'resyncs':>9}{'final q':>10}")
    idx = 0
    exact_zero, all_ok = [], []
    for combo in combos:
        for arm in arms:
            rs = [r for r in steps if r["arm"] == arm and r.get("combo", "") == combo
                  and pc.num(r["drift_rel_l2"]) is not None]
            if not rs:
                continue
            label = arm if len(combos) == 1 else f"{arm} [{combo}]"
            colour, marker = pc.style(arm, idx) if len(combos) == 1 else pc.style("", idx)
            idx += 1
            pts = sorted((int(r["version"]), pc.num(r["drift_rel_l2"])) for r in rs)
            axd.plot([v for v, _ in pts], [max(d, floor) for _, d in pts], color=colour,
                     marker=marker, markersize=3, label=label)
            ws = [w for w in workers if w["arm"] == arm and w.get("combo", "") == combo]
            per_version = {}
            for w in ws:
                per_version.setdefault(int(w["version"]), []).append(
                    (int(w["hash_ok"]), int(w["resync"])))
            vs = sorted(per_version)
            ok = [sum(h for h, _ in per_version[v]) / len(per_version[v]) for v in vs]
            resync = [sum(s for _, s in per_version[v]) for v in vs]
            axh.plot(vs, [100 * o for o in ok], color=colour, marker=marker, markersize=3,
                     label=label)
            if any(resync):
                axh.bar(vs, resync, color=colour, alpha=0.3)
            q = sorted((int(r["version"]), pc.num(r["quality"])) for r in steps
                       if r["arm"] == arm and r.get("combo", "") == combo
                       and pc.num(r["quality"]) is not None)
            axq.plot([v for v, _ in q], [y for _, y in q], color=colour, marker=marker,
                     markersize=3, label=label)
            total_ok = sum(h for v in vs for h, _ in per_version[v])
            total = sum(len(per_version[v]) for v in vs)
            if all(d == 0 for _, d in pts):
                exact_zero.append(label)
            if total and total_ok == total:
                all_ok.append(label)
            print(f"{label[:33]:<34}{len(pts):>9}{max(d for _, d in pts):>11.3g}"
                  f"{pts[-1][1]:>11.3g}{(f'{total_ok}/{total}'):>10}{sum(resync):>9}"
                  f"{(q[-1][1] if q else float('nan')):>10.4g}")

    axd.set_yscale("log")
    axd.axhline(floor, color="gray", linestyle=":", linewidth=1)
    axd.text(0.01, floor * 1.15, " exactly 0 (bit-identical) drawn here" +
             (": " + ", ".join(exact_zero) if exact_zero else ""),
             transform=axd.get_yaxis_transform(), fontsize=7, color="gray", va="bottom")
    if all_ok:
        axh.text(0.02, 0.9, "100% at every version: " + ", ".join(all_ok), fontsize=7,
                 transform=axh.transAxes, va="top", wrap=True)
    axd.set_xlabel("adapter version (optimizer step)")
    axd.set_ylabel("worker drift ||θ_w − θ_learner|| / ||θ_learner|| (log scale)")
    axd.set_title("(a) replica drift from the learner")
    axh.set_xlabel("adapter version (optimizer step)")
    axh.set_ylabel("workers whose state hash matched (%); bars: resyncs")
    axh.set_ylim(-5, 105)
    axh.set_title("(b) hash agreement")
    axq.set_xlabel("adapter version (optimizer step)")
    axq.set_ylabel("evaluated quality (distill: reverse KL, lower is better)")
    axq.set_title("(c) quality")
    for ax in (axd, axh, axq):
        ax.grid(alpha=0.3)
    axd.legend(fontsize=7)
    fig.suptitle(args.title)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
