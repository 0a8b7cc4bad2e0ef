#!/usr/bin/python3
"""Reruns the committed quickstart and teaching runs and compares them with the committed files.

Usage:
  scripts/check_reproduction.py [--hilo-sim PATH] [--only NAME[,NAME...]] [--work DIR]
                                [--committed-root DIR] [--list]

What reproduces, and how closely (the tolerance this project states, measured in
results/quality/reproduction.md):
  - every timing and byte column (update latency p50/p99/max, step time, simulated time, wire and
    real bytes per update, the fraction of the adapter's bytes) and every count (hash
    mismatches, resyncs, versions lost, workers at the final hash): exactly, on every host;
  - full sync's final quality: to 1e-5 relative (it goes through the tiny model's BLAS, whose
    kernel OpenBLAS picks for the CPU; seen equal to 7 digits across hosts);
  - a compressed arm's final quality: within QUALITY_TOL relative. Compressed arms amplify
    last-bit differences of the tiny model's arithmetic (a different gradient direction ships),
    so they reproduce bit for bit on one host and kernel, and within this tolerance across them.
A summary.json's "host" block names the machine that made it; the report prints both hosts.

Exit 0 when every case reproduces, 1 when one does not (each difference named: case, arm,
field, committed and fresh values, the rule), 2 on bad arguments or a run that failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep_engine as engine  # noqa: E402

ROOT = engine.REPO_ROOT
QUALITY_TOL = 0.10  # a compressed arm's final quality, relative (results/quality/reproduction.md)
FULL_TOL = 1e-5  # full sync's final quality, relative
EXACT = ["wire_bytes_per_update_mean", "real_bytes_per_update_mean", "fraction_of_adapter_bytes",
         "update_latency_s", "step_time_s_mean", "sim_time_s", "hash_mismatches", "resyncs",
         "versions_lost", "workers_at_final_hash", "steps"]

# name -> (scenario, extra hilo-sim arguments, committed folder)
CASES = {
    "quickstart": ("scenarios/quickstart.textproto", [], "results/quickstart"),
    "teaching-01": ("scenarios/teaching/01-full-sync-on-a-wan.textproto", [],
                    "results/teaching/01-full-sync-on-a-wan"),
    "teaching-02": ("scenarios/teaching/02-apply-the-decoded-gradient.textproto", [],
                    "results/teaching/02-apply-the-decoded-gradient"),
    "teaching-03": ("scenarios/teaching/03-error-feedback.textproto", [],
                    "results/teaching/03-error-feedback"),
    "teaching-04": ("scenarios/teaching/04-stragglers.textproto", [],
                    "results/teaching/04-stragglers"),
    "teaching-04-all-h100": ("scenarios/teaching/04-stragglers.textproto",
                             ["--set", "workers[1].gpu=H100-SXM"], "results/teaching/04-all-h100"),
    "teaching-05": ("scenarios/teaching/05-faults.textproto", [], "results/teaching/05-faults"),
}


def differences(committed, fresh):
    """(arm, field, committed value, fresh value, rule) for every field of the two summaries
    that differs beyond its rule; arms matched by name."""
    out = []
    old = {a["name"]: a for a in committed["arms"]}
    new = {a["name"]: a for a in fresh["arms"]}
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            out.append((name, "arm", name in old, name in new, "present in both"))
            continue
        a, b = old[name], new[name]
        for field in EXACT:
            if field in a and a.get(field) != b.get(field):
                out.append((name, field, a.get(field), b.get(field), "exact"))
        qa, qb = a.get("final_quality"), b.get("final_quality")
        tol = FULL_TOL if a.get("strategy") == "full" else QUALITY_TOL
        if qa is None or qb is None:
            if qa != qb:
                out.append((name, "final_quality", qa, qb, "present in both"))
        elif abs(qb - qa) > tol * max(abs(qa), 1e-12):
            out.append((name, "final_quality", qa, qb, f"relative {tol:g}"))
    return out


def host_line(summary):
    h = summary.get("host") or {}
    if not h:
        return "not recorded"
    return (f"{h.get('cpu_model') or '?'}, ISA path {h.get('isa_path') or '?'}, BLAS "
            f"{h.get('blas_core') or '?'} ({h.get('blas_config') or '?'}), LibTorch "
            f"{h.get('libtorch_version') or '?'}")


def run_case(hilo_sim, name, work):
    scenario, extra, _ = CASES[name]
    out = os.path.join(work, name)
    cmd = [hilo_sim, "run", os.path.join(ROOT, scenario), "--quiet", "--out", out] + extra
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise engine.BadInput(f"{name}: {' '.join(cmd)} exited {r.returncode}: "
                              f"{r.stderr.strip()[-500:]}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    engine.add_binary_args(ap, "hilo-sim")
    ap.add_argument("--only", default="", help="comma list of cases (default: all; --list)")
    ap.add_argument("--work", help="where the fresh runs go (default: a temporary folder)")
    ap.add_argument("--committed-root", default=ROOT,
                    help="the checkout whose committed files are compared (default: this one)")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    args = ap.parse_args()
    if args.list:
        for name, (scenario, extra, folder) in CASES.items():
            print(f"{name}\t{scenario} {' '.join(extra)}\t{folder}/summary.json")
        return 0
    names = [n for n in args.only.split(",") if n] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    try:
        if unknown:
            raise engine.BadInput(f"--only: unknown case(s) {unknown}; known: {list(CASES)}")
        engine.check_binary(args.hilo_sim, "hilo-sim")
        with tempfile.TemporaryDirectory(prefix="hilo-repro-") as tmp:
            work = args.work or tmp
            failed = 0
            for name in names:
                with open(os.path.join(args.committed_root, CASES[name][2],
                                       "summary.json")) as f:
                    committed = json.load(f)
                fresh = run_case(args.hilo_sim, name, work)
                diffs = differences(committed, fresh)
                print(f"{name}: {'reproduces' if not diffs else 'DIFFERS'} "
                      f"({len(fresh['arms'])} arms)")
                if diffs:
                    failed += 1
                    print(f"  committed on: {host_line(committed)}\n  fresh on:     "
                          f"{host_line(fresh)}")
                    for arm, field, a, b, rule in diffs:
                        print(f"  arm {arm}: {field}: committed {a}, fresh {b} ({rule})")
    except engine.BadInput as e:
        print(f"check_reproduction.py: {e}", file=sys.stderr)
        return 2
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
