#!/usr/bin/python3
"""Runs a scenario over a grid of `--set` overrides and collects one CSV.

Usage:
  scripts/sweep.py SCENARIO --grid PATH=V1,V2,... [--grid ...] [--zip] [--set PATH=VALUE ...]
                   --out DIR [--jobs N] [--hilo-sim PATH] [--timeout-s S] [--dry-run] [--rerun]

Every --grid names one scenario field by its `hilo-sim --set` path and the values it takes
(comma-separated); the grid is the cartesian product of all --grid lists, or with --zip their
element-wise pairing (all lists the same length). --set values apply to every combination.

Steps, in order:
  1. every combination is checked with `hilo-sim validate --print` BEFORE anything runs: a
     misspelled path or an invalid value is reported for every combination it breaks, and the
     sweep exits 2 without running anything;
  2. each combination runs as `hilo-sim run SCENARIO --set ... --quiet --out DIR/runs/<slug>`,
     --jobs at a time; stdout and stderr go to DIR/runs/<slug>/run.log. A combination whose
     summary.json exists and whose resolved.textproto equals what validation resolved is skipped,
     so an interrupted sweep resumes where it stopped (and a changed scenario file reruns;
     --rerun runs everything again). Progress (done/total, failures, ETA) goes to stderr;
  3. DIR/sweep.csv gets a row per (combination, arm): `combo` (the slug), one column per grid
     path (named by the path, holding the value as given), the run's scenario/seed/llm_profile,
     `arm`, and every scalar field of summary.json (update_latency_s flattened into
     update_latency_p50_s, update_latency_p99_s, update_latency_max_s). DIR/sweep_steps.csv,
     DIR/sweep_workers.csv and DIR/sweep_allocation.csv concatenate the runs' steps.csv,
     workers.csv and allocation.csv with `combo` and the grid columns in front.
     DIR/sweep.json records the command, the grid and every combination's slug and status.

Exit status: 0 when every combination ran, 1 when some failed at run time (each named with its
log; the others still run and are collected), 2 on bad input (nothing runs), 130 when
interrupted (finished runs are kept and collected).

Values are split on commas, so a value containing a comma cannot be a grid value (give it with
--set, one sweep per value). Under --zip a list may repeat a value; without it, it may not.
Runs only the Python standard library.
"""
import argparse
import concurrent.futures
import csv
import hashlib
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_HILO_SIM = os.path.join(REPO_ROOT, "build", "sim", "hilo-sim")
# Per-run CSVs concatenated into the sweep folder: run file -> sweep file.
CONCATENATED = [
    ("steps.csv", "sweep_steps.csv"),
    ("workers.csv", "sweep_workers.csv"),
    ("allocation.csv", "sweep_allocation.csv"),
]
# Top-level summary.json scalars copied to every row of the run.
RUN_FIELDS = ["scenario", "seed", "llm_profile"]


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


def parse_grid(specs):
    """Returns [(path, [values])] in command-line order."""
    grid = []
    seen = set()
    for spec in specs:
        path, values_text = parse_assignment(spec, "--grid")
        if path in seen:
            raise BadInput(f"--grid {spec!r}: path {path!r} is already a grid axis")
        seen.add(path)
        values = [v.strip() for v in values_text.split(",")]
        if not values or any(v == "" for v in values):
            raise BadInput(f"--grid {spec!r}: empty value in the list")
        grid.append((path, values))
    return grid


def expand(grid, zip_axes):
    """Returns the list of combinations, each a list of (path, value) in grid order."""
    if not grid:
        return [[]]
    paths = [p for p, _ in grid]
    if not zip_axes:
        for p, values in grid:
            if len(set(values)) != len(values):
                raise BadInput(f"--grid {p}: a value is listed twice")
    if zip_axes:
        lengths = {len(v) for _, v in grid}
        if len(lengths) != 1:
            raise BadInput("--zip needs every --grid list to have the same length; got " +
                           ", ".join(f"{p}: {len(v)}" for p, v in grid))
        rows = zip(*[v for _, v in grid])
    else:
        rows = itertools.product(*[v for _, v in grid])
    combos = [list(zip(paths, row)) for row in rows]
    if len({tuple(c) for c in combos}) != len(combos):
        raise BadInput("--zip: the same combination appears twice")
    return combos


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


def make_slugs(combos, paths):
    """A readable, unique, filesystem-safe folder name per combination."""
    labels = axis_labels(paths)
    slugs = []
    for combo in combos:
        if not combo:
            slug = "base"
        else:
            slug = "_".join(f"{labels[p]}-{slug_part(v)}" for p, v in combo)
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


def validate(hilo_sim, scenario, fixed, combo):
    """Returns (ok, resolved_text_or_error_message)."""
    cmd = [hilo_sim, "validate", scenario, "--print"] + set_args(fixed + combo)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return False, (proc.stderr.strip() or proc.stdout.strip() or
                       f"hilo-sim validate exited {proc.returncode}")
    # --print writes a short description, then the resolved scenario from its `name:` line on.
    text = proc.stdout
    m = re.search(r"^name: ", text, flags=re.M)
    return True, text[m.start():] if m else text


def report_invalid(hilo_sim, scenario, fixed, grid, bad, jobs):
    """Explains invalid combinations: hilo-sim stops at the first error, so every grid value is
    also checked on its own (with the --set values) to name each bad value once; combinations
    whose values are all valid alone are reported with their own message."""
    ok, msg = validate(hilo_sim, scenario, fixed, [])
    if not ok:
        print(f"sweep.py: the scenario with the --set values (no grid value) is invalid:\n{msg}\n",
              file=sys.stderr)
        return
    singles = [(p, v) for p, values in grid for v in values]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        alone = list(pool.map(lambda pv: validate(hilo_sim, scenario, fixed, [pv]), singles))
    if not grid:
        alone = []
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


def run_one(hilo_sim, scenario, fixed, combo, out_dir, timeout_s):
    """Runs one combination; returns (returncode or None on timeout, seconds)."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = ([hilo_sim, "run", scenario] + set_args(fixed + combo) +
           ["--quiet", "--out", out_dir])
    start = time.monotonic()
    with open(os.path.join(out_dir, "run.log"), "w") as logf:
        logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        logf.flush()
        try:
            proc = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT, timeout=timeout_s)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            logf.write(f"\n[sweep] killed after {timeout_s} s (--timeout-s)\n")
            rc = None
    return rc, time.monotonic() - start


def is_complete(run_dir, resolved):
    """True when run_dir holds a finished run of exactly this resolved scenario."""
    if not os.path.exists(os.path.join(run_dir, "summary.json")):
        return False
    try:
        with open(os.path.join(run_dir, "resolved.textproto")) as f:
            return f.read().strip() == resolved.strip()
    except OSError:
        return False


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
    """Writes sweep.csv and the concatenated CSVs from every finished run."""
    header, rows = ["combo"] + grid_paths, []
    for e in entries:
        summary_path = os.path.join(e["dir"], "summary.json")
        if not os.path.exists(summary_path):
            continue
        with open(summary_path) as f:
            summary = json.load(f)
        base = {"combo": e["slug"]}
        base.update(dict(e["combo"]))
        for key in RUN_FIELDS:
            if key in summary:
                name = key if key not in grid_paths else "summary." + key
                base[name] = summary[key]
                if name not in header:
                    header.append(name)
        for arm in summary.get("arms", []):
            row = dict(base)
            for key, value in flatten_arm(arm).items():
                name = key if key not in grid_paths else "summary." + key
                row[name] = value
                if name not in header:
                    header.append(name)
            rows.append(row)
    write_csv(os.path.join(out, "sweep.csv"), header, rows)

    for run_file, sweep_file in CONCATENATED:
        cat_header, cat_rows = None, []
        for e in entries:
            path = os.path.join(e["dir"], run_file)
            if not os.path.exists(os.path.join(e["dir"], "summary.json")) or \
                    not os.path.exists(path):
                continue
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                if cat_header is None:
                    cat_header = ["combo"] + grid_paths + [
                        c if c not in grid_paths else "run." + c for c in reader.fieldnames]
                for r in reader:
                    row = {"combo": e["slug"]}
                    row.update(dict(e["combo"]))
                    for c, v in r.items():
                        row[c if c not in grid_paths else "run." + c] = v
                    cat_rows.append(row)
        if cat_header is not None:
            write_csv(os.path.join(out, sweep_file), cat_header, cat_rows)
    return len(rows)


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
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="an override applied to every combination (repeatable)")
    parser.add_argument("--out", required=True, help="sweep folder (runs/, sweep.csv, ...)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    parser.add_argument("--hilo-sim", default=os.environ.get("HILO_SIM", DEFAULT_HILO_SIM),
                        help="simulator binary (default $HILO_SIM or build/sim/hilo-sim)")
    parser.add_argument("--timeout-s", type=float, default=None,
                        help="kill a run after this many seconds and count it as failed")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate and list the combinations, run nothing")
    parser.add_argument("--rerun", action="store_true",
                        help="run every combination even when a finished run exists")
    args = parser.parse_args()

    try:
        if args.jobs < 1:
            raise BadInput("--jobs must be at least 1")
        if not os.path.isfile(args.scenario):
            raise BadInput(f"scenario {args.scenario!r} not found")
        if not (os.path.isfile(args.hilo_sim) and os.access(args.hilo_sim, os.X_OK)):
            raise BadInput(f"simulator {args.hilo_sim!r} not found or not executable "
                           "(build it: cmake --build build --target hilo-sim, or pass --hilo-sim)")
        grid = parse_grid(args.grid)
        fixed = [parse_assignment(s, "--set") for s in args.set]
        clash = {p for p, _ in fixed} & {p for p, _ in grid}
        if clash:
            raise BadInput(f"{', '.join(sorted(clash))}: both a --grid axis and a --set")
        combos = expand(grid, args.zip)
    except BadInput as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        return 2

    grid_paths = [p for p, _ in grid]
    slugs = make_slugs(combos, grid_paths)
    out = os.path.abspath(args.out)
    entries = [{"slug": s, "combo": c, "dir": os.path.join(out, "runs", s)}
               for s, c in zip(slugs, combos)]
    total = len(entries)
    hilo_sim = os.path.abspath(args.hilo_sim)

    # 1. Validate everything before running anything.
    log(f"validating {total} combination(s) of {args.scenario}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda e: validate(hilo_sim, args.scenario, fixed, e["combo"]),
                                entries))
    bad = [(e, msg) for e, (ok, msg) in zip(entries, results) if not ok]
    if bad:
        report_invalid(hilo_sim, args.scenario, fixed, grid, bad, args.jobs)
        print(f"sweep.py: {len(bad)} of {total} combination(s) invalid; nothing was run",
              file=sys.stderr)
        return 2
    for e, (_, resolved) in zip(entries, results):
        e["resolved"] = resolved

    if args.dry_run:
        for e in entries:
            state = "done" if is_complete(e["dir"], e["resolved"]) else "to run"
            print(f"{e['slug']}\t{state}\t" + " ".join(f"{p}={v}" for p, v in e["combo"]))
        return 0

    os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    manifest = {
        "command": " ".join(shlex.quote(a) for a in [sys.argv[0]] + sys.argv[1:]),
        "scenario": args.scenario,
        "grid": [{"path": p, "values": v} for p, v in grid],
        "zip": args.zip,
        "set": [f"{p}={v}" for p, v in fixed],
        "combinations": [],
    }

    # 2. Run what is not already done, --jobs at a time.
    todo = [e for e in entries if args.rerun or not is_complete(e["dir"], e["resolved"])]
    for e in entries:
        e["status"] = "to run" if e in todo else "skipped (done)"
    skipped = total - len(todo)
    log(f"{total} combination(s): {skipped} already done, {len(todo)} to run, "
        f"{args.jobs} at a time; runs in {os.path.join(out, 'runs')}")
    failures = []
    done = skipped
    durations = []
    start = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    try:
        futures = {}
        for e in todo:
            summary = os.path.join(e["dir"], "summary.json")
            if os.path.exists(summary):  # a stale run of another scenario version
                os.remove(summary)
            futures[pool.submit(run_one, hilo_sim, args.scenario, fixed, e["combo"], e["dir"],
                                args.timeout_s)] = e
        for fut in concurrent.futures.as_completed(futures):
            e = futures[fut]
            rc, secs = fut.result()
            durations.append(secs)
            done += 1
            ok = rc == 0 and os.path.exists(os.path.join(e["dir"], "summary.json"))
            log_path = os.path.join(e["dir"], "run.log")
            if ok:
                e["status"] = "ok"
            else:
                why = "timed out" if rc is None else f"exit {rc}"
                e["status"] = f"failed ({why})"
                failures.append((e, why, log_path))
                log(f"FAILED {e['slug']} ({why}); log: {log_path}")
            remaining = total - done
            mean = sum(durations) / len(durations)
            eta = mean * remaining / min(args.jobs, max(remaining, 1))
            log(f"{done}/{total} done, {len(failures)} failed, elapsed "
                f"{fmt_duration(time.monotonic() - start)}, ETA "
                f"{fmt_duration(eta) if remaining else '0s'}  [{e['slug']}: {secs:.1f} s]")
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        log("interrupted: queued runs cancelled; finished runs are kept (rerun the same command "
            "to resume)")
        collect(out, entries, grid_paths)
        return 130
    pool.shutdown()

    # 3. Collect.
    nrows = collect(out, entries, grid_paths)
    manifest["combinations"] = [
        {"slug": e["slug"], "overrides": {p: v for p, v in e["combo"]}, "status": e["status"]}
        for e in entries]
    with open(os.path.join(out, "sweep.json.tmp"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    os.replace(os.path.join(out, "sweep.json.tmp"), os.path.join(out, "sweep.json"))
    log(f"wrote {os.path.join(out, 'sweep.csv')} ({nrows} rows) and sweep_steps.csv, "
        f"sweep_workers.csv, sweep_allocation.csv in {fmt_duration(time.monotonic() - start)}")
    if failures:
        print(f"sweep.py: {len(failures)} of {total} run(s) failed:", file=sys.stderr)
        for e, why, log_path in failures:
            print(f"  {e['slug']} ({why}): {log_path}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
