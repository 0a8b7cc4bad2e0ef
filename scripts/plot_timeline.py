#!/usr/bin/python3
"""One run as a timeline over simulated time: what the learner and every worker is doing.

Reads steps.csv, workers.csv and rollouts.csv of a run folder (`hilo-sim run ... --out DIR`, or
a sweep's DIR/runs/<combo>), e.g.
  build/sim/hilo-sim run scenarios/teaching/04-stragglers.textproto --out /tmp/t4
  build/sim/hilo-sim run scenarios/teaching/04-stragglers.textproto \
      --set mode.max_staleness=1 --out /tmp/t4-stale
  /usr/bin/python3 scripts/plot_timeline.py /tmp/t4 /tmp/t4-stale --out /tmp/t4-timeline
One panel per (run folder, arm), all on the same time axis. Lanes:
  - learner: training step (train_s before grad_ready_s), encode + its own decode (grad_ready_s
    to the publication), waiting for trajectories (the rest); a triangle marks each publication;
  - each worker (named by index and GPU): rolling out (rollouts.csv started_s to done_s,
    labelled with the adapter version it samples with; light blue when that version is older
    than the one the round's trajectories train on, i.e. stale); applying an update (decode +
    replay, or loading for full sync; it ends at ready_s and starts when the update arrived, the
    previous apply ended or the rollout holding the worker's GPU ended) on a middle strip; waiting (neither); and, on a thin lower strip,
    the update in flight (publication to received_s).
The picture explains stragglers (fast GPUs waiting for slow ones in synchronous mode) and
staleness (with max_staleness >= 1 fast workers roll out on older versions instead of waiting).
--from-s/--to-s choose a time window; --versions N stops after version N's publication.
"""
import argparse
import os
import sys

import plot_common as pc
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

COLOURS = {
    "rollout": "#0072B2",
    "stale rollout": "#56B4E9",
    "apply": "#009E73",
    "receive": "#E69F00",
    "train": "#CC79A7",
    "encode": "#D55E00",
    "waiting": "#E5E5E5",
}
LABELS = {
    "rollout": "rolling out (current version)",
    "stale rollout": "rolling out (stale version)",
    "apply": "applying an update",
    "receive": "update in flight",
    "train": "learner: training step",
    "encode": "learner: encode + own decode",
    "waiting": "waiting",
}


def read_run(folder):
    paths = {n: os.path.join(folder, n + ".csv") for n in ("steps", "workers", "rollouts")}
    for n, p in paths.items():
        if not os.path.exists(p):
            sys.exit(f"{sys.argv[0]}: {folder}: no {n}.csv (a run folder of hilo-sim run)")
    steps = pc.read_csv(paths["steps"])
    pc.require(steps, ["arm", "version", "sim_time_s", "grad_ready_s", "train_s"],
               paths["steps"])
    workers = pc.read_csv(paths["workers"])
    pc.require(workers, ["arm", "version", "worker", "gpu", "received_s", "ready_s"],
               paths["workers"])
    rollouts = pc.read_csv(paths["rollouts"])
    pc.require(rollouts, ["arm", "round", "worker", "behaviour_version", "started_s", "done_s"],
               paths["rollouts"])
    return steps, workers, rollouts


def union_length(intervals):
    """The total length of the union of the intervals (overlaps counted once)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def intervals_gaps(busy, t0, t1):
    """The gaps between the union of busy intervals, within [t0, t1]."""
    gaps, t = [], t0
    for a, b in sorted(busy):
        if a > t:
            gaps.append((t, min(a, t1)))
        t = max(t, b)
        if t >= t1:
            break
    if t < t1:
        gaps.append((t, t1))
    return [(a, b) for a, b in gaps if b > a]


def arm_timeline(steps, workers, rollouts, arm, versions):
    """Bars per lane: {lane: [(kind, start, end, text)]}, lane order, publications, end time."""
    pubs = {}
    learner = []
    for r in steps:
        if r["arm"] != arm or r["version"] == "0" or pc.num(r["grad_ready_s"]) is None:
            continue
        v = int(r["version"])
        if versions and v > versions:
            continue
        g, pub, train = pc.num(r["grad_ready_s"]), pc.num(r["sim_time_s"]), pc.num(r["train_s"])
        pubs[v] = pub
        learner.append(("train", g - (train or 0), g, ""))
        learner.append(("encode", g, pub, ""))
    if not pubs:
        return None
    end = max(pubs.values())
    lanes = {"learner": learner}
    gpu = {}
    applies = {}
    for r in workers:
        if r["arm"] != arm:
            continue
        v, w = int(r["version"]), int(r["worker"])
        if versions and v > versions:
            continue
        gpu[w] = r["gpu"]
        applies.setdefault(w, []).append((v, pc.num(r["received_s"]), pc.num(r["ready_s"])))
    for r in rollouts:
        if r["arm"] != arm:
            continue
        w = int(r["worker"])
        a, b = pc.num(r["started_s"]), pc.num(r["done_s"])
        if versions and a > end:
            continue
        bv = int(r["behaviour_version"])
        # Round r's trajectories train version r from version r - 1: sampled with an older
        # version they are off-policy (stale) by that many versions.
        rnd = int(r["round"]) if pc.num(r.get("round")) is not None else bv + 1
        kind = "stale rollout" if bv < rnd - 1 else "rollout"
        lanes.setdefault(f"w{w}", []).append((kind, a, b, f"v{bv}"))
        end = max(end, b) if not versions else end
    for w, evs in applies.items():
        evs.sort(key=lambda e: (e[2], e[0]))
        prev_ready = -1.0
        held = [(a, b) for k, a, b, _ in lanes.get(f"w{w}", []) if k in ("rollout", "stale rollout")]
        for v, received, ready in evs:
            start = max(received, prev_ready)
            # The worker's one GPU: an update that arrives mid-rollout is applied after it.
            start = max([start] + [b for a, b in held if a < ready and start < b <= ready])
            lanes.setdefault(f"w{w}", []).append(("apply", start, ready, ""))
            if v in pubs:
                lanes[f"w{w}"].append(("receive", pubs[v], received, ""))
            prev_ready = ready
            if not versions:
                end = max(end, ready)
    order = ["learner"] + [f"w{w}" for w in sorted(gpu)]
    names = {"learner": "learner"}
    names.update({f"w{w}": f"worker {w}\n{g}" for w, g in gpu.items()})
    return lanes, order, names, pubs, end


def draw(ax, lanes, order, names, pubs, t0, t1):
    n = len(order)
    for i, lane in enumerate(order):
        y = n - 1 - i  # learner on top
        bars = lanes.get(lane, [])
        busy = [(a, b) for k, a, b, _ in bars if k not in ("receive",)]
        for a, b in intervals_gaps(busy, t0, t1):
            ax.broken_barh([(a, b - a)], (y + 0.42, 0.5), color=COLOURS["waiting"], linewidth=0)
        for kind, a, b, text in bars:
            if b < t0 or a > t1 or b <= a:
                continue
            if kind == "receive":
                box = (y + 0.06, 0.14)
            elif kind == "apply" and lane != "learner":
                box = (y + 0.22, 0.18)
            else:
                box = (y + 0.42, 0.5)
            ax.broken_barh([(a, b - a)], box, color=COLOURS[kind], linewidth=0)
            if text and (b - a) > (t1 - t0) * 0.035:
                ax.text((max(a, t0) + min(b, t1)) / 2, y + 0.67, text, ha="center",
                        va="center", fontsize="x-small", color="white", clip_on=True)
    top = n - 1 + 0.95
    for v, t in sorted(pubs.items()):
        if t0 <= t <= t1:
            ax.plot([t], [top + 0.02], marker="v", color="black", markersize=3, clip_on=False)
    ax.set_yticks([n - 1 - i + 0.5 for i in range(n)])
    ax.set_yticklabels([names[l] for l in order], fontsize="x-small")
    ax.set_ylim(0, n + 0.05)
    ax.set_xlim(t0, t1)
    ax.tick_params(axis="y", length=0)
    ax.grid(alpha=0.3, axis="x")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", nargs="+", help="run folder(s) with steps/workers/rollouts.csv")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--labels", default="",
                   help="panel labels, ';'-separated, one per run folder (default: folder name)")
    p.add_argument("--versions", type=int, default=0,
                   help="draw up to version N's publication (default: the whole run)")
    p.add_argument("--from-s", type=float, default=None, help="start of the time window (s)")
    p.add_argument("--to-s", type=float, default=None, help="end of the time window (s)")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()

    labels = args.labels.split(";") if args.labels else []
    panels = []
    for i, folder in enumerate(args.run_dir):
        steps, workers, rollouts = read_run(folder)
        steps = pc.filter_rows(steps, args.where)
        _, arms = pc.select_arms(steps, args.arms)
        for arm in arms:
            tl = arm_timeline(steps, workers, rollouts, arm, args.versions)
            if tl is None:
                continue
            run_label = labels[i] if i < len(labels) else os.path.basename(
                os.path.normpath(folder))
            panels.append((f"{run_label}: {arm}", arm, tl))
    if not panels:
        sys.exit(f"{sys.argv[0]}: nothing to draw")
    t0 = args.from_s if args.from_s is not None else 0.0
    t1 = args.to_s if args.to_s is not None else max(tl[4] for _, _, tl in panels)
    if t1 <= t0:
        sys.exit(f"{sys.argv[0]}: empty time window [{t0}, {t1}]")

    lanes_n = [len(tl[1]) for _, _, tl in panels]
    kinds = [k for k in COLOURS if any(b[0] == k for _, _, tl in panels
                                       for bars in tl[0].values() for b in bars)]
    kinds.append("waiting")
    legend_labels = [LABELS[k] for k in dict.fromkeys(kinds)] + ["publication of a version"]
    col = args.width == "column"
    pc.setup_style(args.width)
    legend_rows = pc.legend_rows_needed(args.width, legend_labels)
    lane_h = 0.34 if col else 0.32
    body = sum(n * lane_h + 0.45 for n in lanes_n)
    fig, cell, legend_ax = pc.figure_with_legend(args.width, body + 0.3, legend_rows)
    gs = cell.subgridspec(len(panels), 1, height_ratios=[n + 1.3 for n in lanes_n])
    axes = []
    print(f"{'panel':<40}{'versions':>9}{'end s':>10}{'worker':>8}{'busy %':>8}{'stale':>7}")
    for i, (label, arm, (lanes, order, names, pubs, end)) in enumerate(panels):
        ax = fig.add_subplot(gs[i, 0], **({"sharex": axes[0]} if axes else {}))
        axes.append(ax)
        draw(ax, lanes, order, names, pubs, t0, t1)
        pc.panel_title(ax, "abcdefgh"[i % 8], label)
        if i < len(panels) - 1:
            ax.tick_params(labelbottom=False)
        for lane in order[1:]:
            bars = lanes.get(lane, [])
            # The union of the GPU's busy intervals: a stale rollout and an apply can overlap
            # in time, and summing them would count that time twice (more than 100%).
            busy = union_length([(a, min(b, end)) for k, a, b, _ in bars
                                 if k in ("rollout", "stale rollout", "apply") and a < end])
            stale = sum(1 for k, *_ in bars if k == "stale rollout")
            print(f"{label[:39]:<40}{len(pubs):>9}{end:>10.4g}{lane:>8}"
                  f"{100 * busy / end if end else 0:>8.1f}{stale:>7}")
    axes[-1].set_xlabel("simulated time (s)")
    handles = [Patch(color=COLOURS[k]) for k in dict.fromkeys(kinds)]
    handles.append(Line2D([], [], marker="v", color="black", linestyle="none", markersize=4))
    pc.put_legend(legend_ax, args.width, handles, legend_labels)
    if args.title:
        fig.suptitle(args.title)
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
