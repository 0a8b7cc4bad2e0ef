#!/usr/bin/python3
"""Runs a scenario over a grid of `--set` overrides and collects one CSV.

Usage:
  scripts/sweep.py SCENARIO --grid PATH=V1,V2,... [--grid ...] [--zip] [--cross PATH=V1,...]
                   [--set PATH=VALUE ...] --out DIR [--jobs N] [--runner PATH] [--dask ADDRESS]
                   [--timeout-s S] [--dry-run] [--print-commands] [--rerun]

Every --grid names one scenario field by its `hilo-sim --set` path and the values it takes
(comma-separated); the grid is the cartesian product of all --grid lists, or with --zip their
element-wise pairing (all lists the same length). Every --cross axis is crossed with that grid
even under --zip (e.g. --cross seed=1,2,3 repeats a zipped budget grid for three seeds). --set
values apply to every combination.

The runner (--runner, default $HILO_SIM or build/sim/hilo-sim) is any binary with hilo-sim's
`run SCENARIO --set ... --quiet --out DIR` and `validate SCENARIO --print --set ...` commands and
its output files (summary.json, steps.csv, workers.csv, rollouts.csv, allocation.csv), e.g.
hilo-emu. Columns a runner adds (a `pid` in workers.csv, a `mode` in summary.json) are carried
through.

Steps, in order:
  1. every combination is checked with `RUNNER validate --print` BEFORE anything runs: a
     misspelled path or an invalid value is reported for every combination it breaks, and the
     sweep exits 2 without running anything;
  2. each combination runs as `RUNNER run SCENARIO --set ... --quiet --out DIR/runs/<slug>`, in its
     own process group, --jobs at a time (or on a Dask cluster with --dask); stdout and stderr go
     to DIR/runs/<slug>/run.log. A combination is skipped when its folder holds a finished run
     with the same resume key (DIR/runs/<slug>/sweep-key.json): the SHA-256 of the resolved
     scenario, of the runner binary and of every models/data/*.csv (GPU and LLM profiles). So an
     interrupted sweep resumes where it stopped, while a changed scenario, a rebuilt runner or
     changed profile data reruns it; --rerun runs everything again. Progress (done/total,
     failures, ETA) goes to stderr;
  3. DIR/sweep.csv gets a row per (combination, arm): `combo` (the slug), one column per grid
     path (named by the path, holding the value as given), `status` (ok, failed, timeout,
     interrupted, not run), `exit_code` and `log` (the run's log, relative to DIR), the run's
     scenario/seed/llm_profile (and `mode` when summary.json has one), `arm`, and every scalar
     field of summary.json (update_latency_s flattened into update_latency_p50_s,
     update_latency_p99_s, update_latency_max_s). A combination that did not finish has one row,
     with an empty `arm`, so it stays visible. DIR/sweep_steps.csv, DIR/sweep_workers.csv,
     DIR/sweep_rollouts.csv and DIR/sweep_allocation.csv concatenate the finished runs'
     steps.csv, workers.csv, rollouts.csv and allocation.csv with `combo` and the grid columns in
     front (columns missing in some runs are left empty).
     Every CSV is plain (readable by pandas.read_csv without options). Their provenance --
     command, working folder, date, git commit, runner path and SHA-256, data hashes, executor,
     the grid and every combination's status -- is the sidecar DIR/sweep.json.

SIGINT or SIGTERM stops the sweep: every running combination's process group gets SIGTERM (then
SIGKILL after 5 s), queued ones are dropped, and the CSVs and sweep.json are written from what
finished; rerunning the same command resumes.

With --dask SCHEDULER_ADDRESS (e.g. tcp://10.0.0.5:8786) the runs are Dask distributed tasks:
each task starts the runner on a Dask worker, so the workers must see the runner, the scenario
and DIR at the same paths (a shared file system) and the same working folder; validation and
collection stay local, and the cluster's threads set the parallelism (--jobs is not used).

Exit status: 0 when every combination ran, 1 when some failed at run time (each named with its
log; the others still run and are collected), 2 on bad input (nothing runs), 130 on SIGINT and
143 on SIGTERM (finished runs are kept and collected).

Values are split on commas, so a value containing a comma cannot be a grid value (give it with
--set, one sweep per value). Under --zip a list may repeat a value; without it, it may not.
Needs only the Python standard library; --dask also needs Debian's python3-distributed.
"""
import argparse
import concurrent.futures
import csv
import datetime
import glob
import hashlib
import itertools
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RUNNER = os.path.join(REPO_ROOT, "build", "sim", "hilo-sim")
# Profile data the simulator's compute model is built from (part of the resume key).
DATA_GLOB = os.path.join(REPO_ROOT, "models", "data", "*.csv")
# Per-run CSVs concatenated into the sweep folder: run file -> sweep file.
CONCATENATED = [
    ("steps.csv", "sweep_steps.csv"),
    ("workers.csv", "sweep_workers.csv"),
    ("rollouts.csv", "sweep_rollouts.csv"),
    ("allocation.csv", "sweep_allocation.csv"),
]
# Top-level summary.json scalars copied to every row of the run (when present).
RUN_FIELDS = ["scenario", "seed", "llm_profile", "mode"]
# Columns sweep.py itself adds after the grid columns.
STATUS_FIELDS = ["status", "exit_code", "log"]
KEY_FILE = "sweep-key.json"
GRACE_S = 5.0  # SIGTERM -> SIGKILL
POLL_S = 0.2


class BadInput(Exception):
    """An error in the sweep's own arguments (exit 2)."""


def log(msg):
    print(f"[sweep] {msg}", file=sys.stderr, flush=True)


def parse_assignment(text, what):
    """Splits 'path=value' (value may contain '='), rejecting an empty path."""
    if "=" not in text:
        raise BadInput(f"{what} {text!r}: expected PATH=VALUE")
    path, value = text.split("=", 1)
    path = path.strip()
    if not path:
        raise BadInput(f"{what} {text!r}: empty field path")
    return path, value


def parse_grid(specs, what="--grid", seen=None):
    """Returns [(path, [values])] in command-line order."""
    grid = []
    seen = set() if seen is None else seen
    for spec in specs:
        path, values_text = parse_assignment(spec, what)
        if path in seen:
            raise BadInput(f"{what} {spec!r}: path {path!r} is already a grid axis")
        seen.add(path)
        values = [v.strip() for v in values_text.split(",")]
        if not values or any(v == "" for v in values):
            raise BadInput(f"{what} {spec!r}: empty value in the list")
        grid.append((path, values))
    return grid


def expand(grid, zip_axes, cross=()):
    """Returns the list of combinations, each a list of (path, value): the --cross axes (crossed
    with everything, outermost first), then the --grid axes (crossed, or zipped with --zip)."""
    for p, values in list(cross) + ([] if zip_axes else list(grid)):
        if len(set(values)) != len(values):
            raise BadInput(f"{p}: a value is listed twice")
    paths = [p for p, _ in grid]
    if not grid:
        inner = [[]]
    elif zip_axes:
        lengths = {len(v) for _, v in grid}
        if len(lengths) != 1:
            raise BadInput("--zip needs every --grid list to have the same length; got " +
                           ", ".join(f"{p}: {len(v)}" for p, v in grid))
        inner = [list(zip(paths, row)) for row in zip(*[v for _, v in grid])]
        if len({tuple(c) for c in inner}) != len(inner):
            raise BadInput("--zip: the same combination appears twice")
    else:
        inner = [list(zip(paths, row)) for row in itertools.product(*[v for _, v in grid])]
    cross_paths = [p for p, _ in cross]
    outer = [list(zip(cross_paths, row)) for row in itertools.product(*[v for _, v in cross])]
    return [o + i for o in outer for i in inner]


def slug_part(text):
    text = text.replace("%", "pct")
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-") or "x"


def axis_labels(paths):
    """Short labels of grid paths for slugs: the last path component, or as many trailing
    components as it takes to tell the paths apart (arms[hilo-spar].budget -> hilo-spar.budget)."""
    def last(p, n):
        # arms[hilo-spar].budget -> [arms, hilo-spar, budget]: an index or key names its element.
        parts = [x for x in re.split(r"[.\[\]]+", p) if x]
        return ".".join(parts[-n:])

    labels = {}
    for p in paths:
        for n in range(1, 64):
            label = last(p, n)
            if sum(1 for q in paths if last(q, n) == label) == 1 or label == last(p, 64):
                break
        labels[p] = slug_part(label)
    return labels


def compact_slug(combo):
    """A shorter slug: consecutive axes that end in the same field share one label
    (arms[a].budget=1%, arms[b].budget=2% -> budget-1pct-2pct)."""
    parts = []
    for p, v in combo:
        name = slug_part([x for x in re.split(r"[.\[\]]+", p) if x][-1])
        if parts and parts[-1][0] == name:
            parts[-1][1].append(slug_part(v))
        else:
            parts.append((name, [slug_part(v)]))
    return "_".join(n + "-" + "-".join(vs) for n, vs in parts)


def make_slugs(combos, paths):
    """A readable, unique, filesystem-safe folder name per combination (at most ~100
    characters: a long one is first made compact, then cut and given a digest)."""
    labels = axis_labels(paths)
    slugs = []
    for combo in combos:
        if not combo:
            slug = "base"
        else:
            slug = "_".join(f"{labels[p]}-{slug_part(v)}" for p, v in combo)
        if len(slug) > 100:
            slug = compact_slug(combo)
        if len(slug) > 100:
            digest = hashlib.sha1(repr(combo).encode()).hexdigest()[:8]
            slug = slug[:90] + "-" + digest
        slugs.append(slug)
    if len(set(slugs)) != len(slugs):  # e.g. "1.6%" and "1.6pct": disambiguate by content
        slugs = [s + "-" + hashlib.sha1(repr(c).encode()).hexdigest()[:8]
                 for s, c in zip(slugs, combos)]
    return slugs


def set_args(pairs):
    args = []
    for path, value in pairs:
        args += ["--set", f"{path}={value}"]
    return args


def run_command(runner, scenario, fixed, combo, out_dir):
    return [runner, "run", scenario] + set_args(fixed + combo) + ["--quiet", "--out", out_dir]


def validate(runner, scenario, fixed, combo):
    """Returns (ok, resolved_text_or_error_message)."""
    cmd = [runner, "validate", scenario, "--print"] + set_args(fixed + combo)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return False, (proc.stderr.strip() or proc.stdout.strip() or
                       f"{os.path.basename(runner)} validate exited {proc.returncode}")
    # --print writes a short description, then the resolved scenario from its `name:` line on.
    text = proc.stdout
    m = re.search(r"^name: ", text, flags=re.M)
    return True, text[m.start():] if m else text


def report_invalid(runner, scenario, fixed, grid, bad, jobs):
    """Explains invalid combinations: the runner stops at the first error, so every grid value is
    also checked on its own (with the --set values) to name each bad value once; combinations
    whose values are all valid alone are reported with their own message."""
    ok, msg = validate(runner, scenario, fixed, [])
    if not ok:
        print(f"sweep.py: the scenario with the --set values (no grid value) is invalid:\n{msg}\n",
              file=sys.stderr)
        return
    singles = [(p, v) for p, values in grid for v in values]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        alone = list(pool.map(lambda pv: validate(runner, scenario, fixed, [pv]), singles))
    bad_values = {pv: msg for pv, (ok, msg) in zip(singles, alone) if not ok}
    for (p, v), msg in bad_values.items():
        print(f"sweep.py: --grid {p}: value {v!r} is invalid:\n{msg}\n", file=sys.stderr)
    by_message = {}
    for e, msg in bad:
        if not any(pv in bad_values for pv in e["combo"]):
            by_message.setdefault(msg, []).append(e)
    for msg, es in by_message.items():
        which = "; ".join(" ".join(f"{p}={v}" for p, v in e["combo"]) or "(no grid)"
                          for e in es[:4])
        more = f" and {len(es) - 4} more" if len(es) > 4 else ""
        print(f"sweep.py: invalid combination(s) {which}{more}:\n{msg}\n", file=sys.stderr)


# --- provenance and the resume key ---------------------------------------------------------------

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_hashes():
    """{path relative to the repository: sha256} of the profile data files."""
    return {os.path.relpath(p, REPO_ROOT): sha256_file(p) for p in sorted(glob.glob(DATA_GLOB))}


def resume_key(resolved, runner_sha256, data):
    return {
        "resolved_sha256": hashlib.sha256(resolved.strip().encode()).hexdigest(),
        "runner_sha256": runner_sha256,
        "data_sha256": data,
    }


def read_key(run_dir):
    try:
        with open(os.path.join(run_dir, KEY_FILE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def is_complete(run_dir, key):
    """True when run_dir holds a finished run made with exactly this resume key."""
    return os.path.exists(os.path.join(run_dir, "summary.json")) and read_key(run_dir) == key


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def git_state():
    def git(*args):
        try:
            return subprocess.run(["git", "-C", REPO_ROOT] + list(args), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return ""
    commit = git("rev-parse", "HEAD")
    return {"commit": commit or "unknown",
            "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no"))}


# --- process groups ------------------------------------------------------------------------------

def _exited(proc):
    """True when proc has exited, WITHOUT reaping it: while it is unreaped its pid (and so its
    process-group id) cannot be reused, so signalling the group stays safe."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap_group(proc):
    """SIGKILL to whatever is left in proc's group (sent while the leader is unreaped, so the
    group id is still ours), reaps the leader, and waits until the group is gone (a killed
    grandchild takes a moment to exit)."""
    _signal_group(proc, signal.SIGKILL)
    rc = proc.wait()
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)  # signal 0: only asks whether the group still exists
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.02)
    return rc


def _stop_group(proc, grace_s):
    """SIGTERM to proc's process group, SIGKILL to whatever is left after grace_s, then reaps."""
    _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while not _exited(proc) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _reap_group(proc)


def _finish_group(proc):
    """After the leader exited: kills anything it left in its group, then reaps it."""
    return _reap_group(proc)


def _start(cmd, cwd, log_path, extra_header=""):
    logf = open(log_path, "w")
    logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + extra_header)
    logf.flush()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        logf.write(f"[sweep] could not start: {e}\n")
        logf.close()
        return None, None
    return proc, logf


# --- executors -----------------------------------------------------------------------------------
# Both run each combination's command with stdout/stderr in its run.log and report
# (entry, status, exit_code, seconds) with status "exited" (exit_code says how), "timeout" or
# "interrupted".

class LocalExecutor:
    """Runs commands on this machine, `jobs` at a time, each in its own process group."""

    def __init__(self, jobs, timeout_s):
        self.jobs, self.timeout_s = jobs, timeout_s
        self.queue, self.running = [], []

    def describe(self):
        return f"local, {self.jobs} at a time"

    def submit(self, entry, cmd, cwd):
        self.queue.append((entry, cmd, cwd))

    def poll(self):
        done = []
        still = []
        for entry, proc, logf, t0 in self.running:
            secs = time.monotonic() - t0
            if _exited(proc):
                rc = _finish_group(proc)
                logf.close()
                done.append((entry, "exited", rc, secs))
            elif self.timeout_s is not None and secs > self.timeout_s:
                logf.write(f"\n[sweep] stopped after {self.timeout_s:g} s (--timeout-s)\n")
                logf.flush()
                rc = _stop_group(proc, GRACE_S)
                logf.close()
                done.append((entry, "timeout", rc, secs))
            else:
                still.append((entry, proc, logf, t0))
        self.running = still
        while self.queue and len(self.running) < self.jobs:
            entry, cmd, cwd = self.queue.pop(0)
            proc, logf = _start(cmd, cwd, entry["log_path"])
            if proc is None:
                done.append((entry, "exited", 127, 0.0))
                continue
            self.running.append((entry, proc, logf, time.monotonic()))
        return done

    def idle(self):
        return not self.queue and not self.running

    def stop(self):
        """Stops every running command; returns (stopped, never started) entries."""
        for _, proc, _, _ in self.running:
            _signal_group(proc, signal.SIGTERM)
        stopped = []
        deadline = time.monotonic() + GRACE_S
        for entry, proc, logf, t0 in self.running:
            while not _exited(proc) and time.monotonic() < deadline:
                time.sleep(0.05)
            rc = _finish_group(proc)
            logf.write("\n[sweep] stopped by a signal to the sweep\n")
            logf.close()
            stopped.append((entry, "interrupted", rc, time.monotonic() - t0))
        never = [e for e, _, _ in self.queue]
        self.running, self.queue = [], []
        return stopped, never

    def close(self):
        pass


def dask_run_task(cmd, cwd, log_path, timeout_s, stop_event, grace_s):
    """A Dask task: runs cmd on the worker in its own process group, logging to log_path; stops
    it when the sweep sets the distributed Event `stop_event` or after timeout_s. Returns
    (status, exit_code, seconds, worker address)."""
    import distributed  # on the worker

    try:
        worker = distributed.get_worker().address
    except ValueError:
        worker = "?"
    header = (f"[sweep] on Dask worker {worker} (host {socket.gethostname()}, "
              f"pid {os.getpid()})\n")
    t0 = time.monotonic()
    proc, logf = _start(cmd, cwd, log_path, header)
    if proc is None:
        return "exited", 127, 0.0, worker
    stop = distributed.Event(stop_event)
    status = "exited"
    while not _exited(proc):
        if stop.wait(timeout=POLL_S * 2):
            logf.write("\n[sweep] stopped by a signal to the sweep\n")
            status = "interrupted"
            break
        if timeout_s is not None and time.monotonic() - t0 > timeout_s:
            logf.write(f"\n[sweep] stopped after {timeout_s:g} s (--timeout-s)\n")
            status = "timeout"
            break
    logf.flush()
    rc = _stop_group(proc, grace_s) if status != "exited" else _finish_group(proc)
    logf.close()
    return status, rc, time.monotonic() - t0, worker


class DaskExecutor:
    """Runs commands as tasks of a Dask distributed cluster (see dask_run_task)."""

    def __init__(self, address, timeout_s):
        try:
            import distributed
        except ImportError:
            raise BadInput("--dask needs the Python package `distributed` "
                           "(Debian: apt-get install python3-distributed; scripts/setup.sh)")
        self.distributed = distributed
        try:
            self.client = distributed.Client(address, timeout=20)
        except (OSError, TimeoutError) as e:
            raise BadInput(f"--dask {address}: cannot reach the scheduler: {e}")
        self.address = address
        self.timeout_s = timeout_s
        self.stop_name = "hilo-sweep-stop-" + uuid.uuid4().hex
        self.stop_event = distributed.Event(self.stop_name, client=self.client)
        self.futures = {}

    def describe(self):
        n = len(self.client.scheduler_info().get("workers", {}))
        return f"Dask scheduler {self.address} ({n} worker(s))"

    def submit(self, entry, cmd, cwd):
        fut = self.client.submit(dask_run_task, cmd, cwd, entry["log_path"], self.timeout_s,
                                 self.stop_name, GRACE_S, pure=False,
                                 key=f"hilo-run-{entry['slug']}-{uuid.uuid4().hex[:8]}")
        self.futures[fut] = entry

    def _result(self, fut, entry):
        try:
            status, rc, secs, worker = fut.result()
            entry["worker"] = worker
            return entry, status, rc, secs
        except Exception as e:  # the task itself failed (worker lost, ...)
            with open(entry["log_path"], "a") as f:
                f.write(f"\n[sweep] Dask task failed: {e!r}\n")
            return entry, "exited", None, 0.0

    def poll(self):
        done = []
        for fut in [f for f in self.futures if f.done()]:
            done.append(self._result(fut, self.futures.pop(fut)))
        return done

    def idle(self):
        return not self.futures

    def stop(self):
        self.stop_event.set()
        waiting = [f for f in self.futures if f.status == "pending"]
        # Tasks already running stop their runs and return; queued ones are cancelled.
        stopped, never = [], []
        deadline = time.monotonic() + GRACE_S + 10
        while any(not f.done() for f in self.futures) and time.monotonic() < deadline:
            time.sleep(0.1)
        for fut, entry in self.futures.items():
            if fut.done() and fut.status == "finished":
                e, status, rc, secs = self._result(fut, entry)
                stopped.append((e, "interrupted" if status == "interrupted" else status, rc, secs))
            else:
                never.append(entry)
        self.client.cancel([f for f in self.futures if not f.done()] + waiting)
        self.futures = {}
        return stopped, never

    def close(self):
        try:
            self.stop_event.clear()
            self.client.close()
        except Exception:
            pass


# --- collection ----------------------------------------------------------------------------------

def fmt_duration(s):
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def flatten_arm(arm):
    row = {}
    for key, value in arm.items():
        if key == "name":
            row["arm"] = value
        elif isinstance(value, dict):
            stem = key[:-2] if key.endswith("_s") else key
            suffix = "_s" if key.endswith("_s") else ""
            for sub, v in value.items():
                row[f"{stem}_{sub}{suffix}"] = v
        elif isinstance(value, list):
            continue  # not a scalar
        else:
            row[key] = value
    return row


def csv_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return v


def write_csv(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([csv_value(r.get(h, "")) for h in header])
    os.replace(tmp, path)


def collect(out, entries, grid_paths):
    """Writes sweep.csv (every combination, with its status) and the concatenated CSVs of the
    finished runs. Returns the number of sweep.csv rows of finished runs."""
    header = ["combo"] + grid_paths + STATUS_FIELDS
    rows, nok = [], 0

    def add(row, key, value):
        name = key if key not in grid_paths and key not in STATUS_FIELDS else "summary." + key
        row[name] = value
        if name not in header:
            header.append(name)

    for e in entries:
        base = {"combo": e["slug"], "status": e["status"], "exit_code": e.get("exit_code", ""),
                "log": os.path.relpath(e["log_path"], out)}
        base.update(dict(e["combo"]))
        summary = None
        summary_path = os.path.join(e["dir"], "summary.json")
        if e["status"] in ("ok", "failed") and os.path.exists(summary_path):
            try:
                with open(summary_path) as f:
                    summary = json.load(f)
            except ValueError:
                summary = None
        if summary is None:
            rows.append(base)
            continue
        for key in RUN_FIELDS:
            if key in summary:
                add(base, key, summary[key])
        for arm in summary.get("arms", []) or [{}]:
            row = dict(base)
            for key, value in flatten_arm(arm).items():
                add(row, key, value)
            rows.append(row)
            nok += e["status"] == "ok"
    write_csv(os.path.join(out, "sweep.csv"), header, rows)

    finished = [e for e in entries if e["status"] == "ok"]
    for run_file, sweep_file in CONCATENATED:
        cat_header, cat_rows = ["combo"] + grid_paths, []
        found = False
        for e in finished:
            path = os.path.join(e["dir"], run_file)
            if not os.path.exists(path):
                continue
            found = True
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                names = [c if c not in grid_paths and c != "combo" else "run." + c
                         for c in (reader.fieldnames or [])]
                for c in names:
                    if c not in cat_header:
                        cat_header.append(c)
                for r in reader:
                    row = {"combo": e["slug"]}
                    row.update(dict(e["combo"]))
                    for c, v in r.items():
                        if c is None:  # more cells than header names: keep, under a name
                            c, v = "extra", ";".join(v)
                        row[c if c not in grid_paths and c != "combo" else "run." + c] = v
                    cat_rows.append(row)
        out_path = os.path.join(out, sweep_file)
        if found:
            write_csv(out_path, cat_header, cat_rows)
        elif os.path.exists(out_path):
            os.remove(out_path)  # nothing finished any more: no stale concatenation
    return nok


def print_commands(entries, runner, scenario, fixed):
    for e in entries:
        cmd = run_command(runner, scenario, fixed, e["combo"], e["dir"])
        print(" ".join(shlex.quote(c) for c in cmd))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Example: scripts/sweep.py scenarios/quickstart.textproto "
               "--grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps "
               "--set workload.steps=5 --out results/sweeps/bw --jobs 2",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", help="scenario file (Protobuf text format)")
    parser.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2,...",
                        help="a grid axis: scenario field path and its values (repeatable)")
    parser.add_argument("--zip", action="store_true",
                        help="pair the --grid lists element-wise instead of the cartesian product")
    parser.add_argument("--cross", action="append", default=[], metavar="PATH=V1,V2,...",
                        help="an axis crossed with the whole grid, even under --zip (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="an override applied to every combination (repeatable)")
    parser.add_argument("--out", required=True, help="sweep folder (runs/, sweep.csv, ...)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    parser.add_argument("--runner", "--hilo-sim", dest="runner",
                        default=os.environ.get("HILO_SIM", DEFAULT_RUNNER),
                        help="binary with hilo-sim's run/validate CLI (default $HILO_SIM or "
                             "build/sim/hilo-sim; e.g. build/emu/hilo-emu)")
    parser.add_argument("--dask", metavar="SCHEDULER_ADDRESS",
                        help="run on this Dask distributed cluster (shared file system)")
    parser.add_argument("--timeout-s", type=float, default=None,
                        help="stop a run after this many seconds and count it as failed")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate and list the combinations, run nothing")
    parser.add_argument("--print-commands", action="store_true",
                        help="print each combination's run command (no validation), run nothing")
    parser.add_argument("--rerun", action="store_true",
                        help="run every combination even when a finished run exists")
    args = parser.parse_args()

    try:
        if args.jobs < 1:
            raise BadInput("--jobs must be at least 1")
        if args.timeout_s is not None and args.timeout_s <= 0:
            raise BadInput("--timeout-s must be positive")
        if not os.path.isfile(args.scenario):
            raise BadInput(f"scenario {args.scenario!r} not found")
        seen = set()
        grid = parse_grid(args.grid, "--grid", seen)
        cross = parse_grid(args.cross, "--cross", seen)
        fixed = [parse_assignment(s, "--set") for s in args.set]
        clash = {p for p, _ in fixed} & seen
        if clash:
            raise BadInput(f"{', '.join(sorted(clash))}: both a grid axis and a --set")
        combos = expand(grid, args.zip, cross)
        if not args.print_commands and not (os.path.isfile(args.runner) and
                                            os.access(args.runner, os.X_OK)):
            raise BadInput(f"runner {args.runner!r} not found or not executable (build it: "
                           "scripts/build.sh --target hilo-sim, or pass --runner)")
    except BadInput as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        return 2

    grid_paths = [p for p, _ in cross] + [p for p, _ in grid]
    slugs = make_slugs(combos, grid_paths)
    out = os.path.abspath(args.out)
    entries = [{"slug": s, "combo": c, "dir": os.path.join(out, "runs", s)}
               for s, c in zip(slugs, combos)]
    for e in entries:
        e["log_path"] = os.path.join(e["dir"], "run.log")
    total = len(entries)
    runner = os.path.abspath(args.runner)

    if args.print_commands:
        print_commands(entries, runner, args.scenario, fixed)
        return 0

    # 1. Validate everything before running anything.
    log(f"validating {total} combination(s) of {args.scenario}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda e: validate(runner, args.scenario, fixed, e["combo"]),
                                entries))
    bad = [(e, msg) for e, (ok, msg) in zip(entries, results) if not ok]
    if bad:
        report_invalid(runner, args.scenario, fixed, cross + grid, bad, args.jobs)
        print(f"sweep.py: {len(bad)} of {total} combination(s) invalid; nothing was run",
              file=sys.stderr)
        return 2
    runner_sha256 = sha256_file(runner)
    data = data_hashes()
    for e, (_, resolved) in zip(entries, results):
        e["key"] = resume_key(resolved, runner_sha256, data)

    if args.dry_run:
        for e in entries:
            state = "done" if is_complete(e["dir"], e["key"]) else "to run"
            print(f"{e['slug']}\t{state}\t" + " ".join(f"{p}={v}" for p, v in e["combo"]))
        return 0

    try:
        executor = (DaskExecutor(args.dask, args.timeout_s) if args.dask else
                    LocalExecutor(args.jobs, args.timeout_s))
    except BadInput as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        return 2

    os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    manifest = {
        "about": "provenance of the CSVs in this folder (sweep.csv, sweep_*.csv), written by "
                 "scripts/sweep.py",
        "command": " ".join(shlex.quote(a) for a in [sys.argv[0]] + sys.argv[1:]),
        "cwd": os.getcwd(),
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "git": git_state(),
        "runner": {"path": runner, "sha256": runner_sha256},
        "data_sha256": data,
        "executor": executor.describe(),
        "scenario": args.scenario,
        "grid": [{"path": p, "values": v} for p, v in grid],
        "cross": [{"path": p, "values": v} for p, v in cross],
        "zip": args.zip,
        "set": [f"{p}={v}" for p, v in fixed],
        "combinations": [],
    }

    # 2. Run what is not already done.
    todo = [e for e in entries if args.rerun or not is_complete(e["dir"], e["key"])]
    for e in entries:
        if e in todo:
            e["status"] = "not run"
        else:
            e["status"], e["exit_code"] = "ok", 0
    skipped = total - len(todo)
    log(f"{total} combination(s): {skipped} already done, {len(todo)} to run, "
        f"{executor.describe()}; runs in {os.path.join(out, 'runs')}")

    stop_signal = []

    def on_signal(signum, _frame):
        if not stop_signal:
            log(f"{signal.Signals(signum).name}: stopping the runs")
        stop_signal.append(signum)

    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    failures, durations = [], []
    done = skipped
    start = time.monotonic()

    def finish(entry, status, rc, secs):
        nonlocal done
        entry["exit_code"] = "" if rc is None else rc
        if status == "exited" and rc == 0 and \
                os.path.exists(os.path.join(entry["dir"], "summary.json")):
            entry["status"] = "ok"
            write_json(os.path.join(entry["dir"], KEY_FILE), entry["key"])
        elif status == "interrupted":
            entry["status"] = "interrupted"
            return
        else:
            entry["status"] = "timeout" if status == "timeout" else "failed"
            why = ("timed out" if status == "timeout" else
                   f"exit {rc}" if rc is not None else "task lost")
            failures.append((entry, why))
            log(f"FAILED {entry['slug']} ({why}); log: {entry['log_path']}")
        durations.append(secs)
        done += 1
        remaining = total - done
        mean = sum(durations) / len(durations)
        par = args.jobs if not args.dask else max(1, len(todo))
        eta = mean * remaining / min(par, max(remaining, 1))
        log(f"{done}/{total} done, {len(failures)} failed, elapsed "
            f"{fmt_duration(time.monotonic() - start)}, ETA "
            f"{fmt_duration(eta) if remaining else '0s'}  [{entry['slug']}: {secs:.1f} s]")

    try:
        for e in todo:
            os.makedirs(e["dir"], exist_ok=True)
            for stale in ("summary.json", KEY_FILE):  # a run of another scenario or binary
                if os.path.exists(os.path.join(e["dir"], stale)):
                    os.remove(os.path.join(e["dir"], stale))
            executor.submit(e, run_command(runner, args.scenario, fixed, e["combo"], e["dir"]),
                            os.getcwd())
        while not executor.idle() and not stop_signal:
            for result in executor.poll():
                finish(*result)
            if not executor.idle() and not stop_signal:
                time.sleep(POLL_S)
        if stop_signal:
            stopped, never = executor.stop()
            for result in stopped:
                finish(*result)
            for e in never:
                e["status"] = "not run"
    finally:
        executor.close()
        for s, h in old_handlers.items():
            signal.signal(s, h)

    # 3. Collect.
    nrows = collect(out, entries, grid_paths)
    manifest["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds")
    manifest["combinations"] = [
        {"slug": e["slug"], "overrides": {p: v for p, v in e["combo"]}, "status": e["status"],
         "exit_code": e.get("exit_code", ""), "log": os.path.relpath(e["log_path"], out),
         **({"dask_worker": e["worker"]} if "worker" in e else {})}
        for e in entries]
    write_json(os.path.join(out, "sweep.json"), manifest)
    if stop_signal:
        kept = sum(e["status"] == "ok" for e in entries)
        log(f"interrupted: {kept} finished run(s) kept and collected in "
            f"{os.path.join(out, 'sweep.csv')}; rerun the same command to resume")
        return 128 + stop_signal[0]
    log(f"wrote {os.path.join(out, 'sweep.csv')} ({nrows} rows of finished runs) and the "
        f"sweep_*.csv concatenations in {fmt_duration(time.monotonic() - start)}")
    if failures:
        print(f"sweep.py: {len(failures)} of {total} run(s) failed:", file=sys.stderr)
        for e, why in failures:
            print(f"  {e['slug']} ({why}): {e['log_path']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
