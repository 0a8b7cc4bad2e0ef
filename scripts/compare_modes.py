#!/usr/bin/python3
"""Runs one scenario in the simulator and through emulated links, and compares them per arm.

Usage:
  scripts/compare_modes.py SCENARIO [--set PATH=VALUE ...] [--out DIR] [--label TEXT]
                           [--csv FILE] [--hilo-sim PATH] [--hilo-emu PATH]
                           [--emu-arg ARG ...] [--emu-runs N] [--seeds S,S,...] [--flow]
                           [--replace-excursions K] [--reuse]

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
when every run's is; the CSV keeps every run's p50 (emu_latency_p50_runs_s) and their range,
and, for runs made with `--emu-arg=--trace-tcp`, how often each run's kernel left slow start by
HyStart's delay test (emu_hystart_delay_exits_runs, "-" for an untraced run).
--seeds S,S,... runs every side once per scenario seed (`--set seed=S`; the seed draws the
links' random losses, in the simulator and in hilo-netem alike), the emulation --emu-runs times
per seed (DIR/sim-seedS, DIR/flow-seedS, DIR/emu-seedS, DIR/emu-seedS-2, ...): one loss draw is
not a lossy row's figure. Each seed's figures are formed as above (the emulation's the median of
its runs), and the row's figures are the MEAN over seeds of each seed's figure (p50, p99, step,
transfer, quality), the ratios those means' ratio; health is the worst run's over all seeds,
quality "same" only when every run equals its own seed's simulator run. The CSV keeps each seed's
p50 and p99 per side (*_seeds_s, in --seeds order) and every emulation run's p50, whose range
(emu_latency_p50_min_s / _max_s) is then the range over seeds.
--flow also runs the simulator's flow model (`--set network.model=flow`, DIR/flow) and the
simulator side (DIR/sim) as `--set network.model=packet`: the CSV's sim_* columns are the packet
model's, flow_* the flow model's, both against the same emulation figures.
--replace-excursions K (with --emu-arg=--trace-tcp) replaces an emulation run whose learner's
kernel left slow start by HyStart's delay test more often than the packet model's run of the same
seed did -- an RTT excursion the modelled link does not have, from the emulating host (the packet
model's run is then traced too, hilo-sim --trace-tcp): up to K more runs are made (per seed)
until --emu-runs runs without such an exit are in hand, and the figures are the median over the
first --emu-runs of those (filled with the earliest replaced runs when K runs were not enough, so
a kernel that always exits where the model does not is never hidden). The CSV keeps every run made
(emu_latency_p50_runs_s, emu_hystart_delay_exits_runs), which ones the figures used
(emu_runs_used, 1-based; per seed under --seeds) and the packet model's exits
(sim_hystart_delay_exits).
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
    "latency_net_p99_ratio", "seeds", "flow_latency_p50_s", "flow_latency_p50_ratio",
    "flow_latency_p99_s", "flow_latency_p99_ratio", "flow_step_s", "flow_step_ratio",
    "sim_latency_p50_seeds_s", "sim_latency_p99_seeds_s", "flow_latency_p50_seeds_s",
    "flow_latency_p99_seeds_s", "emu_latency_p50_seeds_s", "emu_latency_p99_seeds_s",
    "emu_hystart_delay_exits_runs", "emu_runs_used", "sim_hystart_delay_exits",
]


def median(values):
    """The middle value (the mean of the two middle ones for an even count); nan when empty."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return float("nan")
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def mean(values):
    """The arithmetic mean; nan when empty."""
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def mode_dir(side, seed=None, k=1):
    """One run's folder: side (sim, flow, emu), then -seedS under --seeds, then -K for the
    emulation's K-th run (1-based): sim, emu, emu-2, flow-seed3, emu-seed3-2, ..."""
    name = side if seed is None else f"{side}-seed{seed}"
    return name if k == 1 else f"{name}-{k}"


def emu_dir_name(k):
    """The k-th emulation run's folder (1-based): emu, emu-2, emu-3, ..."""
    return mode_dir("emu", None, k)


def parse_seeds(text):
    """[None] (the scenario's own seed) for no text, else the distinct non-negative integers of
    "S,S,..." in order; ValueError on anything else."""
    if text is None:
        return [None]
    seeds = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit():
            raise ValueError(f"--seeds {text}: needs non-negative integers, comma-separated")
        if int(item) not in seeds:
            seeds.append(int(item))
    if not seeds:
        raise ValueError(f"--seeds {text}: no seed given")
    return seeds


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


def hystart_delay_exits(run_dir, arm):
    """How often the learner's kernel left slow start by HyStart's delay test in an emulation run
    (TCPHystartDelayDetect over the run, from the counters hilo-emu --trace-tcp writes beside the
    learner's trace); None when the run was not traced. An RTT excursion the modelled link does
    not have (the emulator, the host) can end slow start early and slow a whole run
    (results/validation/emulation-notes.md), so the table shows each run's count."""
    path = os.path.join(run_dir, "nodes", arm, "learner.tcp-trace.csv.hystart.csv")
    if not os.path.exists(path):
        return None
    for row in read_csv(path):
        if row.get("counter") == "TCPHystartDelayDetect":
            return int(row["at_end"]) - int(row["at_start"])
    return None


def model_delay_exits(run_dir, arm):
    """How often the learner's ends left slow start by HyStart's delay test in a simulator run
    made with --trace-tcp (the last hystart_delay_exits of each learner -> peer connection in
    tcp-trace.csv, summed over peers, as the kernel's namespace-wide counter sums them); None
    when the run was not traced."""
    path = os.path.join(run_dir, "tcp-trace.csv")
    if not os.path.exists(path):
        return None
    last = {}
    for row in read_csv(path):
        if row.get("arm") == arm and row.get("node") == "learner" and row.get("hystart_delay_exits"):
            last[row["peer"]] = int(row["hystart_delay_exits"])
    return sum(last.values())


def excursion_run(run_dir, sim_dir, arms):
    """True when, for some arm, the emulation run's kernel took more HyStart delay exits than the
    simulator's (packet model's) run: an exit on an RTT excursion the modelled link lacks. An
    untraced side counts as no excursion (nothing to compare)."""
    for arm in arms:
        kernel, model = hystart_delay_exits(run_dir, arm), model_delay_exits(sim_dir, arm)
        if kernel is not None and model is not None and kernel > model:
            return True
    return False


def runs_used(excursions, wanted):
    """The 1-based runs whose median is the figure: the first `wanted` runs without an excursion,
    filled with the earliest excursion runs when there are too few, in run order."""
    clean = [k for k, e in enumerate(excursions, 1) if not e][:wanted]
    fill = [k for k, e in enumerate(excursions, 1) if e][:wanted - len(clean)]
    return sorted(clean + fill)


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


def seed_figures(out, arm, seed, emu_runs, flow, used=None, made=None):
    """One seed's figures for one arm from the summaries under out: the simulator's run (and the
    flow model's with flow) and the median of the emulation's runs `used` (1-based; default
    1..emu_runs) of the `made` runs (default emu_runs). Raises LookupError naming the
    summary.json that lacks the arm."""
    def find(mode):
        path = os.path.join(out, mode, "summary.json")
        with open(path) as f:
            found = [a for a in json.load(f)["arms"] if a["name"] == arm]
        if not found:
            raise LookupError(f"{path} has no arm '{arm}'")
        return found[0]

    sim_dir = os.path.join(out, mode_dir("sim", seed))
    sim = find(mode_dir("sim", seed))
    used = used or list(range(1, emu_runs + 1))
    made = made or emu_runs
    every = [(os.path.join(out, mode_dir("emu", seed, k)), find(mode_dir("emu", seed, k)))
             for k in range(1, made + 1)]
    runs = [every[k - 1] for k in used]
    fig = {
        "sim_latency_p50_s": sim["update_latency_s"]["p50"],
        "sim_latency_p99_s": sim["update_latency_s"]["p99"],
        "sim_step_s": sim["step_time_s_mean"],
        "sim_transfer_p50_s": percentile(transfers(sim_dir, arm), 50),
        "sim_wire_bytes": sim["wire_bytes_per_update_mean"],
        "sim_quality": sim["final_quality"],
        "emu_latency_p50_s": median(a["update_latency_s"]["p50"] for _, a in runs),
        "emu_latency_p99_s": median(a["update_latency_s"]["p99"] for _, a in runs),
        "emu_step_s": median(a["step_time_s_mean"] for _, a in runs),
        "emu_transfer_p50_s": median(percentile(transfers(d, arm), 50) for d, _ in runs),
        "emu_wire_bytes": median(a["wire_bytes_per_update_mean"] for _, a in runs),
        "emu_quality": median(a["final_quality"] for _, a in runs),
        "emu_latency_net_p50_s": median(net_latency(a, "p50") for _, a in runs),
        "emu_latency_net_p99_s": median(net_latency(a, "p99") for _, a in runs),
        # Not averaged: the row takes the worst, or all, of these over seeds.
        "quality_same": all(a["final_quality"] == sim["final_quality"] for _, a in runs),
        # Every run made, in order (the figures above are the used runs').
        "emu_run_p50s": [a["update_latency_s"]["p50"] for _, a in every],
        "emu_runs_used": used,
        "lags": [a.get("emulation_lag_s", {}) for _, a in runs],
        "traffic": [a.get("emulation_link_traffic_bps", {}) for _, a in runs],
        "overrun": max(overrun_max(d, arm) for d, _ in runs),
        "warnings": [w for _, a in runs for w in a.get("emulation_warnings", [])],
        "hystart_delay_exits": [hystart_delay_exits(d, arm) for d, _ in every],
        "sim_hystart_delay_exits": model_delay_exits(sim_dir, arm),
    }
    if flow:
        fl = find(mode_dir("flow", seed))
        fig["flow_latency_p50_s"] = fl["update_latency_s"]["p50"]
        fig["flow_latency_p99_s"] = fl["update_latency_s"]["p99"]
        fig["flow_step_s"] = fl["step_time_s_mean"]
    return fig


MEAN_KEYS = (
    "sim_latency_p50_s", "sim_latency_p99_s", "sim_step_s", "sim_transfer_p50_s", "sim_wire_bytes",
    "sim_quality", "emu_latency_p50_s", "emu_latency_p99_s", "emu_step_s", "emu_transfer_p50_s",
    "emu_wire_bytes", "emu_quality", "emu_latency_net_p50_s", "emu_latency_net_p99_s",
    "flow_latency_p50_s", "flow_latency_p99_s", "flow_step_s",
)
SEED_LIST_KEYS = (
    "sim_latency_p50", "sim_latency_p99", "flow_latency_p50", "flow_latency_p99",
    "emu_latency_p50", "emu_latency_p99",
)


def aggregate(per_seed, seeds):
    """One CSV row's figures from {seed: seed_figures(...)}: each figure the MEAN over seeds of the
    seed's figure (one seed: that seed's), ratios of those means (sim / emu, flow / emu), health
    the worst run's over all seeds, quality "same" only when every run is. With seeds other than
    [None] the row also names them and keeps each seed's p50 and p99 per side."""
    figs = [per_seed[s] for s in seeds]
    row = {k: mean(f[k] for f in figs) for k in MEAN_KEYS if k in figs[0]}
    p50s = [v for f in figs for v in f["emu_run_p50s"]]
    lags = [lag for f in figs for lag in f["lags"]]
    traffic = [t for f in figs for t in f["traffic"]]
    warnings = []
    for f in figs:
        warnings += [w for w in f["warnings"] if w not in warnings]
    row.update({
        "quality_same": int(all(f["quality_same"] for f in figs)),
        "emu_lag_mean_s": max(lag.get("mean", float("nan")) for lag in lags),
        "emu_lag_p99_s": max(lag.get("p99", float("nan")) for lag in lags),
        "emu_lag_max_s": max(lag.get("max", float("nan")) for lag in lags),
        "emu_link_capacity_bps": traffic[0].get("capacity", float("nan")),
        "emu_carried_peak_bps": max(t.get("carried_peak", float("nan")) for t in traffic),
        "emu_overrun_max_s": max(f["overrun"] for f in figs),
        "emu_warnings": " | ".join(warnings),
        "emu_runs": len(figs[0]["emu_runs_used"]),
        "emu_latency_p50_min_s": min(p50s),
        "emu_latency_p50_max_s": max(p50s),
        "emu_latency_p50_runs_s": " ".join(f"{v:.6g}" for v in p50s),
        # Every emulation run's count, in the order of emu_latency_p50_runs_s ("-": not traced).
        "emu_hystart_delay_exits_runs": " ".join(
            "-" if v is None else str(v) for f in figs for v in f["hystart_delay_exits"]),
        # Which runs the figures used, per seed ("/" between seeds); the packet model's exits.
        "emu_runs_used": " / ".join(" ".join(str(k) for k in f["emu_runs_used"]) for f in figs),
        "sim_hystart_delay_exits": " ".join(
            "-" if f["sim_hystart_delay_exits"] is None else str(f["sim_hystart_delay_exits"])
            for f in figs),
    })
    if seeds != [None]:
        row["seeds"] = " ".join(str(s) for s in seeds)
        for key in SEED_LIST_KEYS:
            if key + "_s" in figs[0]:
                row[key + "_seeds_s"] = " ".join(f"{f[key + '_s']:.6g}" for f in figs)
    row["latency_p50_ratio"] = ratio(row["sim_latency_p50_s"], row["emu_latency_p50_s"])
    row["latency_p99_ratio"] = ratio(row["sim_latency_p99_s"], row["emu_latency_p99_s"])
    row["latency_net_p50_ratio"] = ratio(row["sim_latency_p50_s"], row["emu_latency_net_p50_s"])
    row["latency_net_p99_ratio"] = ratio(row["sim_latency_p99_s"], row["emu_latency_net_p99_s"])
    row["step_ratio"] = ratio(row["sim_step_s"], row["emu_step_s"])
    row["transfer_p50_ratio"] = ratio(row["sim_transfer_p50_s"], row["emu_transfer_p50_s"])
    if "flow_latency_p50_s" in row:
        row["flow_latency_p50_ratio"] = ratio(row["flow_latency_p50_s"], row["emu_latency_p50_s"])
        row["flow_latency_p99_ratio"] = ratio(row["flow_latency_p99_s"], row["emu_latency_p99_s"])
        row["flow_step_ratio"] = ratio(row["flow_step_s"], row["emu_step_s"])
    return row


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
                        help="emulation runs (per seed); their median is the reference (default 1)")
    parser.add_argument("--seeds", metavar="S,S,...",
                        help="run every side once per scenario seed (the loss draw); the row's "
                        "figures are the mean over seeds (default: the scenario's own seed)")
    parser.add_argument("--flow", action="store_true",
                        help="also run the simulator's flow model (flow_* columns); the sim side "
                        "then runs network.model=packet")
    parser.add_argument("--replace-excursions", type=int, default=0, metavar="K",
                        help="up to K more emulation runs (per seed) in place of runs whose kernel "
                        "took a HyStart delay exit the packet model's run did not (needs "
                        "--emu-arg=--trace-tcp; default 0: none)")
    parser.add_argument("--reuse", action="store_true",
                        help="keep a mode's earlier results when its summary.json exists")
    args = parser.parse_args()
    if not 1 <= args.emu_runs <= 20:
        print(f"compare_modes.py: --emu-runs {args.emu_runs}: needs 1..20", file=sys.stderr)
        return 2
    if not 0 <= args.replace_excursions <= 20:
        print(f"compare_modes.py: --replace-excursions {args.replace_excursions}: needs 0..20",
              file=sys.stderr)
        return 2
    if args.replace_excursions and "--trace-tcp" not in args.emu_arg:
        print("compare_modes.py: --replace-excursions needs --emu-arg=--trace-tcp (the kernel's "
              "HyStart counters)", file=sys.stderr)
        return 2
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as e:
        print(f"compare_modes.py: {e}", file=sys.stderr)
        return 2
    if seeds != [None] and any(o.split("=", 1)[0] == "seed" for o in args.overrides):
        print("compare_modes.py: --seeds and --set seed=... both set the seed", file=sys.stderr)
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
    trace_sim = ["--trace-tcp"] if args.replace_excursions else []

    def emu_command(seed, k):
        seed_set = [] if seed is None else ["--set", f"seed={seed}"]
        return [args.hilo_emu, "run", args.scenario, *sets, *seed_set, "--network", "ns3",
                "--quiet", *args.emu_arg, "--out", os.path.join(out, mode_dir("emu", seed, k))]

    commands = {}
    for seed in seeds:
        seed_set = [] if seed is None else ["--set", f"seed={seed}"]
        models = [("sim", (["--set", "network.model=packet"] if args.flow else []) + trace_sim)]
        if args.flow:
            models.append(("flow", ["--set", "network.model=flow"]))
        for side, model_set in models:
            mode = mode_dir(side, seed)
            commands[mode] = [args.hilo_sim, "run", args.scenario, *sets, *seed_set, *model_set,
                              "--quiet", "--out", os.path.join(out, mode)]
        for k in range(1, args.emu_runs + 1):
            commands[mode_dir("emu", seed, k)] = emu_command(seed, k)
    summaries = {}

    def run_mode(mode, cmd):
        """Runs one mode unless --reuse finds it; its summary into summaries; the exit code."""
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
        return 0

    for mode, cmd in commands.items():
        code = run_mode(mode, cmd)
        if code:
            return code

    # --replace-excursions: more runs while fewer than --emu-runs are free of an excursion.
    arms = [a["name"] for a in summaries[mode_dir("sim", seeds[0])]["arms"]]
    made = {}
    for seed in seeds:
        sim_dir = os.path.join(out, mode_dir("sim", seed))
        excursions = [excursion_run(os.path.join(out, mode_dir("emu", seed, k)), sim_dir, arms)
                      for k in range(1, args.emu_runs + 1)]
        while (args.replace_excursions and excursions.count(False) < args.emu_runs and
               len(excursions) < args.emu_runs + args.replace_excursions):
            k = len(excursions) + 1
            print(f"compare_modes.py: {excursions.count(True)} of {len(excursions)} emulation runs"
                  f"{'' if seed is None else f' of seed {seed}'} took a HyStart delay exit the "
                  f"packet model's run did not; run {k} ({mode_dir('emu', seed, k)})",
                  file=sys.stderr)
            code = run_mode(mode_dir("emu", seed, k), emu_command(seed, k))
            if code:
                return code
            excursions.append(excursion_run(os.path.join(out, mode_dir("emu", seed, k)), sim_dir,
                                            arms))
        made[seed] = (runs_used(excursions, args.emu_runs), len(excursions))

    rows = []
    for sim_arm in summaries[mode_dir("sim", seeds[0])]["arms"]:
        arm = sim_arm["name"]
        try:
            per_seed = {s: seed_figures(out, arm, s, args.emu_runs, args.flow, *made[s])
                        for s in seeds}
        except LookupError as e:
            print(f"compare_modes.py: {e}", file=sys.stderr)
            return 1
        row = aggregate(per_seed, seeds)
        row.update({"label": args.label, "overrides": " ".join(args.overrides), "arm": arm})
        rows.append(row)

    print(f"{name} {' '.join(args.overrides)}  (sim/emu ratios; results in {out})")
    if seeds != [None]:
        print(f"means over seeds {' '.join(str(s) for s in seeds)} of each seed's figures")
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
        if "flow_latency_p50_s" in r:
            print(f"  flow model: lat p50 {r['flow_latency_p50_s']:.3f} s (flow/emu "
                  f"{r['flow_latency_p50_ratio']:.3f}), p99 {r['flow_latency_p99_s']:.3f} s "
                  f"(flow/emu {r['flow_latency_p99_ratio']:.3f}), step {r['flow_step_s']:.3f} s")
        print(f"  net of compute overrun: emu p50 {r['emu_latency_net_p50_s']:.3f} s "
              f"(sim/emu {r['latency_net_p50_ratio']:.3f}), p99 "
              f"{r['emu_latency_net_p99_s']:.3f} s (sim/emu {r['latency_net_p99_ratio']:.3f})")
        if r.get("seeds"):
            for key in SEED_LIST_KEYS:
                if r.get(key + "_seeds_s"):
                    print(f"  per seed, {key.replace('_latency_', ' ')}: {r[key + '_seeds_s']} s")
        if r["emu_runs"] > 1:
            per = " per seed" if r.get("seeds") else ""
            print(f"  emulation: median of {r['emu_runs']} runs{per}; "
                  f"their p50s {r['emu_latency_p50_runs_s']} s")
        if args.replace_excursions:
            print(f"  HyStart delay exits per run {r['emu_hystart_delay_exits_runs']} (packet "
                  f"model {r['sim_hystart_delay_exits']}); runs used {r['emu_runs_used']}")
        if r["emu_warnings"]:
            print(f"  warnings: {r['emu_warnings']}")
    if args.csv:
        append_rows(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
