#!/usr/bin/python3
"""End-to-end test of scripts/sweep.py and the plotters on a tiny scenario (CTest:
scripts.sweep_and_plots).

Usage: tests/scripts/test_sweep_and_plots.py HILO_SIM [HILO_EMU]   (run from the repository root)

Checks, in order:
  1. a misspelled --grid path exits 2 after validation and runs nothing (no runs/ folder);
  2. --print-commands prints one run command per combination and creates nothing;
  3. a 2x1 grid of tests/scripts/tiny.textproto runs (2 jobs) and writes sweep.csv with the grid
     column, status/exit_code/log, every summary field (update_latency_s flattened) and one row
     per (combo, arm), and no sweep_*.csv concatenation; with --concatenate,
     sweep_steps/workers/rollouts/allocation.csv with the grid column in front, equal to what the
     plotters join from the runs themselves; and the provenance sidecar sweep.json (command, git
     commit, date, runner SHA-256, models/data hashes) -- every CSV plain: no '#' line, and read
     by pandas.read_csv without options when python3-pandas is installed;
  4. running the same sweep again skips both finished runs;
  5. the resume key (as --dry-run reports it): a copy of the simulator with one byte appended
     reruns both combinations; a changed models/data/*.csv (in a copy of the scripts' folder
     layout) reruns too;
  6. a run that fails at run time (a wrapper fails `run` for one value) is reported with its
     log and the end of that log (the child's stderr), stays in sweep.csv as a `failed` row with exit code and log path, the other
     combinations are kept, and the sweep exits 1;
     another runner with hilo-sim's CLI that adds "mode" to summary.json and a pid column to
     workers.csv (as hilo-emu does) gets a `mode` column in sweep.csv, the pid column kept;
  7. SIGTERM mid-sweep: the sweep exits 143, the running combination's whole process group is
     gone (a grandchild `sleep` included), the finished combination is in sweep.csv (`ok`) and
     the stopped one is `interrupted`; rerunning resumes (1 done, 1 to run);
  8. the Dask executor: a LocalCluster on loopback runs the sweep, and --dask local:2 starts its
     own cluster and counts its 2 workers in the ETA (skipped, with a message, when
     python3-distributed is not installed);
  9. the shared plot style (same colour/marker per arm everywhere, matrix names), and the
     intervals of scripts/stats_helper.py (scipy's t quantiles, not a table);
  10. plot_speedup, plot_curves, plot_pareto, plot_allocation, plot_consistency, plot_timeline
     and plot_time_to_target write PNG and PDF files from the CSVs (a sweep.csv with a failed
     row included), at full and column width;
  11. every scenario header that says "scripts/reproduce.sh runs exactly this" lists exactly the
     commands `scripts/reproduce.sh --print-commands --out results/paper` prints for that
     scenario's figures;
  12. the runner hilo-emu (the real binary, given as HILO_EMU): `--runner hilo-emu
     --runner-arg=--network=direct` validates through hilo-sim and runs real processes (summary
     mode emulation-direct); plot_speedup refuses a sweep with two rows per (arm, bandwidth)
     unless --where or --average says what to plot.
The README's own sweep examples are run as written by tests/scripts/test_readme_examples.py.
"""
import csv
import glob
import hashlib
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
SCENARIO = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")
BW = "network.worker_link.bandwidth"

SUMMARY_COLUMNS = [
    "combo", BW, "status", "exit_code", "log", "scenario", "seed", "llm_profile", "arm",
    "strategy", "compressor", "compressor_params", "training_rank", "budget", "budget_fraction",
    "adapter_bytes", "real_adapter_bytes", "wire_bytes_per_update_mean",
    "real_bytes_per_update_mean", "fraction_of_adapter_bytes", "update_latency_p50_s",
    "update_latency_p99_s", "update_latency_max_s", "step_time_s_mean", "sim_time_s",
    "final_quality", "quality_metric", "higher_is_better", "drift_rel_l2_max", "hash_mismatches",
    "resyncs", "steps",
]
_checks = Checks()
check = _checks.check


def run(cmd, cwd=ROOT):
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    return proc.returncode, proc.stdout


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_exec(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped by its new parent counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def check_plain_csvs(folder):
    """Every CSV under folder (not the per-run ones) has no '#' line and parses."""
    paths = sorted(glob.glob(os.path.join(folder, "*.csv")))
    hashed = [p for p in paths if any(l.startswith("#") for l in open(p))]
    check(paths and not hashed, f"{len(paths)} CSV(s) in {os.path.basename(folder)}/ without "
          f"'#' lines (with: {hashed})")
    try:
        import pandas
    except ImportError:
        print("skip pandas.read_csv check: python3-pandas is not installed", flush=True)
        return
    for p in paths:
        try:
            df = pandas.read_csv(p)
            ok = len(df) == len(read(p)) and list(df.columns) == list(read(p)[0].keys())
        except Exception as e:  # noqa: BLE001 -- any parse error fails the check
            ok, df = False, e
        check(ok, f"pandas.read_csv({os.path.basename(p)}) without options", str(df)[:300])


def header_commands(path):
    """The commands of a scenario header's blocks introduced by a line that says
    'reproduce.sh runs exactly this': the indented '#   ' lines after it, with '\\'
    continuations joined, each split into shell words."""
    header = []
    for line in open(path):
        if not line.startswith("#"):
            break
        header.append(line.rstrip("\n"))
    cmds, i = [], 0
    while i < len(header):
        if "reproduce.sh runs exactly this" in header[i]:
            i += 1
            text = ""
            while i < len(header) and header[i].startswith("#   "):
                part = header[i][1:].strip()
                text += part[:-1] + " " if part.endswith("\\") else part
                if not part.endswith("\\"):
                    cmds.append(shlex.split(text))
                    text = ""
                i += 1
        else:
            i += 1
    return cmds


def check_headers():
    # The headers show the commands that remake the committed set (--out results/paper; the
    # default OUT is results/runs/paper, ignored by git).
    rc, printed = run(["bash", os.path.join(ROOT, "scripts", "reproduce.sh"),
                       "--print-commands", "--out", "results/paper"])
    check(rc == 0 and printed.strip(), f"reproduce.sh --print-commands exits 0 (got {rc})",
          printed)
    by_figure = {}
    for line in printed.splitlines():
        fig, cmd = line.split(": ", 1)
        by_figure.setdefault(fig, []).append(shlex.split(cmd))
    by_scenario = {}
    for fig, cmds in by_figure.items():
        sweep = next(c for c in cmds if c[0] == "scripts/sweep.py")
        by_scenario.setdefault(sweep[1], []).extend(cmds)
    for scenario, cmds in sorted(by_scenario.items()):
        shown = header_commands(os.path.join(ROOT, scenario))
        check(sorted(shown) == sorted(cmds),
              f"{scenario}: its header shows exactly what reproduce.sh runs",
              "header:\n" + "\n".join(" ".join(c) for c in shown) +
              "\nreproduce.sh:\n" + "\n".join(" ".join(c) for c in cmds))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    hilo_sim = os.path.abspath(sys.argv[1])
    hilo_emu = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else None
    tmp = tempfile.mkdtemp(prefix="hilo-sweep-test-")
    out = os.path.join(tmp, "sweep")
    base = [PY, SWEEP, SCENARIO, "--set", "workload.steps=2"]
    common = base + ["--runner", hilo_sim]

    # 1. A misspelled path is caught before anything runs.
    bad_out = os.path.join(tmp, "bad")
    rc, log = run(common + ["--grid", "network.worker_lnk.bandwidth=10Mbps", "--out", bad_out])
    check(rc == 2, f"misspelled --grid path exits 2 (got {rc})", log)
    check("worker_lnk" in log, "the error names the misspelled field")
    check(not os.path.exists(os.path.join(bad_out, "runs")), "nothing ran")

    # 2. --print-commands.
    pc_out = os.path.join(tmp, "printed")
    rc, log = run(common + ["--grid", f"{BW}=10Mbps,1Gbps", "--out", pc_out, "--print-commands"])
    lines = [l for l in log.splitlines() if l.strip()]
    check(rc == 0 and len(lines) == 2, f"--print-commands prints 2 commands (rc {rc})", log)
    check(all(l.startswith(hilo_sim + " run ") and "--quiet --out " + pc_out in l
              for l in lines) and f"{BW}=10Mbps" in lines[0] and f"{BW}=1Gbps" in lines[1],
          "each printed command is the run command of its combination", log)
    check(not os.path.exists(pc_out), "--print-commands creates nothing")

    # 3. A 2x1 grid.
    grid = ["--grid", f"{BW}=10Mbps,1Gbps", "--out", out, "--jobs", "2"]
    rc, log = run(common + grid)
    check(rc == 0, f"sweep exits 0 (got {rc})", log)
    rows = read(os.path.join(out, "sweep.csv"))
    header = list(rows[0].keys()) if rows else []
    missing = [c for c in SUMMARY_COLUMNS if c not in header]
    check(not missing, f"sweep.csv has every expected column (missing: {missing})")
    check(header[:5] == ["combo", BW, "status", "exit_code", "log"],
          f"sweep.csv starts with combo, the grid path and the status columns: {header[:5]}")
    check(len(rows) == 4, f"sweep.csv has 2 combos x 2 arms = 4 rows (got {len(rows)})")
    check(all(r["status"] == "ok" and r["exit_code"] == "0" and
              r["log"] == f"runs/{r['combo']}/run.log" for r in rows),
          "every row is ok, exit code 0, with its log path")
    check(sorted({r[BW] for r in rows}) == ["10Mbps", "1Gbps"], "grid values in the rows")
    check(all(r["steps"] == "2" for r in rows), "the --set value reached every run")
    check(all(float(r["update_latency_p50_s"]) > 0 for r in rows), "latencies are positive")
    names = ("sweep_steps.csv", "sweep_workers.csv", "sweep_rollouts.csv", "sweep_allocation.csv")
    check(not any(os.path.exists(os.path.join(out, n)) for n in names),
          "no sweep_*.csv concatenation without --concatenate")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import plot_common as pc
    joined = {n: pc.read_csv(os.path.join(out, n)) for n in names}  # joined from runs/
    rc, log = run(common + grid + ["--concatenate"])
    check(rc == 0 and "2 already done, 0 to run" in log, "--concatenate reuses the runs", log)
    for name in names:
        path = os.path.join(out, name)
        ok = os.path.exists(path)
        cat = read(path) if ok else []
        check(ok and cat and list(cat[0].keys())[:2] == ["combo", BW],
              f"{name} exists with combo and grid columns in front")
        check(cat == joined[name], f"{name} equals what the plotters join from the runs")
    steps = read(os.path.join(out, "sweep_steps.csv"))
    check({r["combo"] for r in steps} == {r["combo"] for r in rows} and
          {"arm", "version", "sim_time_s", "quality", "wire_bytes"} <= set(steps[0].keys()),
          "sweep_steps.csv concatenates both runs' steps.csv")
    for r in rows[::2]:
        check(os.path.exists(os.path.join(out, r["log"])), f"run.log of {r['combo']}")
    with open(os.path.join(out, "sweep.json")) as f:
        meta = json.load(f)
    with open(hilo_sim, "rb") as f:
        sim_sha = hashlib.sha256(f.read()).hexdigest()
    data = sorted(os.path.relpath(p, ROOT)
                  for p in glob.glob(os.path.join(ROOT, "models", "data", "*.csv")))
    check("sweep.py" in meta.get("command", "") and meta.get("started_utc") and
          meta.get("git", {}).get("commit") and meta.get("runner", {}).get("sha256") == sim_sha
          and sorted(meta.get("data_sha256", {})) == data and data,
          "sweep.json holds command, date, git commit, runner SHA-256 and data hashes",
          json.dumps(meta)[:600])
    check_plain_csvs(out)

    # 4. Resume: both runs are done.
    rc, log = run(common + grid)
    check(rc == 0 and "2 already done, 0 to run" in log, "second sweep skips both runs", log)

    # 5a. A rebuilt simulator (another binary hash) reruns every combination (--dry-run shows
    # the same done / to-run decision the sweep acts on, without running).
    copy = os.path.join(tmp, "hilo-sim-copy")
    shutil.copy2(hilo_sim, copy)
    with open(copy, "ab") as f:
        f.write(b"\0")
    rc_same, same = run(common + grid + ["--dry-run"])
    rc, log = run(base + ["--runner", copy] + grid + ["--dry-run"])
    check(rc_same == 0 and same.count("\tdone\t") == 2 and rc == 0 and
          log.count("\tto run\t") == 2,
          "a simulator with another SHA-256 reruns both combinations", same + log)

    # 5b. Changed profile data reruns: sweep.py in a copy of the repository layout.
    fake = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(fake, "scripts"))
    os.makedirs(os.path.join(fake, "models", "data"))
    shutil.copy2(SWEEP, os.path.join(fake, "scripts", "sweep.py"))
    shutil.copy2(os.path.join(ROOT, "scripts", "sweep_engine.py"),
                 os.path.join(fake, "scripts", "sweep_engine.py"))
    gpus = os.path.join(fake, "models", "data", "gpus.csv")
    shutil.copy2(os.path.join(ROOT, "models", "data", "gpus.csv"), gpus)
    data_cmd = [PY, os.path.join(fake, "scripts", "sweep.py"), SCENARIO, "--set",
                "workload.steps=2", "--runner", hilo_sim, "--out", os.path.join(tmp, "data")]
    rc1, log1 = run(data_cmd)
    rc2, log2 = run(data_cmd + ["--dry-run"])
    with open(gpus, "a") as f:
        f.write("\n")
    rc3, log3 = run(data_cmd + ["--dry-run"])
    check(rc1 == rc2 == rc3 == 0 and "\tdone\t" in log2 and "\tto run\t" in log3,
          "a changed models/data/*.csv reruns the combination", log1 + log2 + log3)

    # 6. A run-time failure: the wrapper fails `run` for 100Mbps; the other two are done.
    wrapper = os.path.join(tmp, "failing-hilo-sim")
    write_exec(wrapper, "#!/bin/sh\n"
                        "case \"$1 $*\" in\n"
                        "  run*100Mbps*) echo 'injected failure' >&2; exit 1 ;;\n"
                        "esac\n"
                        f"exec '{hilo_sim}' \"$@\"\n")
    fail_grid = ["--grid", f"{BW}=10Mbps,100Mbps,1Gbps", "--out", out, "--jobs", "2"]
    rc, log = run(base + ["--runner", wrapper] + fail_grid)
    failed_log = os.path.join(out, "runs", "bandwidth-100Mbps", "run.log")
    check(rc == 1, f"a failed run makes the sweep exit 1 (got {rc})", log)
    check(failed_log in log, "the failure is reported with its log path")
    check("| injected failure" in log, "the end of the failed run's log is printed", log)
    check(os.path.exists(failed_log) and "injected failure" in open(failed_log).read(),
          "run.log holds the failed run's stderr")
    rows = read(os.path.join(out, "sweep.csv"))
    bad = [r for r in rows if r["combo"] == "bandwidth-100Mbps"]
    check(len(rows) == 5 and len(bad) == 1 and bad[0]["status"] == "failed" and
          bad[0]["exit_code"] == "1" and bad[0]["log"] == "runs/bandwidth-100Mbps/run.log" and
          bad[0]["arm"] == "" and bad[0][BW] == "100Mbps",
          "the failed combination stays in sweep.csv: status failed, exit code 1, its log",
          "\n".join(str(r) for r in bad))
    check(sum(r["status"] == "ok" for r in rows) == 4, "the finished runs are still collected")

    # 6b. Another runner with hilo-sim's CLI (as hilo-emu: "mode" in summary.json, a pid column
    # in workers.csv): the mode becomes a sweep.csv column, the extra column is carried through.
    emu = os.path.join(tmp, "emu-like")
    write_exec(emu, "#!/bin/sh\n"
                    f"'{hilo_sim}' \"$@\" || exit $?\n"
                    "[ \"$1\" = run ] || exit 0\n"
                    "for a; do [ \"$prev\" = --out ] && out=\"$a\"; prev=\"$a\"; done\n"
                    f"exec {PY} - \"$out\" <<'EOF'\n"
                    "import csv, json, sys\n"
                    "d = sys.argv[1]\n"
                    "s = json.load(open(d + '/summary.json'))\n"
                    "s['mode'] = 'emulation-direct'\n"
                    "json.dump(s, open(d + '/summary.json', 'w'))\n"
                    "rows = list(csv.reader(open(d + '/workers.csv')))\n"
                    "rows = [rows[0] + ['pid']] + [r + ['4242'] for r in rows[1:]]\n"
                    "csv.writer(open(d + '/workers.csv', 'w', newline='')).writerows(rows)\n"
                    "EOF\n")
    emu_out = os.path.join(tmp, "emu")
    rc, log = run(base + ["--runner", emu, "--out", emu_out, "--concatenate"])
    rows = read(os.path.join(emu_out, "sweep.csv")) if rc == 0 else []
    workers = read(os.path.join(emu_out, "sweep_workers.csv")) if rc == 0 else []
    check(rc == 0 and rows and all(r.get("mode") == "emulation-direct" for r in rows) and
          workers and all(w.get("pid") == "4242" for w in workers),
          "another runner: its mode is a sweep.csv column, its extra workers.csv column kept",
          log)

    # 7. SIGTERM mid-sweep: 10Mbps finishes, 1Gbps hangs in a grandchild until stopped.
    sig_out = os.path.join(tmp, "sig")
    pids = os.path.join(tmp, "pids")
    flag = os.path.join(tmp, "hang")
    open(flag, "w").close()
    slow = os.path.join(tmp, "slow-hilo-sim")
    write_exec(slow, "#!/bin/sh\n"
                     "case \"$1 $*\" in\n"
                     f"  run*1Gbps*) if [ -e '{flag}' ]; then sleep 300 & "
                     f"echo \"$$ $!\" > '{pids}'; wait; fi ;;\n"
                     "esac\n"
                     f"exec '{hilo_sim}' \"$@\"\n")
    sig_cmd = base + ["--runner", slow, "--grid", f"{BW}=10Mbps,1Gbps", "--out", sig_out,
                      "--jobs", "2"]
    proc = subprocess.Popen(sig_cmd, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    done_key = os.path.join(sig_out, "runs", "bandwidth-10Mbps", "sweep-key.json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (os.path.exists(done_key) and
                                               os.path.exists(pids)):
        time.sleep(0.1)
    ready = os.path.exists(done_key) and os.path.exists(pids)
    check(ready, "the sweep reached 'one run finished, one hanging'")
    proc.send_signal(signal.SIGTERM)
    try:
        log, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        log, _ = proc.communicate()
    check(proc.returncode == 143, f"SIGTERM makes the sweep exit 143 (got {proc.returncode})",
          log)
    if ready:
        shell, grandchild = (int(x) for x in open(pids).read().split())
        check(not alive(shell) and not alive(grandchild),
              "the stopped run's process group is gone (its shell and its `sleep`)")
    rows = read(os.path.join(sig_out, "sweep.csv")) if os.path.exists(
        os.path.join(sig_out, "sweep.csv")) else []
    status = {(r["combo"], r["arm"]): r["status"] for r in rows}
    check(status.get(("bandwidth-10Mbps", "full")) == "ok" and
          status.get(("bandwidth-10Mbps", "hilo-spar")) == "ok" and
          status.get(("bandwidth-1Gbps", "")) == "interrupted",
          "sweep.csv keeps the finished run (ok) and names the stopped one (interrupted)",
          str(status))
    os.remove(flag)
    rc, log = run(sig_cmd)
    check(rc == 0 and "1 already done, 1 to run" in log, "the stopped sweep resumes", log)

    # 8. Dask distributed: a LocalCluster on loopback.
    try:
        import distributed
    except ImportError:
        distributed = None
        print("skip Dask executor check: python3-distributed is not installed "
              "(apt-get install python3-distributed; scripts/setup.sh)", flush=True)
    if distributed is not None:
        # A scheduler on loopback TCP; its worker runs in this process (processes=False starts
        # faster) and starts the runs as child processes, as a remote worker would.
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                           host="127.0.0.1", protocol="tcp://",
                                           dashboard_address=None)
        try:
            dask_out = os.path.join(tmp, "dask")
            rc, log = run(common + ["--grid", f"{BW}=10Mbps,1Gbps", "--out", dask_out,
                                    "--dask", cluster.scheduler_address])
            rows = read(os.path.join(dask_out, "sweep.csv")) if rc == 0 else []
            check(rc == 0 and len(rows) == 4 and all(r["status"] == "ok" for r in rows),
                  f"the sweep on a Dask LocalCluster exits 0 with 4 ok rows (got {rc})", log)
            logs = "".join(open(p).read() for p in
                           glob.glob(os.path.join(dask_out, "runs", "*", "run.log")))
            check(logs.count("on Dask worker tcp://127.0.0.1") == 2,
                  "both runs ran on the cluster's worker", logs[:600])
            with open(os.path.join(dask_out, "sweep.json")) as f:
                meta = json.load(f)
            check("Dask" in meta.get("executor", "") and
                  all("dask_worker" in c for c in meta.get("combinations", [])),
                  "sweep.json names the Dask executor and each run's worker")
        finally:
            cluster.close()
        local_out = os.path.join(tmp, "dask-local")
        rc, log = run(common + ["--grid", f"{BW}=10Mbps,1Gbps", "--out", local_out,
                                "--dask", "local:2"])
        rows = read(os.path.join(local_out, "sweep.csv")) if rc == 0 else []
        check(rc == 0 and len(rows) == 4 and all(r["status"] == "ok" for r in rows),
              f"--dask local:2 starts a LocalCluster and runs the sweep (got {rc})", log)
        check("local Dask cluster (2 worker(s), 2 at a time)" in log,
              "the local cluster's 2 workers are the parallelism the ETA uses", log)
        rc, log = run(common + ["--out", local_out, "--dask", "local:0"])
        check(rc == 2 and "local:N with N >= 1" in log, "--dask local:0 is bad input", log)

    # 9. The one plot style.
    s = pc.arm_style("hilo-spar")
    check(s == pc.arm_style("my-arm", "hilo", "spar") and s["linestyle"] == "-",
          "an arm's style follows its strategy + compressor, not its position or name")
    d = pc.arm_style("delta-spar")
    check(d["color"] == s["color"] and d["marker"] == s["marker"] and d["linestyle"] == "--"
          and d["markerfacecolor"] == "white", "delta-spar: Spar's colour, dashed and hollow")
    check(len({pc.arm_style(a)["color"] for a in ("hilo-spar", "hilo-topk", "hilo-powersgd",
                                                    "hilo-dense", "full")}) == 5,
          "the common arms have distinct colours")
    check(pc.arm_style("some-new-arm") == pc.arm_style("some-new-arm"),
          "an unknown arm gets the same style every time")
    names = pc.matrix_names(24)
    check(names and names[0] == "L0 q.A" and names[11] == "L0 down.B" and
          names[12] == "L1 q.A" and pc.matrix_names(25) is None,
          "matrix names by layer, projection and factor")
    import stats_helper
    m, ci, n = stats_helper.mean_ci([1.0, 2.0, 3.0])
    check(n == 3 and m == 2.0 and abs(ci - 4.302652729911275 / 3 ** 0.5) < 1e-9,
          "the 95% t-interval of three values (t quantile 4.3027 at 2 degrees of freedom)")
    check(abs(stats_helper.t_quantile(200) - 1.9718962236) < 1e-8 and
          abs(stats_helper.t_quantile(7) - 2.3646242516) < 1e-8,
          "t quantiles between and beyond the old table's entries are exact")
    check(pc.mean_ci is stats_helper.mean_ci, "the plotters use the one statistics helper")

    # 10. Plots, from the sweep folder that holds a failed combination too.
    plots = os.path.join(tmp, "plots")
    run_dir = os.path.join(out, "runs", "bandwidth-10Mbps")
    for script, inputs, extra in (
            ("plot_speedup.py", ["sweep.csv"], []),
            ("plot_curves.py", ["sweep_steps.csv"], ["--width", "column"]),
            ("plot_pareto.py", ["sweep.csv", "--steps", "sweep_steps.csv"], []),
            ("plot_pareto.py", ["sweep.csv", "--steps", "sweep_steps.csv"],
             ["--normalize", "--width", "column"]),
            ("plot_allocation.py", ["sweep_allocation.csv"], []),
            ("plot_consistency.py", ["sweep_steps.csv", "sweep_workers.csv"], []),
            ("plot_timeline.py", [run_dir, os.path.join(tmp, "emu", "runs", "base")],
             ["--width", "column"]),
            ("plot_time_to_target.py", ["sweep.csv"], ["--target-share", "0.5"])):
        stem = os.path.join(plots, script[:-3] + ("-" + "-".join(extra) if extra else ""))
        args = [a if a.startswith("--") or os.path.isabs(a) else os.path.join(out, a)
                for a in inputs]
        rc, log = run([PY, os.path.join(ROOT, "scripts", script)] + args + extra +
                      ["--out", stem])
        check(rc == 0, f"{script} {' '.join(extra)} exits 0 (got {rc})", log)
        if script in ("plot_speedup.py", "plot_pareto.py") and not extra:
            check("not plotted" in log and "bandwidth-100Mbps" in log,
                  f"{script} names the failed combination it leaves out", log)
        for ext in (".png", ".pdf"):
            check(os.path.getsize(stem + ext) > 1000 if os.path.exists(stem + ext) else False,
                  f"{script} wrote {os.path.basename(stem)}{ext}")

    # 11. Scenario headers that say reproduce.sh "runs exactly this" show what it runs.
    check_headers()

    # 12a. plot_speedup on two rows per (arm, bandwidth): an error unless --where or --average.
    two = os.path.join(tmp, "two-axes")
    rc, log = run(common + ["--grid", f"{BW}=10Mbps,1Gbps", "--grid", "seed=7,8", "--out", two,
                            "--jobs", "2"])
    check(rc == 0, f"a two-axis sweep runs (got {rc})", log)
    speed = [PY, os.path.join(ROOT, "scripts", "plot_speedup.py"), os.path.join(two, "sweep.csv")]
    rc, log = run(speed + ["--out", os.path.join(plots, "two")])
    check(rc == 2 and "seed vary" in log and "--where 'seed=" in log,
          "plot_speedup refuses to average over another grid column silently", log)
    rc1, log1 = run(speed + ["--where", "seed=7", "--out", os.path.join(plots, "two-seed7")])
    rc2, log2 = run(speed + ["--average", "--out", os.path.join(plots, "two-average")])
    check(rc1 == 0 and rc2 == 0, "--where seed=7 and --average plot it", log1 + log2)

    # 12b. The real hilo-emu as the runner, on loopback (no root needed), validated by hilo-sim.
    if hilo_emu is None:
        print("skip hilo-emu runner check: no HILO_EMU argument", flush=True)
    else:
        emu_out = os.path.join(tmp, "real-emu")
        rc, log = run(base + ["--hilo-sim", hilo_sim, "--hilo-emu", hilo_emu,
                              "--runner", "hilo-emu", "--runner-arg=--network=direct",
                              "--grid", "seed=7,8", "--out", emu_out, "--jobs", "2"])
        rows = read(os.path.join(emu_out, "sweep.csv")) if os.path.exists(
            os.path.join(emu_out, "sweep.csv")) else []
        check(rc == 0 and len(rows) == 4 and
              all(r["status"] == "ok" and r.get("mode") == "emulation-direct" for r in rows),
              f"sweep --runner hilo-emu --runner-arg=--network=direct runs real processes "
              f"(rc {rc})", log)
        with open(os.path.join(emu_out, "sweep.json")) as f:
            meta = json.load(f)
        check(meta["runner"]["path"] == hilo_emu and
              meta["runner"]["args"] == ["--network=direct"],
              "sweep.json names hilo-emu and its arguments")
        rc, log = run(base + ["--hilo-sim", hilo_sim, "--hilo-emu", hilo_emu,
                              "--runner", "hilo-emu", "--grid", "seed=7,x", "--out", emu_out])
        check(rc == 2 and "'x'" in log, "hilo-emu sweeps are validated by hilo-sim first", log)

    if _checks.failures:
        return _checks.finish(f"; files kept in {tmp}")
    shutil.rmtree(tmp)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())
