#!/usr/bin/python3
"""One run folder as one page: writes RUN_DIR/report.html (or --out FILE).

Usage: scripts/report.py RUN_DIR [--out FILE] [--versions N]

RUN_DIR is what `hilo-sim run ... --out DIR` (or hilo-emu, or one run of a sweep) wrote. The
page is self-contained -- its figures are PNGs embedded as base64 data, no script, style sheet,
font or image is fetched from anywhere -- so it can be mailed or opened offline. Sections, each
present when the run has the file it needs:
  summary             summary.json, one column per arm (update latency p50/p99/max, bytes per
                      update, step time, final quality, hash mismatches, resyncs, ...)
  update latency      the CDF of workers.csv's latency_s per arm (applied versions)
  link utilisation    links.csv: mean and peak utilisation of each link and direction per arm
  learning curve      steps.csv's quality against simulated time, per arm
  timeline            steps/workers/rollouts.csv as in scripts/plot_timeline.py, first arm (the
                      first --versions N versions, default 8)
Exit codes: 0 written, 2 RUN_DIR is not a finished run folder (no summary.json) or a bad flag.
Reads with scripts/hilo_runs.py; draws with matplotlib in the shared style (plot_common.py).
"""
import argparse
import base64
import html
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hilo_runs  # noqa: E402
import plot_common as pc  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

# summary.json fields shown, in order, with their labels (nested ones as "parent.child").
SUMMARY_FIELDS = [
    ("strategy", "strategy"), ("compressor", "compressor"), ("training_rank", "training rank"),
    ("budget", "budget"), ("update_latency_s.p50", "update latency p50 (s)"),
    ("update_latency_s.p99", "update latency p99 (s)"),
    ("update_latency_s.max", "update latency max (s)"),
    ("wire_bytes_per_update_mean", "wire bytes per update"),
    ("fraction_of_adapter_bytes", "fraction of adapter bytes"),
    ("step_time_s_mean", "step time mean (s)"), ("sim_time_s", "simulated time (s)"),
    ("final_quality", "final quality"), ("quality_metric", "quality metric"),
    ("hash_mismatches", "hash mismatches"), ("resyncs", "resyncs"),
    ("versions_lost", "versions lost"), ("steps", "steps"),
    ("busiest_link.link", "busiest link"),
    ("busiest_link.mean_utilisation", "busiest link mean utilisation"),
]


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def new_axes(h_in=2.6):
    pc.setup_style("full")
    fig, ax = plt.subplots(figsize=(pc.WIDTHS_IN["full"], h_in), layout="constrained")
    return fig, ax


def latency_cdf(run):
    fig, ax = new_axes()
    drawn = 0
    for arm in run.arms:
        rows = run.workers.where(arm=arm, hash_ok="1")
        xs = sorted(x for x in rows.column("latency_s") if x is not None)
        if not xs:
            continue
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        st = pc.arm_style(arm, run.arm(arm).get("strategy"), run.arm(arm).get("compressor"))
        ax.step(xs, ys, where="post", color=st["color"], linestyle=st["linestyle"],
                label=f"{pc.arm_label(arm)} (n={len(xs)})")
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("update latency (s): gradient ready to version applied at a worker")
    ax.set_ylabel("fraction of (version, worker)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return png(fig)


def link_utilisation(run):
    links = run.table("links")
    if not len(links):
        return None
    fig, ax = new_axes(max(2.0, 0.22 * len(links) + 0.8))
    labels, means, peaks, colours = [], [], [], []
    for r in links:
        labels.append(f"{r['arm']}: {r['link']} {r['direction']}")
        means.append(100 * float(r["mean_utilisation"] or 0))
        peaks.append(100 * float(r["peak_utilisation"] or 0))
        colours.append(pc.arm_style(r["arm"])["color"])
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, peaks, color="none", edgecolor=colours, linewidth=0.8, label="peak")
    ax.barh(ys, means, color=colours, label="mean")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize="x-small")
    ax.set_xlabel("link utilisation (%): filled = mean over the run, outline = peak window")
    ax.set_xlim(0, max(100.0, max(peaks) * 1.05))
    ax.grid(alpha=0.3, axis="x")
    return png(fig)


def learning_curve(run):
    steps = run.steps
    fig, ax = new_axes()
    drawn = 0
    metric = ""
    for arm in run.arms:
        rows = [r for r in steps.where(arm=arm) if r.get("quality")]
        if not rows:
            continue
        metric = run.arm(arm).get("quality_metric", metric)
        st = pc.arm_style(arm, run.arm(arm).get("strategy"), run.arm(arm).get("compressor"))
        ax.plot([float(r["sim_time_s"]) for r in rows], [float(r["quality"]) for r in rows],
                color=st["color"], linestyle=st["linestyle"], marker=st["marker"],
                markerfacecolor=st["markerfacecolor"], markersize=3, label=pc.arm_label(arm))
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    better = run.summary["arms"][0].get("higher_is_better")
    hint = "" if better is None else (" (higher is better)" if better else " (lower is better)")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(f"{metric or 'quality'}{hint}")
    ax.grid(alpha=0.3)
    ax.legend()
    return png(fig)


def timeline(run, versions):
    import plot_timeline as pt
    need = ("steps", "workers", "rollouts")
    if any(n not in run.tables for n in need):
        return None, ""
    arm = run.arms[0]
    tl = pt.arm_timeline(run.steps.rows, run.workers.rows, run.table("rollouts").rows, arm,
                         versions)
    if tl is None:
        return None, ""
    lanes, order, names, pubs, end = tl
    fig, ax = new_axes(0.34 * len(order) + 1.0)
    pt.draw(ax, lanes, order, names, pubs, 0.0, end)
    ax.set_xlabel("simulated time (s)")
    return png(fig), f"{pc.arm_label(arm)}, versions 1-{len(pubs)}"


def summary_table(run):
    arms = run.summary.get("arms", [])
    head = "".join(f"<th>{html.escape(a['name'])}</th>" for a in arms)
    body = []
    for path, label in SUMMARY_FIELDS:
        cells = [fmt(hilo_runs.summary_field(a, path)) for a in arms]
        if all(c == "" for c in cells):
            continue
        body.append(f"<tr><th>{html.escape(label)}</th>" +
                    "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table><tr><th></th>{head}</tr>{''.join(body)}</table>"


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em auto; max-width: 60em; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
th {{ background: #f3f3f3; }}
img {{ max-width: 100%; }}
.note {{ color: #666; font-size: 0.85em; }}
</style></head><body>
<h1>{title}</h1>
<p class="note">{meta}</p>
{sections}
</body></html>
"""


def report(run_dir, versions):
    run = hilo_runs.load_run(run_dir)
    s = run.summary
    title = f"hilo run: {s.get('scenario', os.path.basename(os.path.abspath(run_dir)))}"
    meta = (f"folder {html.escape(os.path.abspath(run_dir))}; seed {s.get('seed', '?')}; "
            f"mode {html.escape(str(s.get('mode', 'simulation')))}; files: "
            + html.escape(", ".join(sorted(os.listdir(run_dir)))))
    sections = ["<h2>Summary</h2>", summary_table(run)]
    missing = []

    def figure(heading, need, make, caption=""):
        if any(n not in run.tables for n in need):
            missing.append(f"{heading} (no {', '.join(n + '.csv' for n in need)})")
            return
        data = make()
        if isinstance(data, tuple):
            data, caption = data
        if data is None:
            missing.append(f"{heading} (nothing to draw)")
            return
        sections.append(f"<h2>{html.escape(heading)}</h2>")
        if caption:
            sections.append(f'<p class="note">{html.escape(caption)}</p>')
        sections.append(f'<img alt="{html.escape(heading)}" src="data:image/png;base64,{data}">')

    figure("Update latency", ("workers",), lambda: latency_cdf(run),
           "CDF over every applied (version, worker)")
    figure("Link utilisation", ("links",), lambda: link_utilisation(run))
    figure("Learning curve", ("steps",), lambda: learning_curve(run))
    figure("Timeline", ("steps", "workers", "rollouts"), lambda: timeline(run, versions))
    if missing:
        sections.append('<p class="note">Not shown: ' + html.escape("; ".join(missing)) + "</p>")
    return PAGE.format(title=html.escape(title), meta=meta, sections="\n".join(sections))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out", help="the page (default RUN_DIR/report.html)")
    ap.add_argument("--versions", type=int, default=8,
                    help="versions the timeline shows (default 8; 0: all)")
    args = ap.parse_args(argv)
    try:
        page = report(args.run_dir, args.versions)
    except FileNotFoundError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(args.run_dir, "report.html")
    with open(out, "w") as f:
        f.write(page)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
