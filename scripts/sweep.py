#!/usr/bin/python3
"""Runs a scenario over a grid of `--set` overrides and collects one CSV.

Usage:
  scripts/sweep.py SCENARIO --grid PATH=V1,V2,... [--grid ...] [--zip] [--cross PATH=V1,...]
                   [--set PATH=VALUE ...] [--out DIR] [--jobs N]
                   [--runner hilo-sim|hilo-emu|PATH] [--runner-arg ARG ...]
                   [--hilo-sim PATH] [--hilo-emu PATH] [--dask ADDRESS|local[:N]]
                   [--timeout-s S] [--concatenate] [--dry-run] [--print-commands] [--rerun]

Every --grid names one scenario field by its `hilo-sim --set` path and the values it takes
(comma-separated); the grid is the cartesian product of all --grid lists, or with --zip their
element-wise pairing (all lists the same length). Every --cross axis is crossed with that grid
even under --zip (e.g. --cross seed=1,2,3 repeats a zipped budget grid for three seeds). --set
values apply to every combination. Without --out the sweep goes to
results/runs/sweep-<scenario file name>/ (ignored by git).

The runner (--runner) is hilo-sim (default), hilo-emu (real processes; e.g. with
--runner-arg=--network=direct for loopback without root), or the path of any binary with
hilo-sim's `run SCENARIO --set ... --quiet --out DIR` command and output files (summary.json,
steps.csv, workers.csv, rollouts.csv, allocation.csv). --hilo-sim and --hilo-emu locate the
binaries (defaults $HILO_SIM / $HILO_EMU, else build/sim/). Columns a runner adds (a `pid` in
workers.csv, a `mode` in summary.json) are carried through.

Steps, in order:
  1. every combination is checked with `hilo-sim validate --print` (whatever the runner) BEFORE
     anything runs: a misspelled path or an invalid value is reported for every combination it
     breaks, and the sweep exits 2 without running anything;
  2. each combination runs as `RUNNER run SCENARIO --set ... [RUNNER-ARGS] --quiet --out
     DIR/runs/<slug>`, in its own process group, --jobs at a time (or on a Dask cluster with
     --dask); stdout and stderr go to DIR/runs/<slug>/run.log, and the end of a failed run's log
     is printed. A combination is skipped when its folder holds a finished run with the same
     resume key (DIR/runs/<slug>/sweep-key.json): the SHA-256 of the resolved scenario, of the
     runner binary and of every models/data/*.csv (GPU and LLM profiles), and the runner
     arguments. So an interrupted sweep resumes where it stopped, while a changed scenario, a
     rebuilt runner or changed profile data reruns it; --rerun runs everything again. Progress
     (done/total, failures, ETA from the mean run time and the number of parallel slots) goes
     to stderr;
  3. DIR/sweep.csv gets a row per (combination, arm): `combo` (the slug), one column per grid
     path (named by the path, holding the value as given), `status` (ok, failed, timeout,
     interrupted, not run), `exit_code` and `log` (the run's log, relative to DIR), the run's
     scenario/seed/llm_profile (and `mode` when summary.json has one), `arm`, and every scalar
     field of summary.json (update_latency_s flattened into update_latency_p50_s,
     update_latency_p99_s, update_latency_max_s). A combination that did not finish has one row,
     with an empty `arm`, so it stays visible. The per-step, per-worker, per-rollout and
     allocation CSVs stay in each run's folder; the plotters, given DIR/sweep_steps.csv (or
     sweep_workers.csv, sweep_rollouts.csv, sweep_allocation.csv), join the finished runs' files
     with `combo` and the grid columns in front, and --concatenate writes those joined files.
     Every CSV is plain (readable by pandas.read_csv without options). Their provenance --
     command, working folder, date, git commit, runner path, SHA-256 and arguments, data hashes,
     executor, the grid and every combination's status -- is the sidecar DIR/sweep.json.

SIGINT or SIGTERM stops the sweep: every running combination's process group gets SIGTERM (then
SIGKILL after 5 s), queued ones are dropped, and the CSVs and sweep.json are written from what
finished; rerunning the same command resumes.

With --dask SCHEDULER_ADDRESS (e.g. tcp://10.0.0.5:8786) the runs are Dask distributed tasks:
each task starts the runner on a Dask worker, so the workers must see the runner, the scenario
and DIR at the same paths (a shared file system) and the same working folder; validation and
collection stay local, and the cluster's threads set the parallelism. --dask local[:N] starts a
LocalCluster of N single-threaded workers here (default N: --jobs) and closes it at the end.

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
import socket
import subprocess
import sys
import time

import sweep_engine as engine
from sweep_engine import BadInput, REPO_ROOT

# Profile data the simulator's compute model is built from (part of the resume key).
DATA_GLOB = os.path.join(REPO_ROOT, "models", "data", "*.csv")
# Per-run CSVs that --concatenate joins into the sweep folder (and that the plotters join on the fly
# when given a sweep_*.csv path that does not exist): run file -> sweep file.
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
RUNNERS = ("hilo-sim", "hilo-emu")


def log(msg):
    engine.log(msg, "sweep")


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


def run_command(runner, scenario, fixed, combo, out_dir, runner_args=()):
    return ([runner, "run", scenario] + set_args(fixed + combo) + list(runner_args) +
            ["--quiet", "--out", out_dir])


def validate(hilo_sim, scenario, fixed, combo):
    """Checks one combination with `hilo-sim validate --print` (whatever the runner: hilo-emu runs
    the same scenarios and has no validate command). Returns (ok, resolved text or error)."""
    cmd = [hilo_sim, "validate", scenario, "--print"] + set_args(fixed + combo)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return False, (proc.stderr.strip() or proc.stdout.strip() or
                       f"{os.path.basename(hilo_sim)} validate exited {proc.returncode}")
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

def run_hosts(entries):
    """The distinct machines (summary.json's "host": CPU, ISA path, BLAS kernel, LibTorch) that
    made the finished runs: one under a local executor, possibly several under Dask."""
    seen = {}
    for e in entries:
        try:
            with open(os.path.join(e["dir"], "summary.json")) as f:
                host = json.load(f).get("host")
        except (OSError, ValueError):
            continue
        if host:
            seen.setdefault(json.dumps(host, sort_keys=True), host)
    return [seen[k] for k in sorted(seen)]


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


# --- collection ----------------------------------------------------------------------------------

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


def collect(out, entries, grid_paths, concat=False):
    """Writes sweep.csv (every combination, with its status) and, with concat, the concatenated
    CSVs of the finished runs. Returns the number of sweep.csv rows of finished runs."""
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
        out_path = os.path.join(out, sweep_file)
        cat_header, cat_rows = concatenate(finished, grid_paths, run_file)
        if concat and cat_rows:
            write_csv(out_path, cat_header, cat_rows)
        elif os.path.exists(out_path):
            os.remove(out_path)  # not asked for, or nothing finished: no stale concatenation
    return nok


def concatenate(finished, grid_paths, run_file):
    """(header, rows) of run_file (e.g. steps.csv) of every finished run, with `combo` and the grid
    columns in front. finished: [{"slug", "combo": [(path, value)], "dir"}]."""
    cat_header, cat_rows = ["combo"] + grid_paths, []
    for e in finished:
        path = os.path.join(e["dir"], run_file)
        if not os.path.exists(path):
            continue
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
    return cat_header, cat_rows


def concatenate_sweep(sweep_dir, run_file):
    """(header, rows) of run_file over the finished runs of the sweep in sweep_dir, from its
    sweep.json (what the plotters read when a sweep has no sweep_*.csv); None without one."""
    try:
        with open(os.path.join(sweep_dir, "sweep.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    grid_paths = [a["path"] for a in meta.get("cross", []) + meta.get("grid", [])]
    finished = [{"slug": c["slug"], "combo": list(c.get("overrides", {}).items()),
                 "dir": os.path.join(sweep_dir, "runs", c["slug"])}
                for c in meta.get("combinations", []) if c.get("status") == "ok"]
    return concatenate(finished, grid_paths, run_file)


def print_commands(entries, runner, scenario, fixed, runner_args):
    for e in entries:
        cmd = run_command(runner, scenario, fixed, e["combo"], e["dir"], runner_args)
        print(" ".join(shlex.quote(c) for c in cmd))


def resolve_runner(value, args):
    """The runner binary: `hilo-sim` or `hilo-emu` (the --hilo-sim / --hilo-emu path), or a path
    to any binary with hilo-sim's `run` command."""
    if value in RUNNERS:
        return getattr(args, value.replace("-", "_"))
    return value


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Examples:\n"
               "  scripts/sweep.py scenarios/quickstart.textproto "
               "--grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps "
               "--set workload.steps=5 --jobs 2\n"
               "  scripts/sweep.py tests/scripts/tiny.textproto --runner hilo-emu "
               "--runner-arg=--network=direct --grid seed=1,2",
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
    parser.add_argument("--out", help="sweep folder (runs/, sweep.csv, sweep.json); default "
                                      "results/runs/sweep-<scenario name>")
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs in parallel (default 1; with --dask local, its workers)")
    parser.add_argument("--runner", default="hilo-sim", metavar="hilo-sim|hilo-emu|PATH",
                        help="what runs each combination: hilo-sim (default), hilo-emu, or the "
                             "path of a binary with hilo-sim's `run` command")
    parser.add_argument("--runner-arg", action="append", default=[], metavar="ARG",
                        help="an argument added to every run command, e.g. "
                             "--runner-arg=--network=direct for hilo-emu (repeatable)")
    engine.add_binary_args(parser, "hilo-sim", "hilo-emu")
    parser.add_argument("--dask", metavar="ADDRESS|local[:N]",
                        help="run on this Dask distributed cluster (shared file system), or on a "
                             "LocalCluster of N workers started here (default N: --jobs)")
    parser.add_argument("--timeout-s", type=float, default=None,
                        help="stop a run after this many seconds and count it as failed")
    parser.add_argument("--concatenate", action="store_true",
                        help="also write sweep_steps.csv, sweep_workers.csv, sweep_rollouts.csv "
                             "and sweep_allocation.csv (the plotters join the runs' CSVs "
                             "themselves when these are absent)")
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
        runner = resolve_runner(args.runner, args)
        if (os.path.basename(runner) == "hilo-sim" and
                args.hilo_sim == engine.default_binary("hilo-sim")):
            args.hilo_sim = runner  # --runner PATH/hilo-sim also validates
        if not args.print_commands:
            engine.check_binary(runner, args.runner if args.runner in RUNNERS else "runner")
            engine.check_binary(args.hilo_sim, "hilo-sim")  # validates whatever the runner
    except BadInput as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        return 2

    grid_paths = [p for p, _ in cross] + [p for p, _ in grid]
    slugs = make_slugs(combos, grid_paths)
    stem = os.path.splitext(os.path.basename(args.scenario))[0]
    out = os.path.abspath(args.out or engine.default_out("sweep-" + stem))
    entries = [{"slug": s, "combo": c, "dir": os.path.join(out, "runs", s)}
               for s, c in zip(slugs, combos)]
    for e in entries:
        e["log_path"] = os.path.join(e["dir"], "run.log")
    total = len(entries)
    runner = os.path.abspath(runner)
    hilo_sim = os.path.abspath(args.hilo_sim)
    runner_args = list(args.runner_arg)

    if args.print_commands:
        print_commands(entries, runner, args.scenario, fixed, runner_args)
        return 0

    # 1. Validate everything before running anything (through hilo-sim, whatever the runner).
    log(f"validating {total} combination(s) of {args.scenario}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda e: validate(hilo_sim, args.scenario, fixed, e["combo"]),
                                entries))
    bad = [(e, msg) for e, (ok, msg) in zip(entries, results) if not ok]
    if bad:
        report_invalid(hilo_sim, args.scenario, fixed, cross + grid, bad, args.jobs)
        print(f"sweep.py: {len(bad)} of {total} combination(s) invalid; nothing was run",
              file=sys.stderr)
        return 2
    runner_sha256 = sha256_file(runner)
    data = data_hashes()
    for e, (_, resolved) in zip(entries, results):
        e["key"] = resume_key(resolved, runner_sha256, data)
        if runner_args:  # the same runner with other arguments is another run
            e["key"]["runner_args"] = runner_args

    if args.dry_run:
        for e in entries:
            state = "done" if is_complete(e["dir"], e["key"]) else "to run"
            print(f"{e['slug']}\t{state}\t" + " ".join(f"{p}={v}" for p, v in e["combo"]))
        return 0

    try:
        executor = engine.make_executor(args.jobs, args.timeout_s, args.dask)
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
        "runner": {"path": runner, "sha256": runner_sha256, "args": runner_args},
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
    for e in todo:
        os.makedirs(e["dir"], exist_ok=True)
        for stale in ("summary.json", KEY_FILE):  # a run of another scenario or binary
            if os.path.exists(os.path.join(e["dir"], stale)):
                os.remove(os.path.join(e["dir"], stale))
        e["cmd"] = run_command(runner, args.scenario, fixed, e["combo"], e["dir"], runner_args)

    def on_finish(e):
        if e["status"] == "ok" and not os.path.exists(os.path.join(e["dir"], "summary.json")):
            e["status"], e["why"] = "failed", "no summary.json"
        if e["status"] == "ok":
            write_json(os.path.join(e["dir"], KEY_FILE), e["key"])

    start = time.monotonic()
    stop_signal = engine.run_all(todo, executor, "sweep", on_finish)
    failures = [e for e in todo if e["status"] in ("failed", "timeout")]

    # 3. Collect.
    nrows = collect(out, entries, grid_paths, args.concatenate)
    manifest["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds")
    manifest["combinations"] = [
        {"slug": e["slug"], "overrides": {p: v for p, v in e["combo"]}, "status": e["status"],
         "exit_code": e.get("exit_code", ""), "log": os.path.relpath(e["log_path"], out),
         **({"dask_worker": e["worker"]} if "worker" in e else {})}
        for e in entries]
    manifest["hosts"] = run_hosts(entries)
    write_json(os.path.join(out, "sweep.json"), manifest)
    if stop_signal:
        kept = sum(e["status"] == "ok" for e in entries)
        log(f"interrupted: {kept} finished run(s) kept and collected in "
            f"{os.path.join(out, 'sweep.csv')}; rerun the same command to resume")
        return 128 + stop_signal
    log(f"wrote {os.path.join(out, 'sweep.csv')} ({nrows} rows of finished runs) in "
        f"{engine.fmt_duration(time.monotonic() - start)}")
    if failures:
        print(f"sweep.py: {len(failures)} of {total} run(s) failed:", file=sys.stderr)
        for e in failures:
            print(f"  {e['slug']} ({e.get('why', e['status'])}): {e['log_path']}",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
