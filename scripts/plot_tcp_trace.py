#!/usr/bin/python3
"""One connection's congestion window and smoothed RTT over time, from several TCP traces laid over
each other: the simulator's packet and flow models and the kernel in an emulation.

Reads tcp-trace.csv of `hilo-sim run --trace-tcp` and `hilo-emu run --trace-tcp` (the same
columns; sim/README.md), e.g.
  /usr/bin/python3 scripts/plot_tcp_trace.py results/validation/tcp-trace/ROW/packet.csv \
      results/validation/tcp-trace/ROW/flow.csv --labels packet,flow \
      --out results/validation/tcp-trace/ROW/overlay
A trace keeps a row only when a value changed, so each series is drawn as steps held until its
next row. Panel (a): cwnd; panel (b): SRTT, with each trace's smallest RTT sample dotted where
the trace has one. One connection end (--node sends to --peer) of one arm (--arm; default the
first arm of the first trace).
"""
import argparse
import os

import plot_common as pc


def label_of(path):
    """A trace's default label: its file name without .csv, or its folder's when that is
    tcp-trace.csv."""
    name = os.path.basename(path)
    if name == "tcp-trace.csv":
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return name[:-4] if name.endswith(".csv") else name


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("traces", nargs="+", help="tcp-trace.csv files")
    p.add_argument("--labels", default="", help="one label per trace (comma-separated; default "
                                                "the file or folder names)")
    p.add_argument("--arm", default="", help="the arm (default the first arm of the first trace)")
    p.add_argument("--node", default="learner", help="the sending end (default %(default)s)")
    p.add_argument("--peer", default="worker-0", help="the receiving end (default %(default)s)")
    p.add_argument("--until", type=float, default=0,
                   help="draw up to this time in s (default: the traces' end)")
    pc.add_output_args(p)
    args = p.parse_args()

    labels = args.labels.split(",") if args.labels else [label_of(t) for t in args.traces]
    if len(labels) != len(args.traces):
        p.error(f"--labels names {len(labels)} traces, {len(args.traces)} given")

    series = []  # (label, [(t, cwnd bytes, srtt s, min rtt s)])
    arm = args.arm
    for path, label in zip(args.traces, labels):
        rows = pc.read_csv(path, only_ok=False)
        pc.require(rows, ["arm", "time_s", "node", "peer", "cwnd_bytes", "srtt_s", "min_rtt_s"],
                   path)
        rows = pc.filter_rows(rows, args.where)
        if not arm and rows:
            arm = rows[0]["arm"]
        pts = [(pc.num(r["time_s"]), pc.num(r["cwnd_bytes"]), pc.num(r["srtt_s"]),
                pc.num(r["min_rtt_s"]))
               for r in rows
               if r["arm"] == arm and r["node"] == args.node and r["peer"] == args.peer]
        if args.until > 0:
            pts = [q for q in pts if q[0] <= args.until]
        if not pts:
            p.error(f"{path}: no rows of arm {arm!r} from {args.node} to {args.peer}")
        series.append((label, pts))

    fig, axes, legend_ax = pc.new_figure(args.width, 2,
                                         legend_rows=pc.legend_rows_needed(args.width, labels))
    print(f"{'trace':<24}{'rows':>7}{'end s':>9}{'max cwnd kB':>13}{'median SRTT ms':>16}")
    handles = []
    for i, (label, pts) in enumerate(series):
        colour, _ = pc.series_style(i)
        kw = dict(color=colour, drawstyle="steps-post", linewidth=1.0)
        t = [q[0] for q in pts]
        h, = axes[0].plot(t, [(q[1] or 0) / 1e3 for q in pts], **kw)
        handles.append(h)
        srtt = [(x, q[2] * 1e3) for x, q in zip(t, pts) if q[2] is not None]
        axes[1].plot([x for x, _ in srtt], [y for _, y in srtt], **kw)
        mins = [(x, q[3] * 1e3) for x, q in zip(t, pts) if q[3] is not None]
        if mins:
            axes[1].plot([x for x, _ in mins], [y for _, y in mins], color=colour,
                         drawstyle="steps-post", linestyle=":", linewidth=0.8)
        ys = sorted(y for _, y in srtt)
        median = ys[len(ys) // 2] if ys else float("nan")
        print(f"{label[:23]:<24}{len(pts):>7}{t[-1]:>9.3f}"
              f"{max((q[1] or 0) for q in pts) / 1e3:>13.1f}{median:>16.2f}")

    axes[0].set_xlabel("time since the run's start (s)")
    axes[0].set_ylabel("congestion window (kB)")
    pc.panel_title(axes[0], "a", f"cwnd, {args.node} to {args.peer}")
    axes[1].set_xlabel("time since the run's start (s)")
    axes[1].set_ylabel("RTT (ms)")
    pc.panel_title(axes[1], "b", "SRTT (solid), min RTT (dotted)")
    for ax in axes:
        ax.grid(alpha=0.3, which="major")
    pc.put_legend(legend_ax, args.width, handles, labels)
    fig.suptitle(f"arm {arm}: one run per trace, no interval", fontsize="medium")
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
