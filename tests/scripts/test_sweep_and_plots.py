#!/usr/bin/python3
"""End-to-end test of scripts/sweep.py and the plotters on a tiny scenario (CTest: scripts.sweep).

Usage: tests/scripts/test_sweep_and_plots.py HILO_SIM    (run from the repository root)

Checks, in order:
  1. a misspelled --grid path exits 2 after validation and runs nothing (no runs/ folder);
  2. a 2x1 grid of tests/scripts/tiny.textproto runs (2 jobs) and writes sweep.csv with the grid
     column, every summary field (update_latency_s flattened) and one row per (combo, arm), and
     sweep_steps.csv / sweep_workers.csv / sweep_allocation.csv with the grid column in front;
  3. running the same sweep again skips both finished runs;
  4. a run that fails at run time (a wrapper around hilo-sim fails `run` for one value) is
     reported with its log, the other combinations are kept, and the sweep exits 1;
  5. plot_speedup.py, plot_curves.py and plot_pareto.py write PNG and PDF files from the CSVs.
"""
import csv
import os
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
SCENARIO = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")
BW = "network.worker_link.bandwidth"

SUMMARY_COLUMNS = [
    "combo", BW, "scenario", "seed", "llm_profile", "arm", "strategy", "compressor",
    "compressor_params", "training_rank", "budget", "budget_fraction", "adapter_bytes",
    "real_adapter_bytes", "wire_bytes_per_update_mean", "real_bytes_per_update_mean",
    "fraction_of_adapter_bytes", "update_latency_p50_s", "update_latency_p99_s",
    "update_latency_max_s", "step_time_s_mean", "sim_time_s", "final_quality", "quality_metric",
    "higher_is_better", "drift_rel_l2_max", "hash_mismatches", "resyncs", "steps",
]
failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        if detail:
            print(detail, flush=True)
        failures.append(what)


def run(cmd):
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    return proc.returncode, proc.stdout


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    hilo_sim = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="hilo-sweep-test-")
    out = os.path.join(tmp, "sweep")
    common = [PY, SWEEP, SCENARIO, "--set", "workload.steps=2", "--hilo-sim", hilo_sim]

    # 1. A misspelled path is caught before anything runs.
    bad_out = os.path.join(tmp, "bad")
    rc, log = run(common + ["--grid", "network.worker_lnk.bandwidth=10Mbps", "--out", bad_out])
    check(rc == 2, f"misspelled --grid path exits 2 (got {rc})", log)
    check("worker_lnk" in log, "the error names the misspelled field")
    check(not os.path.exists(os.path.join(bad_out, "runs")), "nothing ran")

    # 2. A 2x1 grid.
    grid = ["--grid", f"{BW}=10Mbps,1Gbps", "--out", out, "--jobs", "2"]
    rc, log = run(common + grid)
    check(rc == 0, f"sweep exits 0 (got {rc})", log)
    rows = read(os.path.join(out, "sweep.csv"))
    header = list(rows[0].keys()) if rows else []
    missing = [c for c in SUMMARY_COLUMNS if c not in header]
    check(not missing, f"sweep.csv has every expected column (missing: {missing})")
    check(header[:2] == ["combo", BW], f"sweep.csv starts with combo and the grid path: {header[:3]}")
    check(len(rows) == 4, f"sweep.csv has 2 combos x 2 arms = 4 rows (got {len(rows)})")
    check(sorted({r[BW] for r in rows}) == ["10Mbps", "1Gbps"], "grid values in the rows")
    check(all(r["steps"] == "2" for r in rows), "the --set value reached every run")
    check(all(float(r["update_latency_p50_s"]) > 0 for r in rows), "latencies are positive")
    for name in ("sweep_steps.csv", "sweep_workers.csv", "sweep_allocation.csv"):
        path = os.path.join(out, name)
        ok = os.path.exists(path)
        cat = read(path) if ok else []
        check(ok and cat and list(cat[0].keys())[:2] == ["combo", BW],
              f"{name} exists with combo and grid columns in front")
    steps = read(os.path.join(out, "sweep_steps.csv"))
    check({r["combo"] for r in steps} == {r["combo"] for r in rows} and
          {"arm", "version", "sim_time_s", "quality", "wire_bytes"} <= set(steps[0].keys()),
          "sweep_steps.csv concatenates both runs' steps.csv")
    for r in rows[::2]:
        check(os.path.exists(os.path.join(out, "runs", r["combo"], "run.log")),
              f"run.log of {r['combo']}")

    # 3. Resume: both runs are done.
    rc, log = run(common + grid)
    check(rc == 0 and "2 already done, 0 to run" in log, "second sweep skips both runs", log)

    # 4. A run-time failure: the wrapper fails `run` for 100Mbps; the other two are done.
    wrapper = os.path.join(tmp, "failing-hilo-sim")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n"
                "case \"$1 $*\" in\n"
                f"  run*100Mbps*) echo 'injected failure' >&2; exit 1 ;;\n"
                "esac\n"
                f"exec '{hilo_sim}' \"$@\"\n")
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
    rc, log = run([PY, SWEEP, SCENARIO, "--set", "workload.steps=2", "--hilo-sim", wrapper,
                   "--grid", f"{BW}=10Mbps,100Mbps,1Gbps", "--out", out, "--jobs", "2"])
    failed_log = os.path.join(out, "runs", "bandwidth-100Mbps", "run.log")
    check(rc == 1, f"a failed run makes the sweep exit 1 (got {rc})", log)
    check(failed_log in log, "the failure is reported with its log path")
    check(os.path.exists(failed_log) and "injected failure" in open(failed_log).read(),
          "run.log holds the failed run's stderr")
    check(len(read(os.path.join(out, "sweep.csv"))) == 4, "the finished runs are still collected")

    # 5. Plots.
    plots = os.path.join(tmp, "plots")
    for script, inputs in (
            ("plot_speedup.py", ["sweep.csv"]),
            ("plot_curves.py", ["sweep_steps.csv"]),
            ("plot_pareto.py", ["sweep.csv", "--steps", "sweep_steps.csv"])):
        stem = os.path.join(plots, script[:-3])
        args = [a if a.startswith("--") else os.path.join(out, a) for a in inputs]
        rc, log = run([PY, os.path.join(ROOT, "scripts", script)] + args + ["--out", stem])
        check(rc == 0, f"{script} exits 0 (got {rc})", log)
        for ext in (".png", ".pdf"):
            check(os.path.getsize(stem + ext) > 1000 if os.path.exists(stem + ext) else False,
                  f"{script} wrote {os.path.basename(stem)}{ext}")

    if failures:
        print(f"{len(failures)} check(s) failed; files kept in {tmp}")
        return 1
    subprocess.run(["rm", "-rf", tmp])
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
