#!/usr/bin/python3
"""scripts/compare_modes.py --emu-runs: the emulation's figures are the median run's; --seeds:
a lossy row's figures are the mean over loss seeds; --flow: the flow model's side (CTest:
scripts.compare_modes). Runs no simulation: two stand-in binaries write the files a run writes.

Usage: tests/scripts/test_compare_modes.py   (from the repository root)

Checks:
  1. with --emu-runs 3, three emulation runs are made (emu, emu-2, emu-3) and the CSV row's
     emulation p50, p99 and step are the medians of the three runs' (not the first run's, not
     the mean), its lag p99 the worst run's, and every run's p50 is kept, with each run's
     HyStart delay exits from its traced counters ("-" for a run without them);
  2. quality is "same" only when every run's final quality equals the simulator's;
  3. --reuse reruns nothing where every run's summary.json exists;
  4. --emu-runs 0 is refused with exit code 2 and a message naming the flag;
  5. with --seeds 1,2,3 --flow, every side runs once per seed with --set seed=S (sim and flow
     with network.model=packet and flow, the emulation with neither), and the row's p50 and p99
     per side are the MEAN over the seeds (not the median, not the first seed's: the figures are
     chosen so that the three differ), the ratios those means' ratios, each seed's p50 kept, the
     emulation's p50 range the range over seeds;
  6. --seeds with a --set seed=, and a --seeds that is not a list of integers, are refused (2);
  7. --replace-excursions 2 with --emu-runs 3: the packet model's run is traced (--trace-tcp);
     runs whose kernel took more HyStart delay exits than the packet model's run are replaced
     (runs 1 and 3 of exits 1 0 1 0 0 -> runs 4 and 5 made, runs 2 4 5 used, the p50 their
     median, not the first three's), every run made is kept; a kernel that exits in every run
     gets its two extra runs and then the first three are used (nothing hidden); exits the
     packet model takes too replace nothing; without --emu-arg=--trace-tcp it is refused (2).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

from checks import fake_binary, report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "compare_modes.py")
SCENARIO = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")

# A stand-in for hilo-sim / hilo-emu: writes summary.json, steps.csv and workers.csv into --out.
# Its figures come from a JSON file named by $FAKE_FIGURES, keyed by the --out folder's name;
# every invocation is appended to $FAKE_CALLS.
FAKE = r'''#!/usr/bin/python3
import json, os, sys
out = sys.argv[sys.argv.index("--out") + 1]
with open(os.environ["FAKE_CALLS"], "a") as f:
    f.write(os.path.basename(out) + "\n")
with open(os.environ["FAKE_CALLS"] + ".argv", "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
fig = json.load(open(os.environ["FAKE_FIGURES"]))[os.path.basename(out)]
os.makedirs(out, exist_ok=True)
arm = {"name": "hilo-spar", "update_latency_s": {"p50": fig["p50"], "p99": fig["p99"]},
       "step_time_s_mean": fig["step"], "wire_bytes_per_update_mean": 1000,
       "final_quality": fig["quality"],
       "emulation_lag_s": {"mean": fig["lag"] / 2, "p99": fig["lag"], "max": fig["lag"]},
       "emulation_link_traffic_bps": {"capacity": 1e8, "carried_peak": 5e7}}
json.dump({"arms": [arm]}, open(os.path.join(out, "summary.json"), "w"))
with open(os.path.join(out, "steps.csv"), "w") as f:
    f.write("arm,version,sim_time_s\nhilo-spar,1,1.0\n")
with open(os.path.join(out, "workers.csv"), "w") as f:
    f.write("arm,version,received_s\nhilo-spar,1,%r\n" % (1.0 + fig["p50"]))
if "--trace-tcp" in sys.argv and "model_delay_exits" in fig:  # hilo-sim --trace-tcp's trace
    with open(os.path.join(out, "tcp-trace.csv"), "w") as f:
        f.write("arm,time_s,node,peer,hystart_delay_exits\n"
                "hilo-spar,0.1,learner,worker-0,0\nhilo-spar,0.2,worker-0,learner,7\n"
                "hilo-spar,0.3,learner,worker-0,%d\n" % fig["model_delay_exits"])
if "delay_exits" in fig:  # as hilo-emu --trace-tcp leaves the learner's HyStart counters
    os.makedirs(os.path.join(out, "nodes", "hilo-spar"), exist_ok=True)
    with open(os.path.join(out, "nodes", "hilo-spar", "learner.tcp-trace.csv.hystart.csv"), "w") as f:
        f.write("counter,at_start,at_end\nTCPHystartDelayDetect,2,%d\nTCPHystartTrainDetect,0,5\n"
                % (2 + fig["delay_exits"]))
'''

FIGURES = {
    "sim": {"p50": 0.25, "p99": 0.50, "step": 1.0, "quality": 0.5, "lag": 0.0},
    "emu": {"p50": 0.30, "p99": 0.70, "step": 1.3, "quality": 0.5, "lag": 0.001,
            "delay_exits": 1},
    "emu-2": {"p50": 0.24, "p99": 0.55, "step": 1.1, "quality": 0.5, "lag": 0.004,
              "delay_exits": 0},
    "emu-3": {"p50": 0.26, "p99": 0.60, "step": 1.2, "quality": 0.5, "lag": 0.002},
}

# Per seed: sim, flow and emulation p50s (p99 twice each) whose mean, median and first differ.
SEED_P50 = {1: (1.0, 1.1, 1.2), 2: (1.3, 1.2, 1.5), 3: (2.3, 2.6, 2.4)}


def seed_figures():
    figs = {}
    for seed, (sim, flow, emu) in SEED_P50.items():
        for side, p50 in (("sim", sim), ("flow", flow), ("emu", emu)):
            figs[f"{side}-seed{seed}"] = {"p50": p50, "p99": 2 * p50, "step": p50 + 1,
                                          "quality": 0.5, "lag": 0.001 * seed}
    return figs


def check_seeds(compare, figures, calls, tmp, failures):
    """Checks 5 and 6."""
    with open(figures, "w") as f:
        json.dump(seed_figures(), f)
    for path in (calls, calls + ".argv"):
        if os.path.exists(path):
            os.remove(path)
    out_csv = os.path.join(tmp, "seeds.csv")
    done = compare(out_csv, "--seeds", "1,2,3", "--flow", "--set", "network.worker_link.loss=0.01",
                   out=os.path.join(tmp, "seed-runs"))
    if done.returncode != 0:
        failures.append(f"--seeds 1,2,3 --flow failed: {done.stderr}")
        return
    argv = {}
    with open(calls + ".argv") as f:
        for line in f:
            args = json.loads(line)
            argv[os.path.basename(args[args.index("--out") + 1])] = args
    want_runs = sorted(f"{side}-seed{s}" for s in SEED_P50 for side in ("sim", "flow", "emu"))
    if sorted(argv) != want_runs:
        failures.append(f"runs made: {sorted(argv)}, want {want_runs}")
        return
    for name, args in argv.items():
        side, seed = name.split("-seed")
        sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
        model = {"sim": ["network.model=packet"], "flow": ["network.model=flow"], "emu": []}[side]
        if ([x for x in sets if x.startswith("seed=")] != [f"seed={seed}"] or
                [x for x in sets if x.startswith("network.model=")] != model or
                "network.worker_link.loss=0.01" not in sets):
            failures.append(f"{name} ran with --set {sets}")
    with open(out_csv, newline="") as f:
        r = list(csv.DictReader(f))[-1]
    mean = {side: sum(v[i] for v in SEED_P50.values()) / len(SEED_P50)
            for i, side in enumerate(("sim", "flow", "emu"))}
    want = {"sim_latency_p50_s": mean["sim"], "sim_latency_p99_s": 2 * mean["sim"],
            "flow_latency_p50_s": mean["flow"], "flow_latency_p99_s": 2 * mean["flow"],
            "emu_latency_p50_s": mean["emu"], "emu_latency_p99_s": 2 * mean["emu"],
            "latency_p50_ratio": mean["sim"] / mean["emu"],
            "latency_p99_ratio": mean["sim"] / mean["emu"],
            "flow_latency_p50_ratio": mean["flow"] / mean["emu"],
            "flow_latency_p99_ratio": mean["flow"] / mean["emu"],
            "emu_latency_p50_min_s": 1.2, "emu_latency_p50_max_s": 2.4, "emu_lag_p99_s": 0.003}
    for key, value in want.items():
        if not abs(float(r[key] or "nan") - value) <= 1e-9:
            failures.append(f"--seeds: {key} = {r[key]!r}, want {value} (mean over seeds)")
    if r["seeds"] != "1 2 3" or r["emu_latency_p50_seeds_s"].split() != ["1.2", "1.5", "2.4"] \
            or r["flow_latency_p50_seeds_s"].split() != ["1.1", "1.2", "2.6"]:
        failures.append(f"--seeds: seeds {r['seeds']!r}, per-seed p50s emu "
                        f"{r['emu_latency_p50_seeds_s']!r}, flow {r['flow_latency_p50_seeds_s']!r}")

    done = compare(out_csv, "--seeds", "1,2", "--set", "seed=4", out=os.path.join(tmp, "x"))
    if done.returncode != 2 or "--seeds" not in done.stderr:
        failures.append(f"--seeds with --set seed= not refused (exit {done.returncode})")
    done = compare(out_csv, "--seeds", "1,x", out=os.path.join(tmp, "x"))
    if done.returncode != 2 or "--seeds" not in done.stderr:
        failures.append(f"--seeds 1,x not refused (exit {done.returncode})")


def check_excursions(compare, figures, calls, tmp, failures):
    """Check 7."""
    def figs(model_exits, runs):
        out = {"sim": {"p50": 0.22, "p99": 0.3, "step": 1.0, "quality": 0.5, "lag": 0.0,
                       "model_delay_exits": model_exits}}
        for k, (p50, exits) in enumerate(runs, 1):
            out["emu" if k == 1 else f"emu-{k}"] = {
                "p50": p50, "p99": p50 + 0.1, "step": 1.0, "quality": 0.5, "lag": 0.001,
                "delay_exits": exits}
        return out

    runs = [(0.46, 1), (0.23, 0), (0.45, 1), (0.22, 0), (0.24, 0), (0.50, 0)]
    cases = [  # name, packet model's exits, runs, runs made, runs used, p50
        ("two excursions", 0, runs, 5, "2 4 5", 0.23),
        ("every run exits", 0, [(p, 1) for p, _ in runs], 5, "1 2 3", 0.45),
        ("the model exits too", 1, runs, 3, "1 2 3", 0.45),
    ]
    for name, model_exits, emu, n_made, used, p50 in cases:
        with open(figures, "w") as f:
            json.dump(figs(model_exits, emu), f)
        if os.path.exists(calls + ".argv"):
            os.remove(calls + ".argv")
        out_csv = os.path.join(tmp, "excursions.csv")
        done = compare(out_csv, "--emu-runs", "3", "--replace-excursions", "2",
                       "--emu-arg=--trace-tcp", out=os.path.join(tmp, "exc-" + name[:3]))
        if done.returncode != 0:
            failures.append(f"--replace-excursions ({name}) failed: {done.stderr}")
            continue
        with open(calls + ".argv") as f:
            argv = [json.loads(line) for line in f]
        made = [a[a.index("--out") + 1].rsplit("/", 1)[1] for a in argv]
        sim_argv = [a for a, m in zip(argv, made) if m == "sim"]
        if not sim_argv or "--trace-tcp" not in sim_argv[0]:
            failures.append(f"--replace-excursions ({name}): packet model's run not traced")
        if sum(m.startswith("emu") for m in made) != n_made:
            failures.append(f"--replace-excursions ({name}): runs made {made}, want {n_made} "
                            "emulation runs")
        with open(out_csv, newline="") as f:
            r = list(csv.DictReader(f))[-1]
        want_exits = " ".join(str(e) for _, e in emu[:n_made])
        if (r["emu_runs_used"] != used or abs(float(r["emu_latency_p50_s"]) - p50) > 1e-9 or
                r["emu_hystart_delay_exits_runs"] != want_exits or r["emu_runs"] != "3" or
                len(r["emu_latency_p50_runs_s"].split()) != n_made or
                r["sim_hystart_delay_exits"] != str(model_exits)):
            failures.append(f"--replace-excursions ({name}): used {r['emu_runs_used']!r} (want "
                            f"{used!r}), p50 {r['emu_latency_p50_s']} (want {p50}), exits "
                            f"{r['emu_hystart_delay_exits_runs']!r} (want {want_exits!r}), "
                            f"runs {r['emu_runs']}, p50s {r['emu_latency_p50_runs_s']!r}, model "
                            f"{r['sim_hystart_delay_exits']!r}")
    done = compare(os.path.join(tmp, "x.csv"), "--emu-runs", "3", "--replace-excursions", "2",
                   out=os.path.join(tmp, "x"))
    if done.returncode != 2 or "--trace-tcp" not in done.stderr:
        failures.append(f"--replace-excursions without --trace-tcp not refused "
                        f"(exit {done.returncode})")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = fake_binary(tmp, FAKE)
        figures = os.path.join(tmp, "figures.json")
        calls = os.path.join(tmp, "calls.txt")
        env = dict(os.environ, FAKE_FIGURES=figures, FAKE_CALLS=calls)

        def compare(csv_path, *extra, out=os.path.join(tmp, "runs")):
            return subprocess.run(
                ["/usr/bin/python3", SCRIPT, SCENARIO, "--hilo-sim", fake, "--hilo-emu", fake,
                 "--out", out, "--csv", csv_path, *extra],
                capture_output=True, text=True, env=env)

        def row(csv_path):
            with open(csv_path, newline="") as f:
                return list(csv.DictReader(f))[-1]

        with open(figures, "w") as f:
            json.dump(FIGURES, f)
        out_csv = os.path.join(tmp, "rows.csv")
        done = compare(out_csv, "--emu-runs", "3")
        made = open(calls).read().split() if os.path.exists(calls) else []
        if done.returncode != 0:
            failures.append(f"--emu-runs 3 failed: {done.stderr}")
        else:
            r = row(out_csv)
            want = {"emu_latency_p50_s": 0.26, "emu_latency_p99_s": 0.60, "emu_step_s": 1.2,
                    "emu_lag_p99_s": 0.004, "emu_runs": 3, "emu_latency_p50_min_s": 0.24,
                    "emu_latency_p50_max_s": 0.30, "emu_transfer_p50_s": 0.26}
            for key, value in want.items():
                if abs(float(r[key]) - value) > 1e-9:
                    failures.append(f"{key} = {r[key]}, want {value}")
            if r["emu_latency_p50_runs_s"].split() != ["0.3", "0.24", "0.26"]:
                failures.append(f"runs' p50s not kept in order: {r['emu_latency_p50_runs_s']}")
            # Each run's HyStart delay exits over the run, "-" for the untraced third.
            if r["emu_hystart_delay_exits_runs"].split() != ["1", "0", "-"]:
                failures.append("HyStart delay exits per run: "
                                f"{r['emu_hystart_delay_exits_runs']!r}, want '1 0 -'")
            if abs(float(r["latency_p50_ratio"]) - 0.25 / 0.26) > 1e-9:
                failures.append(f"p50 ratio {r['latency_p50_ratio']} is not sim / median run")
            if r["quality_same"] != "1":
                failures.append("three runs with the simulator's quality not called the same")
            if sorted(made) != ["emu", "emu-2", "emu-3", "sim"]:
                failures.append(f"runs made: {made}, want sim, emu, emu-2, emu-3")

        os.remove(calls)
        done = compare(out_csv, "--emu-runs", "3", "--reuse")
        if done.returncode != 0 or os.path.exists(calls):
            failures.append(f"--reuse reran something: exit {done.returncode}, "
                            f"{open(calls).read().split() if os.path.exists(calls) else []}")

        differing = dict(FIGURES)
        differing["emu-3"] = dict(FIGURES["emu-3"], quality=0.51)
        with open(figures, "w") as f:
            json.dump(differing, f)
        done = compare(out_csv, "--emu-runs", "3")
        if done.returncode != 0 or row(out_csv)["quality_same"] != "0":
            failures.append("a run whose quality differs did not make the row's quality differ")

        done = compare(out_csv, "--emu-runs", "0")
        if done.returncode != 2 or "--emu-runs" not in done.stderr:
            failures.append(f"--emu-runs 0 not refused (exit {done.returncode}): {done.stderr}")

        check_seeds(compare, figures, calls, tmp, failures)
        check_excursions(compare, figures, calls, tmp, failures)
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())
