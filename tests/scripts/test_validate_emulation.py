#!/usr/bin/python3
"""scripts/validate_emulation.sh end to end on two of its rows, with stand-in binaries (CTest:
scripts.validate_emulation). Runs no simulation and needs no root: the stand-in writes the files
a run writes, its latency a function of the run's --set seed=, network.model= and whether it is
the emulation.

Usage: tests/scripts/test_validate_emulation.py   (from the repository root)

Checks, with --rows link-10Mbps-10ms-loss0.01,star-uplink --lossy-seeds 3 --emu-runs 2:
  1. the lossy row runs seeds 1-3 on each side (sim-seedS, flow-seedS, emu-seedS) and the
     loss-free row the packet and flow models once and the emulation twice and, every run's
     kernel taking a HyStart delay exit the (traced) packet model's run does not, two more by
     the excursion rule (sim, flow, emu, emu-2, emu-3, emu-4; runs 1 and 2 used: none was free
     of one); the lossy row's packet-model runs are not traced (no rule there); no other row
     runs;
  2. emulation.csv has the two rows, the lossy one naming seeds 1 2 3 with its p50s the means over
     them, both with flow-model figures; emulation-commits.csv has a sim, a flow and an emu line
     per row at this commit; emulation.md has a summary line per model; the meta file's command
     names --lossy-seeds 3 and --rows; every emulation run was traced (--trace-tcp), each one's
     HyStart delay exits in the row;
  3. --reuse reruns nothing and keeps every commits line as it was;
  4. --keep-lossy keeps the lossy row's CSV line and its three commits lines and runs only the
     loss-free row;
  5. an unknown --rows label and --lossy-seeds 0 exit 2 before running anything.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

from checks import fake_binary, report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "validate_emulation.sh")
LOSSY, CLEAN = "link-10Mbps-10ms-loss0.01", "star-uplink"

# p50 = 1 + seed/10 (seed 5, the scenarios' own, without --set seed=), +0.05 in the emulation,
# +0.02 in the flow model; p99 twice that.
FAKE = r'''#!/usr/bin/python3
import json, os, sys
argv = sys.argv[1:]
out = argv[argv.index("--out") + 1]
with open(os.environ["FAKE_CALLS"], "a") as f:
    f.write(out + "\n")
sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
seed = next((int(x.split("=")[1]) for x in sets if x.startswith("seed=")), 5)
flow = "network.model=flow" in sets
p50 = 1.0 + seed / 10 + (0.05 if "--network" in argv else 0) + (0.02 if flow else 0)
os.makedirs(out, exist_ok=True)
arm = {"name": "hilo-spar", "update_latency_s": {"p50": p50, "p99": 2 * p50},
       "step_time_s_mean": p50 + 1, "wire_bytes_per_update_mean": 1000, "final_quality": 0.5,
       "emulation_lag_s": {"mean": 0.0001, "p99": 0.0005, "max": 0.001},
       "emulation_link_traffic_bps": {"capacity": 1e7, "carried_peak": 9e6}}
json.dump({"arms": [arm]}, open(os.path.join(out, "summary.json"), "w"))
with open(os.path.join(out, "steps.csv"), "w") as f:
    f.write("arm,version,sim_time_s\nhilo-spar,1,1.0\n")
with open(os.path.join(out, "workers.csv"), "w") as f:
    f.write("arm,version,received_s\nhilo-spar,1,%r\n" % (1.0 + p50))
if "--trace-tcp" in argv and "--network" not in argv:  # hilo-sim's trace: no delay exit
    with open(os.path.join(out, "tcp-trace.csv"), "w") as f:
        f.write("arm,time_s,node,peer,hystart_delay_exits\nhilo-spar,0.1,learner,worker-0,0\n")
elif "--trace-tcp" in argv:  # hilo-emu's HyStart counters beside the learner's trace
    os.makedirs(os.path.join(out, "nodes", "hilo-spar"), exist_ok=True)
    with open(os.path.join(out, "nodes", "hilo-spar", "learner.tcp-trace.csv.hystart.csv"), "w") as f:
        f.write("counter,at_start,at_end\nTCPHystartDelayDetect,0,%d\n" % (seed % 2))
'''


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = fake_binary(tmp, FAKE)
        calls = os.path.join(tmp, "calls.txt")
        out, runs = os.path.join(tmp, "tables"), os.path.join(tmp, "runs")

        def validate(*extra):
            if os.path.exists(calls):
                os.remove(calls)
            done = subprocess.run(
                [SCRIPT, "--out", out, "--runs", runs, "--hilo-sim", fake, "--hilo-emu", fake,
                 *extra], capture_output=True, text=True, cwd=ROOT,
                env=dict(os.environ, FAKE_CALLS=calls))
            made = []
            if os.path.exists(calls):
                with open(calls) as f:
                    made = sorted(os.path.relpath(l.strip(), runs) for l in f)
            return done, made

        def read(name):
            with open(os.path.join(out, name), newline="") as f:
                return list(csv.DictReader(f))

        rows_args = ("--rows", f"{LOSSY},{CLEAN}", "--lossy-seeds", "3", "--emu-runs", "2")
        done, made = validate(*rows_args)
        if done.returncode != 0:
            failures.append(f"the run failed: {done.stderr[-2000:]}")
            return report(failures)
        want = sorted([f"{LOSSY}/{side}-seed{s}" for s in (1, 2, 3) for side in
                       ("sim", "flow", "emu")] + [f"{CLEAN}/{m}" for m in
                                                  ("sim", "flow", "emu", "emu-2", "emu-3", "emu-4")])
        if made != want:
            failures.append(f"runs made: {made}\nwant: {want}")
        rows = {r["label"]: r for r in read("emulation.csv")}
        if sorted(rows) != sorted([LOSSY, CLEAN]):
            failures.append(f"emulation.csv rows: {sorted(rows)}")
        else:
            lossy, clean = rows[LOSSY], rows[CLEAN]
            # Means over seeds 1-3: 1.2 packet, 1.22 flow, 1.25 emulation.
            for key, value in (("sim_latency_p50_s", 1.2), ("flow_latency_p50_s", 1.22),
                               ("emu_latency_p50_s", 1.25), ("emu_latency_p99_s", 2.5)):
                if not abs(float(lossy[key] or "nan") - value) <= 1e-9:
                    failures.append(f"{LOSSY} {key} = {lossy[key]!r}, want {value}")
            if lossy["seeds"] != "1 2 3" or clean["seeds"] or clean["emu_runs"] != "2" \
                    or not clean["flow_latency_p50_ratio"]:
                failures.append(f"seeds {lossy['seeds']!r} / {clean['seeds']!r}, loss-free "
                                f"emu_runs {clean['emu_runs']}, flow ratio "
                                f"{clean['flow_latency_p50_ratio']!r}")
            # Every emulation run traced: each one's HyStart delay exits (the stand-in's: seed % 2).
            if lossy["emu_hystart_delay_exits_runs"] != "1 0 1" or \
                    clean["emu_hystart_delay_exits_runs"] != "1 1 1 1":
                failures.append("HyStart delay exits per emulation run: lossy "
                                f"{lossy['emu_hystart_delay_exits_runs']!r}, loss-free "
                                f"{clean['emu_hystart_delay_exits_runs']!r}: want '1 0 1', "
                                "'1 1 1 1'")
            if clean["emu_runs_used"] != "1 2" or clean["sim_hystart_delay_exits"] != "0" or \
                    lossy["sim_hystart_delay_exits"] != "- - -":
                failures.append(f"excursion rule: loss-free runs used {clean['emu_runs_used']!r} "
                                f"(want '1 2'), packet model's exits {clean['sim_hystart_delay_exits']!r}"
                                f" (want '0'), lossy {lossy['sim_hystart_delay_exits']!r} (want "
                                "'- - -': not traced)")
        commits = read("emulation-commits.csv")
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip()
        sides = sorted((c["label"], c["side"]) for c in commits)
        if sides != sorted((l, s) for l in (LOSSY, CLEAN) for s in ("sim", "flow", "emu")) or \
                any(not c["commit"].startswith(head) for c in commits):
            failures.append(f"commits lines: {commits} (HEAD {head})")
        with open(os.path.join(out, "emulation.md")) as f:
            table = f.read()
        for start in ("Packet model: 2 of 2 rows meet both goals",
                      "Flow model: 2 of 2 rows meet both goals"):
            if start not in table:
                failures.append(f"no line '{start}' in emulation.md:\n{table}")
        with open(os.path.join(out, "emulation-meta.txt")) as f:
            meta = f.read()
        if "--lossy-seeds 3" not in meta or f"--rows {LOSSY},{CLEAN}" not in meta:
            failures.append(f"the meta file's command: {meta}")

        before = read("emulation-commits.csv")
        done, made = validate(*rows_args, "--reuse")
        if done.returncode != 0 or made:
            failures.append(f"--reuse reran {made} (exit {done.returncode}) {done.stderr[-500:]}")
        if read("emulation-commits.csv") != before:
            failures.append("--reuse did not keep the commits lines as they were")

        lossy_line = next(r for r in read("emulation.csv") if r["label"] == LOSSY)
        lossy_commits = [c for c in read("emulation-commits.csv") if c["label"] == LOSSY]
        done, made = validate(*rows_args, "--keep-lossy")
        if done.returncode != 0 or any(not m.startswith(CLEAN + "/") for m in made) or not made:
            failures.append(f"--keep-lossy ran {made} (exit {done.returncode})")
        kept = [r for r in read("emulation.csv") if r["label"] == LOSSY]
        if kept != [lossy_line]:
            failures.append(f"--keep-lossy changed the lossy row: {kept} against {lossy_line}")
        if [c for c in read("emulation-commits.csv") if c["label"] == LOSSY] != lossy_commits:
            failures.append("--keep-lossy did not keep the lossy row's three commits lines")

        for bad in (("--rows", "link-nowhere"), ("--lossy-seeds", "0")):
            done, made = validate(*bad)
            if done.returncode != 2 or made or bad[0] not in done.stderr:
                failures.append(f"{' '.join(bad)}: exit {done.returncode}, ran {made}: "
                                f"{done.stderr[-300:]}")
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())
