#!/usr/bin/env python3
"""Runs one scenario once without faults and once per fault kind, and tabulates what each fault
cost: resyncs, recovery time (p50 / max), extra update latency against the fault-free run, and the
workers that ended at the learner's final hash.

    /usr/bin/python3 scripts/fault_table.py [--hilo-sim build/sim/hilo-sim] [--out results/faults]

Writes OUT/faults.csv (one row per fault kind and arm; its command in faults.csv.meta.json) and
OUT/faults.md (the same as a Markdown table, with the command); each run's own outputs go to
RUNS/<kind>/ (--runs, default
/tmp/hilo-fault-table). The base scenario is scenarios/teaching/05-faults.textproto with its own
faults removed; every fault starts at 1 s and lasts 0.5 s.
"""

import argparse
import csv
import json
import os
import re
import shlex
import subprocess
import sys
import time

# (name, fault entry); every fault starts at 1 s of simulated time, mid-run in both arms of the
# base scenario (fault-free, its HiLo arm ends at 1.6 s and its full-sync arm at 3.4 s).
FAULTS = [
    ("worker_crash+restart",
     'kind: "worker_crash" at: "1s" target: "worker:1" restart_after: "500ms"'),
    ("worker_crash", 'kind: "worker_crash" at: "1s" target: "worker:1"'),
    ("worker_join", 'kind: "worker_join" at: "1s" target: "worker:2"'),
    ("link_down", 'kind: "link_down" at: "1s" target: "worker:2" duration: "500ms"'),
    ("loss_burst", 'kind: "loss_burst" at: "1s" target: "worker:2" duration: "500ms" rate: 0.1'),
    ("corrupt", 'kind: "corrupt" at: "1s" target: "worker:2" duration: "500ms" rate: 0.2'),
    ("corrupt after_tcp",
     'kind: "corrupt" at: "1s" target: "worker:2" duration: "500ms" rate: 0.2 after_tcp: true'),
    ("replay_divergence", 'kind: "replay_divergence" at: "1s" target: "worker:0"'),
    ("learner_restart", 'kind: "learner_restart" at: "1s" target: "learner" restart_after: "500ms"'),
]


def base_scenario(path):
    """The scenario text without its faults entries."""
    with open(path) as f:
        text = f.read()
    return re.sub(r"^faults \{.*\}\s*$", "", text, flags=re.M)


# Faults hilo-emu --network direct cannot inject (it exits 2 for them): skipped with --runner hilo-emu.
EMU_SKIPS = ("link_down", "loss_burst", "corrupt", "learner_restart")


def run(hilo_sim, scenario_text, name, runs_root, extra=()):
    out = os.path.join(runs_root, name.replace(" ", "-").replace("+", "-"))
    os.makedirs(out, exist_ok=True)
    scenario = os.path.join(out, "scenario.textproto")
    with open(scenario, "w") as f:
        f.write(scenario_text)
    cmd = [hilo_sim, "run", scenario, "--out", out, "--quiet", *extra]
    start = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    latencies = {}  # arm -> [latency_s of applied rows]
    with open(os.path.join(out, "workers.csv")) as f:
        for row in csv.DictReader(r for r in f if not r.startswith("#")):
            if row["hash_ok"] == "1":
                latencies.setdefault(row["arm"], []).append(float(row["latency_s"]))
    print(f"{name}: {time.time() - start:.1f} s wall", file=sys.stderr)
    return summary, latencies


def mean(values):
    return sum(values) / len(values) if values else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hilo-sim", default="build/sim/hilo-sim")
    parser.add_argument("--scenario", default="scenarios/teaching/05-faults.textproto")
    parser.add_argument("--out", default="results/faults")
    parser.add_argument("--runs", default="/tmp/hilo-fault-table")
    parser.add_argument("--runner", choices=("hilo-sim", "hilo-emu"), default="hilo-sim",
                        help="hilo-emu: real processes over loopback (--network direct), written "
                             "to faults-emulation.{csv,md}; link faults and learner_restart are "
                             "skipped")
    parser.add_argument("--hilo-emu", default="build/sim/hilo-emu")
    args = parser.parse_args()
    emu = args.runner == "hilo-emu"
    binary, extra = (args.hilo_emu, ["--network", "direct"]) if emu else (args.hilo_sim, [])
    stem = "faults-emulation" if emu else "faults"
    if emu:
        args.runs = os.path.join(args.runs, "emu")

    base = base_scenario(args.scenario)
    clean, clean_lat = run(binary, base, "no-fault", args.runs, extra)
    clean_arms = {a["name"]: a for a in clean["arms"]}
    rows = []
    for name, fault in FAULTS:
        if emu and name.split()[0] in EMU_SKIPS:
            print(f"{name}: skipped (hilo-emu --network direct does not inject it)",
                  file=sys.stderr)
            continue
        summary, lat = run(binary, base + "\nfaults { " + fault + " }\n", name, args.runs, extra)
        for a in summary["arms"]:
            c = clean_arms[a["name"]]
            rows.append({
                "fault": name,
                "arm": a["name"],
                "faults_injected": a["faults_injected"],
                "resyncs": a["resyncs"],
                "hash_mismatches": a["hash_mismatches"],
                "recoveries": a["recovery_s"]["n"],
                "recovery_p50_s": a["recovery_s"]["p50"],
                "recovery_max_s": a["recovery_s"]["max"],
                "extra_latency_mean_s": mean(lat.get(a["name"], [])) - mean(
                    clean_lat.get(a["name"], [])),
                "extra_latency_max_s": a["update_latency_s"]["max"] - c["update_latency_s"]["max"],
                "extra_sim_time_s": a["sim_time_s"] - c["sim_time_s"],
                "versions_lost": a["versions_lost"],
                "workers_alive": a["workers_alive"],
                "workers_at_final_hash": a["workers_at_final_hash"],
            })

    command = "/usr/bin/python3 scripts/fault_table.py " + " ".join(
        shlex.quote(x) for x in sys.argv[1:])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    made = f"at commit {commit} on {time.strftime('%Y-%m-%d', time.gmtime())}"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".csv.meta.json"), "w") as f:
        json.dump({"about": f"provenance of {stem}.csv", "command": command.strip(),
                   "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
                   "scenario": args.scenario + " (its own faults removed; each fault at 1 s)"},
                  f, indent=2)
        f.write("\n")
    with open(os.path.join(args.out, stem + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write("Made by `" + command.strip() + "` " + made + " from `" + args.scenario +
                "` (its own faults "
                "removed; every fault starts at 1 s of " +
                ("modelled time, on real processes (hilo-emu --network direct)" if emu
                 else "simulated time") +
                " and lasts 0.5 s where it has a duration). Recovery: from the end of the fault to the affected worker holding the "
                "learner's version again (-: no worker to recover, or the run ended first). Extra "
                "latency: this run's update latency against the fault-free run's, mean over every "
                "(version, worker) and max.\n\n")
        f.write("| fault | arm | resyncs | recovery p50 / max (s) | extra latency mean / max (s) "
                "| extra sim time (s) | versions lost | at final hash / alive |\n")
        f.write("|---|---|---:|---:|---:|---:|---:|---:|\n")
        for r in rows:
            recovery = (f"{r['recovery_p50_s']:.3g} / {r['recovery_max_s']:.3g}"
                        if r["recoveries"] else "-")
            f.write(f"| {r['fault']} | {r['arm']} | {r['resyncs']} | {recovery} | "
                    f"{r['extra_latency_mean_s']:.3g} / {r['extra_latency_max_s']:.3g} | "
                    f"{r['extra_sim_time_s']:.3g} | {r['versions_lost']} | "
                    f"{r['workers_at_final_hash']} / {r['workers_alive']} |\n")
    print(open(os.path.join(args.out, stem + ".md")).read())


if __name__ == "__main__":
    main()
