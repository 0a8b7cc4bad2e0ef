#!/usr/bin/python3
"""Runs one scenario once without faults and once per fault kind, and tabulates what each fault
cost: resyncs, recovery time (p50 / max), update latency (mean and max, next to the fault-free
run's), extra simulated time, and the workers that ended at the learner's final hash.

    /usr/bin/python3 scripts/fault_table.py [--runner hilo-sim|hilo-emu] [--hilo-sim PATH]
                                            [--hilo-emu PATH] [--out DIR] [--jobs N]

Writes OUT/faults.csv (one row per fault kind and arm, the fault-free run first; its command in
faults.csv.meta.json) and OUT/faults.md (the same as a Markdown table, with the command and
commit); each run's own outputs go to RUNS/<kind>/ (--runs, default OUT/runs). OUT defaults to
results/runs/fault-table (ignored by git); the committed table is made with --out results/faults
--runs /tmp/hilo-fault-table. The runs go through scripts/sweep_engine.py (done/total/ETA; a
failed run's log kept and its end printed). The base scenario is
scenarios/teaching/05-faults.textproto with its own faults removed; every fault starts at 1 s and
lasts 0.5 s. With --runner hilo-emu the same runs are made on real processes over loopback
(hilo-emu --network direct) and written to OUT/faults-emulation.{csv,md}; the faults that
--network direct cannot inject (link faults) are skipped and said so. With --network ns3 (root:
network namespaces, hilo-netem) only the link faults are run, over emulated links, and written to
OUT/faults-emulation-ns3.{csv,md}. An emulation table shows the simulator's recovery p50 next to
its own where OUT/faults.csv (the simulator's table) is there.
"""

import argparse
import csv
import json
import os
import re
import sys
import time

import sweep_engine as engine
from hilo_runs import read_csv

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


# Faults hilo-emu --network direct cannot inject (it exits 2 for them): skipped with --runner hilo-emu.
EMU_SKIPS = ("link_down", "loss_burst", "corrupt")


def base_scenario(path):
    """The scenario text without its faults entries."""
    with open(path) as f:
        text = f.read()
    return re.sub(r"^faults \{.*\}\s*$", "", text, flags=re.M)


def run_folder(runs_root, name):
    return os.path.join(runs_root, name.replace(" ", "-").replace("+", "-"))


def make_task(binary, scenario_text, name, runs_root, extra=()):
    out = run_folder(runs_root, name)
    os.makedirs(out, exist_ok=True)
    scenario = os.path.join(out, "scenario.textproto")
    with open(scenario, "w") as f:
        f.write(scenario_text)
    return {"slug": name, "dir": out, "log_path": os.path.join(out, "run.log"),
            "cmd": [binary, "run", scenario, "--out", out, "--quiet", *extra]}


def read_run(out):
    """(summary.json, {arm: [latency_s of every applied (version, worker)]}) of a finished run."""
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    latencies = {}
    for row in read_csv(os.path.join(out, "workers.csv")):
        if row["hash_ok"] == "1":
            latencies.setdefault(row["arm"], []).append(float(row["latency_s"]))
    return summary, latencies


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    engine.add_binary_args(parser, "hilo-sim", "hilo-emu")
    parser.add_argument("--runner", choices=("hilo-sim", "hilo-emu"), default="hilo-sim",
                        help="hilo-emu: real processes (--network, default direct: loopback), "
                             "written to faults-emulation[-ns3].{csv,md}")
    parser.add_argument("--network", choices=("direct", "ns3"), default="direct",
                        help="with --runner hilo-emu: direct (loopback; every fault but the link "
                             "faults) or ns3 (emulated links, root; the link faults only)")
    parser.add_argument("--scenario", default="scenarios/teaching/05-faults.textproto")
    parser.add_argument("--out", default=engine.default_out("fault-table"),
                        help="where faults.csv and faults.md go (default "
                             "results/runs/fault-table)")
    parser.add_argument("--runs", help="folder of the runs (default OUT/runs)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    args = parser.parse_args()
    emu = args.runner == "hilo-emu"
    if args.network != "direct" and not emu:
        print("fault_table.py: --network is for --runner hilo-emu", file=sys.stderr)
        return 2
    ns3 = args.network == "ns3"
    binary, extra = (args.hilo_emu, ["--network", args.network]) if emu else (args.hilo_sim, [])
    stem = ("faults-emulation-ns3" if ns3 else "faults-emulation") if emu else "faults"
    try:
        engine.check_binary(binary, args.runner)
    except engine.BadInput as e:
        print(f"fault_table.py: {e}", file=sys.stderr)
        return 2
    runs_root = args.runs or os.path.join(args.out, "runs")
    if emu:
        runs_root = os.path.join(runs_root, "emu-ns3" if ns3 else "emu")

    base = base_scenario(args.scenario)
    tasks = [make_task(binary, base, "no fault", runs_root, extra)]
    for name, fault in FAULTS:
        link = name.split()[0].split("+")[0] in EMU_SKIPS
        if emu and link != ns3:
            print(f"{name}: skipped (" + ("run with --network direct" if ns3 else
                                         "hilo-emu --network direct does not inject it") + ")",
                  file=sys.stderr)
            continue
        tasks.append(make_task(binary, base + "\nfaults { " + fault + " }\n", name, runs_root,
                               extra))
    stopped = engine.run_all(tasks, engine.make_executor(args.jobs, None), "faults")
    if stopped:
        return 128 + stopped
    failed = [t for t in tasks if t["status"] != "ok"]
    if failed:
        print("fault_table.py: failed: " + ", ".join(f"{t['slug']} ({t['log_path']})"
                                                   for t in failed), file=sys.stderr)
        return 1

    clean, clean_lat = read_run(tasks[0]["dir"])
    clean_arms = {a["name"]: a for a in clean["arms"]}
    rows = []
    for task in tasks:
        summary, lat = read_run(task["dir"])
        for a in summary["arms"]:
            c = clean_arms[a["name"]]
            ls = lat.get(a["name"], [])
            rows.append({
                "fault": task["slug"],
                "arm": a["name"],
                "faults_injected": a["faults_injected"],
                "resyncs": a["resyncs"],
                "hash_mismatches": a["hash_mismatches"],
                "recoveries": a["recovery_count"],
                "recovery_p50_s": a["recovery_s"]["p50"],
                "recovery_max_s": a["recovery_s"]["max"],
                "latency_mean_s": sum(ls) / len(ls) if ls else 0.0,
                "latency_max_s": max(ls) if ls else 0.0,
                "extra_sim_time_s": a["sim_time_s"] - c["sim_time_s"],
                "versions_lost": a["versions_lost"],
                "workers_alive": a["workers_alive"],
                "workers_at_final_hash": a["workers_at_final_hash"],
            })

    # The simulator's recovery p50 by (fault, arm), from its table in OUT, when it is there.
    sim_p50 = {}
    sim_csv = os.path.join(args.out, "faults.csv")
    if emu and os.path.exists(sim_csv):
        with open(sim_csv) as f:
            for r in csv.DictReader(f):
                if int(r["recoveries"]):
                    sim_p50[(r["fault"], r["arm"])] = float(r["recovery_p50_s"])

    command = engine.command_line()
    commit = engine.git_commit()
    date = time.strftime("%Y-%m-%d", time.gmtime())
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".csv.meta.json"), "w") as f:
        json.dump({"about": f"provenance of {stem}.csv", "command": command, "commit": commit,
                   "date": date,
                   "scenario": args.scenario + " (its own faults removed; each fault at 1 s)"},
                  f, indent=2)
        f.write("\n")
    with open(os.path.join(args.out, stem + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write("Made by `" + command + "` at commit " + commit + " on " + date + " from `" + args.scenario +
                "` (its own faults removed; every fault starts at 1 s of " +
                (f"modelled time, on real processes (hilo-emu --network {args.network})" if emu
                 else "simulated time") + " and lasts 0.5 s where it has a duration). Recovery: from the end of the fault to the "
                "affected worker holding the learner's version again (-: no worker to recover, or "
                "the run ended first). Update latency: mean and max over every applied (version, "
                "worker) of the run; compare with the `no fault` rows. Extra sim time: against "
                "the fault-free run." + (" Sim recovery p50: the simulator's, from "
                                         "faults.csv next to this file." if sim_p50 else "") +
                "\n\n")
        sim_head, sim_rule = (" sim recovery p50 (s) |", "---:|") if sim_p50 else ("", "")
        f.write("| fault | arm | resyncs | recovery p50 / max (s) |" + sim_head +
                " update latency mean / max (s) | extra sim time (s) | versions lost "
                "| at final hash / alive |\n")
        f.write("|---|---|---:|---:|" + sim_rule + "---:|---:|---:|---:|\n")
        for r in rows:
            recovery = (f"{r['recovery_p50_s']:.3g} / {r['recovery_max_s']:.3g}"
                        if r["recoveries"] else "-")
            if sim_p50:
                p50 = sim_p50.get((r["fault"], r["arm"]))
                recovery += " | " + (f"{p50:.3g}" if p50 is not None else "-")
            f.write(f"| {r['fault']} | {r['arm']} | {r['resyncs']} | {recovery} | "
                    f"{r['latency_mean_s']:.3g} / {r['latency_max_s']:.3g} | "
                    f"{r['extra_sim_time_s']:.3g} | {r['versions_lost']} | "
                    f"{r['workers_at_final_hash']} / {r['workers_alive']} |\n")
    print(open(os.path.join(args.out, stem + ".md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
