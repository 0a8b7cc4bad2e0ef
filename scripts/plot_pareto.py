#!/usr/bin/python3
"""Final learning quality vs bytes per update (% of the adapter's bytes), per arm (figure 2).

Reads one or more sweep.csv files written by scripts/sweep.py over budgets (and seeds), e.g.
  scripts/sweep.py scenarios/paper/fig2-pareto.textproto --zip \
      --grid arms[hilo-spar].budget=0.5%,1.6%,5% --grid arms[delta-spar].budget=0.5%,1.6%,5% \
      --cross seed=1,2,3 --out results/paper/fig2
  /usr/bin/python3 scripts/plot_pareto.py results/paper/fig2/sweep.csv \
      --steps results/paper/fig2/sweep_steps.csv --out results/paper/fig2-pareto
Rows are pooled over all files. One point per (arm, budget as written): x = mean measured wire
bytes per update as % of the adapter's bf16 bytes (log scale), y = mean final quality over the
rows of that point (e.g. seeds), with the 95% t-interval as an error bar when there are several.
Arms of strategy `full` are horizontal lines (mean over seeds, one value per seed) with their
interval as a band. Colours and markers follow plot_common.arm_style: HiLo arms solid and
filled, `delta` arms dashed and hollow, one colour per compressor. Each arm is drawn shifted
along x by a small fixed factor (a few %) so that error bars at equal bytes stay apart; the
printed table has the measured values.

Workloads side by side: rows are split into panels by their quality metric (reverse_kl:
distillation, lower is better; mean_reward: GRPO, higher is better), so a distillation sweep and
a GRPO sweep given together are drawn next to each other.

--steps (one sweep_steps.csv per sweep.csv, same order): draws the untrained quality (version 0)
as a dotted line, and enables --normalize: y = share of full sync's progress, (q - q0) /
(q_full - q0) with q0 the untrained quality and q_full full sync's final quality on the same
combination (seed), so 1 = as good as full sync on both workloads.

Drift (shown when any arm drifts, e.g. `delta` arms): a panel under each quality panel with
each arm's largest relative L2 distance between a worker's adapter and the learner's over the
run (drift_rel_l2_max of summary.json; HiLo's is exactly 0 and drawn on the floor line).
"""
import argparse
import math
import sys

import plot_common as pc
from matplotlib.ticker import NullLocator  # noqa: E402  (after plot_common sets the backend)


def quality_rows(paths, steps_paths):
    """Pooled rows of every sweep.csv, each tagged with `_src` (file index); and version-0
    qualities {(src, combo): q0} from the steps files."""
    rows, q0 = [], {}
    for i, path in enumerate(paths):
        rs = pc.read_csv(path)
        pc.require(rs, ["arm", "strategy", "compressor", "fraction_of_adapter_bytes",
                        "final_quality"], path)
        for r in rs:
            r["_src"] = i
        rows += rs
    for i, path in enumerate(steps_paths):
        for r in pc.read_csv(path):
            if r.get("version") == "0" and pc.num(r.get("quality")) is not None:
                q0.setdefault((i, r.get("combo", "")), pc.num(r["quality"]))
    return rows, q0


def seed_of(r):
    return r.get("seed", r.get("summary.seed", ""))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_csv", nargs="+", help="sweep.csv file(s); rows are pooled")
    p.add_argument("--steps", action="append", default=[],
                   help="sweep_steps.csv of each sweep.csv, same order: untrained quality line "
                        "and --normalize")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--normalize", action="store_true",
                   help="plot the share of full sync's progress (needs --steps)")
    p.add_argument("--no-drift", action="store_true", help="no drift panel")
    p.add_argument("--titles", default="",
                   help="panel titles separated by ';' (default: workload and metric)")
    p.add_argument("--title", default="", help="figure title (default none)")
    pc.add_output_args(p)
    args = p.parse_args()
    if args.steps and len(args.steps) != len(args.sweep_csv):
        sys.exit(f"{sys.argv[0]}: give one --steps per sweep.csv ({len(args.sweep_csv)}), "
                 f"got {len(args.steps)}")
    if args.normalize and not args.steps:
        sys.exit(f"{sys.argv[0]}: --normalize needs --steps (the untrained quality)")

    rows, q0 = quality_rows(args.sweep_csv, args.steps)
    rows = pc.filter_rows(rows, args.where)
    rows, arms = pc.select_arms(rows, args.arms)
    if not arms:
        sys.exit(f"{sys.argv[0]}: no arm to plot")
    metrics = list(dict.fromkeys(r.get("quality_metric", "") for r in rows))
    titles = [t for t in args.titles.split(";")] if args.titles else []

    # Per-combination references: full sync's final quality and the untrained quality.
    full_q = {}
    for r in rows:
        if r["strategy"] == "full":
            full_q.setdefault((r["_src"], r.get("combo", "")), pc.num(r["final_quality"]))

    def y_of(r):
        q = pc.num(r["final_quality"])
        if not args.normalize:
            return q
        key = (r["_src"], r.get("combo", ""))
        if key not in q0 or key not in full_q or full_q[key] == q0[key]:
            return None
        return (q - q0[key]) / (full_q[key] - q0[key])

    panels = []  # (metric, rows)
    for m in metrics:
        panels.append((m, [r for r in rows if r.get("quality_metric", "") == m]))
    any_drift = not args.no_drift and any(
        (pc.num(r.get("drift_rel_l2_max")) or 0) > 0 and r["strategy"] != "full" for r in rows)

    labels = {a: pc.arm_label(a, *next((r["strategy"], r["compressor"]) for r in rows
                                       if r["arm"] == a)) for a in arms}
    legend_labels = [labels[a] for a in arms] + (["untrained (version 0)"] if args.steps
                                                 and not args.normalize else [])
    n = len(panels)
    col = args.width == "column"
    panel_h = 2.1 if col else 2.6
    drift_h = 0.9 if any_drift else 0
    body_h = (panel_h + drift_h) * (n if col else 1)
    fig, body, legend_ax = pc.figure_with_legend(
        args.width, body_h, pc.legend_rows_needed(args.width, legend_labels))
    outer = body.subgridspec(n if col else 1, 1 if col else n, hspace=0.05, wspace=0.08)

    print(f"{'panel':<14}{'arm':<18}{'budget':>9}{'n':>3}{'% adapter':>11}"
          f"{'quality':>11}{'95% CI +-':>11}{'drift max':>11}")
    handles = {}
    for pi, (metric, prs) in enumerate(panels):
        cell = outer[pi, 0] if col else outer[0, pi]
        if any_drift:
            sub = cell.subgridspec(2, 1, height_ratios=[panel_h, drift_h], hspace=0.04)
            ax = fig.add_subplot(sub[0, 0])
            axd = fig.add_subplot(sub[1, 0], sharex=ax)
        else:
            ax, axd = fig.add_subplot(cell), None
        floor_drift = None
        drift_pts = []
        bars = []  # (x, mean, half-width, colour) of every interval drawn, for the clip marks
        panel_ns, panel_means = [], []
        for arm in arms:
            rs = [r for r in prs if r["arm"] == arm]
            if not rs:
                continue
            kw = pc.row_style(rs[0])
            if rs[0]["strategy"] == "full":
                by_seed = {}
                for r in rs:
                    by_seed.setdefault((r["_src"], seed_of(r)), y_of(r))
                m, ci, k = pc.mean_ci(list(by_seed.values()))
                h = ax.axhline(m, color=kw["color"], linestyle="-", linewidth=1.0, zorder=1)
                if not math.isnan(ci):
                    ax.axhspan(m - ci, m + ci, color=kw["color"], alpha=0.12, linewidth=0)
                handles.setdefault(arm, h)
                frac = pc.mean([pc.num(r["fraction_of_adapter_bytes"]) for r in rs])
                d = pc.mean([pc.num(r.get("drift_rel_l2_max")) for r in rs])
                print(f"{metric[:13]:<14}{arm:<18}{'-':>9}{k:>3}{100 * frac:>11.4g}{m:>11.5g}"
                      f"{ci:>11.3g}{d:>11.3g}")
                continue
            points = {}
            for r in rs:
                points.setdefault(r.get("budget", ""), []).append(r)
            pts = []
            for budget, group in points.items():
                x = pc.mean([100 * pc.num(r["fraction_of_adapter_bytes"]) for r in group])
                m, ci, k = pc.mean_ci([y_of(r) for r in group])
                panel_ns.append(k)
                panel_means.append(m)
                d = pc.mean([pc.num(r.get("drift_rel_l2_max")) for r in group])
                pts.append((x, m, ci, k, budget, d))
            pts.sort()
            # Arms measured at the same bytes would hide each other's error bars: each arm is
            # drawn shifted by a small fixed factor (at most +-4%, invisible on the log axis).
            dodge = 1 + 0.02 * (arms.index(arm) - (len(arms) - 1) / 2) / max(1, len(arms) / 4)
            xs = [t[0] * dodge for t in pts]
            ys = [t[1] for t in pts]
            errs = [0 if math.isnan(t[2]) else t[2] for t in pts]
            h = ax.errorbar(xs, ys, yerr=errs if any(errs) else None, capsize=2,
                            elinewidth=0.8, **kw)
            bars += [(x, y, e, kw.get("color")) for x, y, e in zip(xs, ys, errs) if e]
            handles.setdefault(arm, h.lines[0])
            for x, m, ci, k, budget, d in pts:
                print(f"{metric[:13]:<14}{arm:<18}{budget:>9}{k:>3}{x:>11.4g}{m:>11.5g}"
                      f"{ci:>11.3g}{d:>11.3g}")
            if axd is not None:
                drift_pts.append((kw, xs, [t[5] for t in pts]))
        if args.steps and not args.normalize:
            v0 = pc.mean([q for (src, _), q in q0.items()
                          if any(r["_src"] == src for r in prs)])
            if not math.isnan(v0):
                handles.setdefault("_untrained",
                                   ax.axhline(v0, color="gray", linestyle=":", linewidth=1.0))
        if args.normalize:
            ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_xscale("log")
        hib = pc.higher_is_better(prs)
        ylabel = ("share of full sync's progress" if args.normalize else
                  "final " + pc.quality_label(prs, short=True).split(" (")[0])
        ax.set_ylabel(ylabel)
        letter = "abcdefgh"[2 * pi if axd is not None else pi]
        title = titles[pi] if pi < len(titles) else (
            f"{pc.workload_name(prs)}" + (f": {'higher' if hib else 'lower'} is better"
                                          if hib is not None and not args.normalize else ""))
        note = pc.interval_note(panel_ns)
        pc.panel_title(ax, letter, title + (f" ({note})" if note else ""))
        ax.grid(alpha=0.3, which="major")
        # The y range follows the means (and 1.0 when normalised); an interval wider than that
        # is cut at the frame rather than stretching the axis for every other point.
        finite = [m for m in panel_means if not math.isnan(m)] + ([1.0] if args.normalize else [])
        if finite:
            lo, hi = min(finite), max(finite)
            pad = 0.08 * (hi - lo if hi > lo else abs(hi) or 1.0)
            ax.set_ylim(lo - pad, hi + pad)
            pc.mark_clipped_intervals(ax, bars)
        if axd is not None:
            # Drift 0 (bit-identical arms) has no place on a log axis: it is drawn on a floor
            # a decade below the smallest drift's decade, labelled "0" and set off by a break.
            positives = [d for _, _, ds in drift_pts for d in ds if d and d > 0]
            low_decade = math.floor(math.log10(min(positives))) if positives else -7
            high_decade = math.ceil(math.log10(max(positives))) if positives else -6
            floor_drift = 10.0 ** (low_decade - 1)
            for kw, xs, ds in drift_pts:
                ax_kw = dict(kw, markersize=max(kw.get("markersize", 3) - 1, 2)) \
                    if "markersize" in kw else kw
                axd.plot(xs, [max(d or 0, floor_drift) for d in ds], **ax_kw)
            axd.set_yscale("log")
            axd.set_ylim(floor_drift / 2, 10.0 ** high_decade * 1.5)
            axd.axhline(floor_drift, color="gray", linestyle=":", linewidth=0.8)
            decades = list(range(low_decade, high_decade + 1))
            step = max(1, math.ceil(len(decades) / 3))
            ticks = [floor_drift] + [10.0 ** e for e in decades[::-1][::step][::-1]]
            axd.set_yticks(ticks)
            axd.set_yticklabels(["0"] + [f"{t:g}" for t in ticks[1:]])
            axd.yaxis.set_minor_locator(NullLocator())
            pc.axis_break(axd, math.sqrt(floor_drift * 10.0 ** low_decade))
            axd.text(0.995, 0.94, f"({'abcdefgh'[2 * pi + 1]}) drift (0: bit-identical)", fontsize="small", color="dimgray",
                     transform=axd.transAxes, ha="right", va="top", in_layout=False)
            axd.set_ylabel("max drift\n(rel. L2)")
            axd.grid(alpha=0.3, which="major")
            ax.tick_params(labelbottom=False)
            bottom = axd
        else:
            bottom = ax
        bottom.set_xlabel("wire bytes per update (% of adapter bf16 bytes)")
        lo, hi = ax.get_xlim()
        pc.thin_log_axis(bottom.xaxis, lo, hi, max_ticks=8)

    order = [a for a in arms if a in handles]
    hl = [handles[a] for a in order]
    ll = [labels[a] for a in order]
    if "_untrained" in handles:
        hl.append(handles["_untrained"])
        ll.append("untrained (version 0)")
    pc.put_legend(legend_ax, args.width, hl, ll)
    if args.title:
        fig.suptitle(args.title)
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
