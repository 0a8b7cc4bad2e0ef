#!/usr/bin/python3
"""scripts/compare_modes.py --emu-runs: the emulation's figures are the median run's (CTest:
scripts.compare_modes). Runs no simulation: two stand-in binaries write the files a run writes.

Usage: tests/scripts/test_compare_modes.py   (from the repository root)

Checks:
  1. with --emu-runs 3, three emulation runs are made (emu, emu-2, emu-3) and the CSV row's
     emulation p50, p99 and step are the medians of the three runs' (not the first run's, not
     the mean), its lag p99 the worst run's, and every run's p50 is kept;
  2. quality is "same" only when every run's final quality equals the simulator's;
  3. --reuse reruns nothing where every run's summary.json exists;
  4. --emu-runs 0 is refused with exit code 2 and a message naming the flag.
"""
import csv
import json
import os
import stat
import subprocess
import sys
import tempfile

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
'''

FIGURES = {
    "sim": {"p50": 0.25, "p99": 0.50, "step": 1.0, "quality": 0.5, "lag": 0.0},
    "emu": {"p50": 0.30, "p99": 0.70, "step": 1.3, "quality": 0.5, "lag": 0.001},
    "emu-2": {"p50": 0.24, "p99": 0.55, "step": 1.1, "quality": 0.5, "lag": 0.004},
    "emu-3": {"p50": 0.26, "p99": 0.60, "step": 1.2, "quality": 0.5, "lag": 0.002},
}


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "fake-bin")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        figures = os.path.join(tmp, "figures.json")
        calls = os.path.join(tmp, "calls.txt")
        env = dict(os.environ, FAKE_FIGURES=figures, FAKE_CALLS=calls)

        def compare(csv_path, *extra):
            return subprocess.run(
                ["/usr/bin/python3", SCRIPT, SCENARIO, "--hilo-sim", fake, "--hilo-emu", fake,
                 "--out", os.path.join(tmp, "runs"), "--csv", csv_path, *extra],
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
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
