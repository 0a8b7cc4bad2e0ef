#!/usr/bin/python3
"""Runs one scenario in the simulator and through emulated links, and compares them per arm.

Usage:
  scripts/compare_modes.py SCENARIO [--set PATH=VALUE ...] [--out DIR] [--label TEXT]
                           [--csv FILE] [--hilo-sim PATH] [--hilo-emu PATH]
                           [--emu-arg ARG ...] [--emu-runs N] [--reuse]

Runs `hilo-sim run SCENARIO --set ... --quiet --out DIR/sim` and
`hilo-emu run SCENARIO --set ... --network ns3 --quiet --out DIR/emu` (real processes in network
namespaces, the scenario's links in ns-3 real time; needs root), then prints per arm:
  - update latency p50 and p99 (seconds) in both modes and sim/emu, their ratio;
  - the emulation's update latency net of compute overrun (summary.json's update_latency_net_s:
    each version's latency less the real CPU's encode and replay time past the modelled GPU
    time) and the simulator's latency over it: the network's error without the CPU's;
  - mean step time in both and its ratio;
  - the transfer time of updates (published -> received, p50 over versions and workers), which
    isolates the network from the modelled compute both modes wait out;
  - wire bytes per update in both (equal: the same real payloads, the same padding);
  - final quality in both ("same" when bit-identical, as synchronous mode must be);
  - the emulation's own health: its lag p99, the link traffic it carried in its busiest second,
    and the largest compute overrun of the processes (real computation slower than modelled
    time lengthens the emulated latencies).
--csv appends one row per arm to FILE (header written when FILE is new), with --label and the
overrides in front: scripts/validate_emulation.sh builds results/validation/ from these rows.
--emu-runs N runs the emulation N times (DIR/emu, DIR/emu-2, ... DIR/emu-N): the kernel's TCP
is not deterministic, and whether an idle connection's window restarts halve it two or three
times can turn on a few milliseconds, so one emulated run can land a round trip away from the
next. The emulation's figures are then the MEDIAN over the runs of each run's figure (p50, p99,
step, transfer), its health the WORST run's (lag, carried peak, overrun), its quality "same" only
when every run's is; the CSV keeps every run's p50 (emu_latency_p50_runs_s) and their range.
--reuse skips a mode (or an emulation run) whose summary.json exists. Extra --emu-arg values go to
hilo-emu.

--hilo-sim and --hilo-emu locate the binaries (defaults $HILO_SIM / $HILO_EMU, else build/sim/).

Exit status: 0 when both runs finished, 1 when one failed (its log is named), 2 on bad input.
Runs only the Python standard library.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

import sweep_engine as engine
from hilo_runs import ratio, read_csv, transfer_times
CSV_FIELDS = [
    "label", "overrides", "arm", "sim_latency_p50_s", "emu_latency_p50_s", "latency_p50_ratio",
    "sim_latency_p99_s", "emu_latency_p99_s", "latency_p99_ratio", "sim_step_s", "emu_step_s",
    "step_ratio", "sim_transfer_p50_s", "emu_transfer_p50_s", "transfer_p50_ratio",
    "sim_wire_bytes", "emu_wire_bytes", "sim_quality", "emu_quality", "quality_same",
    "emu_lag_mean_s", "emu_lag_p99_s", "emu_lag_max_s", "emu_link_capacity_bps",
    "emu_carried_peak_bps", "emu_overrun_max_s", "emu_warnings", "emu_runs",
    "emu_latency_p50_min_s", "emu_latency_p50_max_s", "emu_latency_p50_runs_s",
    "emu_latency_net_p50_s", "latency_net_p50_ratio", "emu_latency_net_p99_s",
    "latency_net_p99_ratio",
]


def median(values):
    """The middle value (the mean of the two middle ones for an even count); nan when empty."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return float("nan")
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def emu_dir_name(k):
    """The k-th emulation run's folder (1-based): emu, emu-2, emu-3, ..."""
    return "emu" if k == 1 else f"emu-{k}"


def run(cmd, log):
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        return subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)


def percentile(values, q):
    """Nearest-rank percentile, as the simulator's summaries compute it."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 100)))
    return ordered[min(rank, len(ordered)) - 1]


def transfers(run_dir, arm):
    """Per (version, worker): received_s - published_s of the update."""
    return transfer_times(run_dir, arm)


def overrun_max(run_dir, arm):
    worst = 0.0
    for row in read_csv(os.path.join(run_dir, "steps.csv")):
        if row["arm"] != arm:
            continue
        for key in ("train_overrun_s", "encode_overrun_s", "rollout_overrun_s_max",
                    "apply_overrun_s_max"):
            if row.get(key):
                worst = max(worst, float(row[key]))
    return worst


def net_latency(arm, key):
    """The arm's update_latency_net_s[key]; nan for a summary written before it existed."""
    if "update_latency_net_s" in arm:
        return arm["update_latency_net_s"][key]
    return float("nan")


def append_rows(path, rows):
    """Appends rows to the CSV at path under its own header (CSV_FIELDS when path is new); a column
    the existing header lacks is left out, so rows never land under the wrong header."""
    fields = CSV_FIELDS
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path, newline="") as f:
            fields = next(csv.reader(f))
        missing = [k for k in CSV_FIELDS if k not in fields]
        if missing:
            print(f"compare_modes.py: {path} predates columns {' '.join(missing)}; "
                  "not written there", file=sys.stderr)
        new = False
    else:
        new = True
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        for r in rows:
            writer.writerow({k: r.get(k, "") for k in fields})


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario")
    parser.add_argument("--set", action="append", default=[], dest="overrides",
                        metavar="PATH=VALUE")
    parser.add_argument("--out", help="folder for both runs (default results/runs/compare-<name>)")
    parser.add_argument("--label", default="", help="names this comparison in --csv rows")
    parser.add_argument("--csv", help="append one row per arm to this CSV file")
    engine.add_binary_args(parser, "hilo-sim", "hilo-emu")
    parser.add_argument("--emu-arg", action="append", default=[], help="extra hilo-emu argument")
    parser.add_argument("--emu-runs", type=int, default=1, metavar="N",
                        help="emulation runs; their median is the reference (default 1)")
    parser.add_argument("--reuse", action="store_true",
                        help="keep a mode's earlier results when its summary.json exists")
    args = parser.parse_args()
    if not 1 <= args.emu_runs <= 20:
        print(f"compare_modes.py: --emu-runs {args.emu_runs}: needs 1..20", file=sys.stderr)
        return 2

    if not os.path.isfile(args.scenario):
        print(f"compare_modes.py: no scenario file {args.scenario}", file=sys.stderr)
        return 2
    try:
        engine.check_binary(args.hilo_sim, "hilo-sim")
        engine.check_binary(args.hilo_emu, "hilo-emu")
    except engine.BadInput as e:
        print(f"compare_modes.py: {e}", file=sys.stderr)
        return 2
    name = os.path.splitext(os.path.basename(args.scenario))[0]
    out = args.out or os.path.join("results", "runs", "compare-" + name)
    sets = [a for o in args.overrides for a in ("--set", o)]
    commands = {
        "sim": [args.hilo_sim, "run", args.scenario, *sets, "--quiet",
                "--out", os.path.join(out, "sim")],
    }
    emu_modes = [emu_dir_name(k) for k in range(1, args.emu_runs + 1)]
    for mode in emu_modes:
        commands[mode] = [args.hilo_emu, "run", args.scenario, *sets, "--network", "ns3",
                          "--quiet", *args.emu_arg, "--out", os.path.join(out, mode)]
    summaries = {}
    for mode, cmd in commands.items():
        os.makedirs(os.path.join(out, mode), exist_ok=True)
        summary = os.path.join(out, mode, "summary.json")
        log = os.path.join(out, mode + ".log")
        if not (args.reuse and os.path.exists(summary)):
            if os.path.exists(summary):
                os.remove(summary)
            print(f"[{mode}] {' '.join(cmd)}", file=sys.stderr)
            code = run(cmd, log)
            if code != 0:
                print(f"compare_modes.py: {mode} run failed with exit code {code}; see {log}",
                      file=sys.stderr)
                return 2 if code == 2 else 1
        with open(summary) as f:
            summaries[mode] = json.load(f)

    rows = []
    for sim_arm in summaries["sim"]["arms"]:
        arm = sim_arm["name"]
        runs = []  # per emulation run: (its dir, its arm summary)
        for mode in emu_modes:
            found = [a for a in summaries[mode]["arms"] if a["name"] == arm]
            if not found:
                print(f"compare_modes.py: {os.path.join(out, mode, 'summary.json')} has no arm "
                      f"'{arm}'", file=sys.stderr)
                return 1
            runs.append((os.path.join(out, mode), found[0]))
        p50s = [a["update_latency_s"]["p50"] for _, a in runs]
        lags = [a.get("emulation_lag_s", {}) for _, a in runs]
        traffic = [a.get("emulation_link_traffic_bps", {}) for _, a in runs]
        warnings = []
        for _, a in runs:
            warnings += [w for w in a.get("emulation_warnings", []) if w not in warnings]
        row = {
            "label": args.label,
            "overrides": " ".join(args.overrides),
            "arm": arm,
            "sim_latency_p50_s": sim_arm["update_latency_s"]["p50"],
            "emu_latency_p50_s": median(p50s),
            "sim_latency_p99_s": sim_arm["update_latency_s"]["p99"],
            "emu_latency_p99_s": median(a["update_latency_s"]["p99"] for _, a in runs),
            "sim_step_s": sim_arm["step_time_s_mean"],
            "emu_step_s": median(a["step_time_s_mean"] for _, a in runs),
            "sim_transfer_p50_s": percentile(transfers(os.path.join(out, "sim"), arm), 50),
            "emu_transfer_p50_s": median(percentile(transfers(d, arm), 50) for d, _ in runs),
            "sim_wire_bytes": sim_arm["wire_bytes_per_update_mean"],
            "emu_wire_bytes": median(a["wire_bytes_per_update_mean"] for _, a in runs),
            "sim_quality": sim_arm["final_quality"],
            "emu_quality": median(a["final_quality"] for _, a in runs),
            "quality_same": int(all(a["final_quality"] == sim_arm["final_quality"]
                                    for _, a in runs)),
            "emu_lag_mean_s": max(lag.get("mean", float("nan")) for lag in lags),
            "emu_lag_p99_s": max(lag.get("p99", float("nan")) for lag in lags),
            "emu_lag_max_s": max(lag.get("max", float("nan")) for lag in lags),
            "emu_link_capacity_bps": traffic[0].get("capacity", float("nan")),
            "emu_carried_peak_bps": max(t.get("carried_peak", float("nan")) for t in traffic),
            "emu_overrun_max_s": max(overrun_max(d, arm) for d, _ in runs),
            "emu_warnings": " | ".join(warnings),
            "emu_runs": len(runs),
            "emu_latency_p50_min_s": min(p50s),
            "emu_latency_p50_max_s": max(p50s),
            "emu_latency_p50_runs_s": " ".join(f"{v:.6g}" for v in p50s),
            "emu_latency_net_p50_s": median(net_latency(a, "p50") for _, a in runs),
            "emu_latency_net_p99_s": median(net_latency(a, "p99") for _, a in runs),
        }
        row["latency_p50_ratio"] = ratio(row["sim_latency_p50_s"], row["emu_latency_p50_s"])
        row["latency_p99_ratio"] = ratio(row["sim_latency_p99_s"], row["emu_latency_p99_s"])
        row["latency_net_p50_ratio"] = ratio(row["sim_latency_p50_s"],
                                             row["emu_latency_net_p50_s"])
        row["latency_net_p99_ratio"] = ratio(row["sim_latency_p99_s"],
                                             row["emu_latency_net_p99_s"])
        row["step_ratio"] = ratio(row["sim_step_s"], row["emu_step_s"])
        row["transfer_p50_ratio"] = ratio(row["sim_transfer_p50_s"], row["emu_transfer_p50_s"])
        rows.append(row)

    print(f"{name} {' '.join(args.overrides)}  (sim/emu ratios; results in {out})")
    print(f"{'arm':14} {'lat p50 sim':>11} {'emu':>7} {'ratio':>6}  {'lat p99 sim':>11} "
          f"{'emu':>7} {'ratio':>6}  {'step sim':>8} {'emu':>7} {'ratio':>6}  "
          f"{'xfer p50 sim':>12} {'emu':>7} {'ratio':>6}  {'wire B sim':>10} {'emu':>10}  "
          f"{'quality sim':>11} {'emu':>9}  {'lag p99':>8} {'carried':>9} {'overrun':>7}")
    for r in rows:
        same = "same" if r["quality_same"] else f"{r['emu_quality']:.6g}"
        print(f"{r['arm'][:14]:14} {r['sim_latency_p50_s']:11.3f} {r['emu_latency_p50_s']:7.3f} "
              f"{r['latency_p50_ratio']:6.3f}  {r['sim_latency_p99_s']:11.3f} "
              f"{r['emu_latency_p99_s']:7.3f} {r['latency_p99_ratio']:6.3f}  "
              f"{r['sim_step_s']:8.3f} {r['emu_step_s']:7.3f} {r['step_ratio']:6.3f}  "
              f"{r['sim_transfer_p50_s']:12.3f} {r['emu_transfer_p50_s']:7.3f} "
              f"{r['transfer_p50_ratio']:6.3f}  {r['sim_wire_bytes']:10.0f} "
              f"{r['emu_wire_bytes']:10.0f}  {r['sim_quality']:11.6g} {same:>9}  "
              f"{r['emu_lag_p99_s'] * 1e3:6.2f}ms {r['emu_carried_peak_bps'] / 1e6:5.0f}Mbps "
              f"{r['emu_overrun_max_s']:6.3f}s")
        print(f"  net of compute overrun: emu p50 {r['emu_latency_net_p50_s']:.3f} s "
              f"(sim/emu {r['latency_net_p50_ratio']:.3f}), p99 "
              f"{r['emu_latency_net_p99_s']:.3f} s (sim/emu {r['latency_net_p99_ratio']:.3f})")
        if r["emu_runs"] > 1:
            print(f"  emulation: median of {r['emu_runs']} runs; their p50s "
                  f"{r['emu_latency_p50_runs_s']} s")
        if r["emu_warnings"]:
            print(f"  warnings: {r['emu_warnings']}")
    if args.csv:
        append_rows(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
