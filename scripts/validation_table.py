#!/usr/bin/python3
"""Formats scripts/compare_modes.py rows (a CSV) as a Markdown table of simulator vs emulation.

Usage: scripts/validation_table.py CSV [--meta FILE] [--commits FILE] [--notes FILE] > TABLE.md

Per scenario and arm: update latency p50 and p99 and mean step time in both modes with the
simulator/emulation ratio, the updates' transfer time (network only) ratio, whether the final
quality is bit-identical, and the emulator's lag. A ratio within the goals (p50 within 10%, p99
within 20%) is plain; one outside is marked with "!". --meta FILE (key: value lines: command,
commit, kernel, load) is printed above the table, --notes FILE (Markdown: why rows miss) below
it. --commits FILE (CSV label,side,commit,date as scripts/validate_emulation.sh writes it) adds
the commit and date each side of each row was made at; a row without a line for a side is an
error, since the table would then claim a provenance it does not have (exit code 2). `emu runs`
gives how many emulation runs a row's reference is the median of (compare_modes.py --emu-runs)
and the range of their p50s; a row without that column (made before it) had one run. Runs only
the Python standard library. Rows made since compare_modes.py records the emulation's latency net
of compute overrun (summary.json's update_latency_net_s) add `net p50 ratio` and `net p99 ratio`:
the simulator's latency over it, the network's error without the real CPU's overrun; a table of
older rows has no such columns.
"""
import argparse
import csv
import sys


def read_commits(path):
    """{(label, side): "commit, date"} from a label,side,commit,date CSV."""
    made = {}
    with open(path, newline="") as f:
        for n, line in enumerate(csv.DictReader(f), start=2):
            if line.get("side") not in ("sim", "emu") or not line.get("label"):
                raise ValueError(f"{path}:{n}: needs label and side sim|emu")
            made[(line["label"], line["side"])] = f"{line['commit']}, {line['date']}"
    return made


def loss_of(row):
    """The row's random loss rate, from its network.worker_link.loss override (0 without one)."""
    for item in (row.get("overrides") or "").split():
        if item.startswith("network.worker_link.loss="):
            return float(item.split("=", 1)[1])
    return 0.0


def runs_cell(row):
    """"1", or "3 (0.239-0.273)": the emulation runs and the range of their p50s."""
    runs = int(row.get("emu_runs") or 1)
    if runs == 1:
        return "1"
    return (f"{runs} ({float(row['emu_latency_p50_min_s']):.3f}-"
            f"{float(row['emu_latency_p50_max_s']):.3f})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--meta")
    parser.add_argument("--notes")
    parser.add_argument("--commits")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    made = None
    if args.commits:
        try:
            made = read_commits(args.commits)
            for r in rows:
                for side in ("sim", "emu"):
                    if (r["label"], side) not in made:
                        raise ValueError(f"{args.commits}: no line for row '{r['label']}', "
                                         f"side '{side}'")
        except (OSError, ValueError, KeyError) as e:
            print(f"validation_table.py: {e}", file=sys.stderr)
            return 2
    print("# Simulator vs emulated links\n")
    if args.meta:
        with open(args.meta) as f:
            for line in f:
                print(f"- {line.strip()}")
        print()
    print("Ratios are simulator / emulation. Goals: update latency p50 within 10% (0.90-1.10), "
          "p99 within 20% (0.80-1.20); `!` marks a miss. `xfer` is the updates' transfer time "
          "alone (published to received), `lag p99` the emulator's own lag behind real time, "
          "`carried` the link traffic (all links summed) it carried in its busiest second, "
          "`emu runs` how many emulation runs the row's emulation figures are the median of, "
          "with the range of their p50s.\n")
    net = any(r.get("latency_net_p50_ratio") for r in rows)
    net_head = " net p50 ratio | net p99 ratio |" if net else ""
    made_head = " sim made at | emu made at |" if made else ""
    print("| scenario | arm | lat p50 sim | emu | ratio | lat p99 sim | emu | ratio | step sim | emu "
          "| ratio | xfer p50 ratio | quality | lag p99 ms | carried Mbps | emu runs (p50 s) |" +
          net_head + made_head)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" +
          ("---|---|" if net else "") + ("---|---|" if made else ""))
    misses = 0
    for r in rows:
        p50 = float(r["latency_p50_ratio"])
        p99 = float(r["latency_p99_ratio"])
        mark50 = "" if 0.9 <= p50 <= 1.1 else " !"
        mark99 = "" if 0.8 <= p99 <= 1.2 else " !"
        misses += bool(mark50 or mark99)
        quality = "same" if r["quality_same"] == "1" else "differs"
        print(f"| {r['label']} | {r['arm']} | {float(r['sim_latency_p50_s']):.3f} | "
              f"{float(r['emu_latency_p50_s']):.3f} | {p50:.3f}{mark50} | "
              f"{float(r['sim_latency_p99_s']):.3f} | {float(r['emu_latency_p99_s']):.3f} | "
              f"{p99:.3f}{mark99} | {float(r['sim_step_s']):.3f} | {float(r['emu_step_s']):.3f} | "
              f"{float(r['step_ratio']):.3f} | {float(r['transfer_p50_ratio']):.3f} | {quality} | "
              f"{float(r['emu_lag_p99_s']) * 1e3:.2f} | "
              f"{float(r.get('emu_carried_peak_bps') or 'nan') / 1e6:.0f} | {runs_cell(r)} |" +
              (f" {float(r.get('latency_net_p50_ratio') or 'nan'):.3f} | "
               f"{float(r.get('latency_net_p99_ratio') or 'nan'):.3f} |" if net else "") +
              (f" {made[(r['label'], 'sim')]} | {made[(r['label'], 'emu')]} |" if made else ""))
    lossy = [r for r in rows if loss_of(r) > 0]
    clean = [r for r in rows if loss_of(r) == 0]
    clean_met = sum(0.9 <= float(r["latency_p50_ratio"]) <= 1.1 and
                    0.8 <= float(r["latency_p99_ratio"]) <= 1.2 for r in clean)
    lossy_met = sum(0.75 <= float(r["latency_p50_ratio"]) <= 1.25 for r in lossy)
    print(f"\n{len(rows) - misses} of {len(rows)} rows meet both goals; {clean_met} of "
          f"{len(clean)} loss-free rows do; {lossy_met} of {len(lossy)} rows with random loss "
          "have p50 within 25%.")
    if args.notes:
        with open(args.notes) as f:
            print("\n" + f.read().rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
