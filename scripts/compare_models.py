#!/usr/bin/python3
"""Runs one scenario under both network models and compares them arm by arm.

Usage:
  scripts/compare_models.py SCENARIO [--set PATH=VALUE ...] [--out DIR] [--hilo-sim PATH]
                            [--csv FILE] [--timeout-s S]

Each model runs as `hilo-sim run SCENARIO --set network.model=M --set ... --quiet
--out DIR/M` (DIR defaults to results/runs/compare/<scenario file name>). The table printed has,
per arm: update latency p50 and p99 and mean step time under each model with their ratio
(flow / packet), the update transfer time p50 (a worker's receive time minus the learner's
publish time, from workers.csv and steps.csv), and the wall seconds each model spent on the arm
(timing.json). The whole run's wall time per model closes the table.

--csv appends one row per arm (scenario file, overrides, arm, and every figure of the table) to
FILE, writing a header when FILE is new: results tables are built from such rows.

Exit status: 0 when both runs succeeded, 1 when a run failed (its log is named), 2 on bad input.
Runs only the Python standard library.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

import sweep_engine as engine
from hilo_runs import ratio, transfer_times
from sweep_engine import REPO_ROOT

MODELS = ("packet", "flow")


def log(msg):
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def run_model(args, model, out_dir):
    """Runs hilo-sim under `model`; returns (summary, timing, transfers, wall seconds)."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = [args.hilo_sim, "run", args.scenario, "--quiet", "--out", out_dir,
           "--set", f"network.model={model}"]
    for s in args.set:
        cmd += ["--set", s]
    log_path = os.path.join(out_dir, "run.log")
    log(f"{model}: {' '.join(cmd)}")
    start = time.monotonic()
    with open(log_path, "w") as logf:
        try:
            proc = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT,
                                  timeout=args.timeout_s)
        except subprocess.TimeoutExpired:
            log(f"{model}: timed out after {args.timeout_s} s (log: {log_path})")
            return None
    wall = time.monotonic() - start
    if proc.returncode != 0:
        tail = engine.log_tail(log_path).rstrip()
        log(f"{model}: hilo-sim exited {proc.returncode} (log: {log_path})" +
            ("\n  | " + tail.replace("\n", "\n  | ") if tail and proc.returncode != 2 else ""))
        if proc.returncode == 2:
            with open(log_path) as f:
                sys.stderr.write(f.read())
            sys.exit(2)
        return None
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out_dir, "timing.json")) as f:
        timing = {a["name"]: a for a in json.load(f)["arms"]}
    return summary, timing, transfer_times(out_dir, include_resync=False), wall


def main():
    parser = argparse.ArgumentParser(
        description="Run a scenario under the packet and the flow network model and compare.")
    parser.add_argument("scenario")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="hilo-sim override, applied to both runs (repeatable)")
    parser.add_argument("--out", help="output folder (default results/runs/compare/<name>)")
    engine.add_binary_args(parser, "hilo-sim")
    parser.add_argument("--csv", help="append one row per arm to this CSV file")
    parser.add_argument("--timeout-s", type=float, default=None, help="limit per run")
    args = parser.parse_args()

    models = MODELS  # the reference first
    if not os.path.isfile(args.scenario):
        parser.error(f"no such scenario file: {args.scenario}")
    if not os.access(args.hilo_sim, os.X_OK):
        parser.error(f"hilo-sim not found at {args.hilo_sim} (build it, or pass --hilo-sim)")
    for s in args.set:
        if "=" not in s or s.startswith("network.model="):
            parser.error(f"--set {s!r}: expected PATH=VALUE, and not network.model")
    name = os.path.splitext(os.path.basename(args.scenario))[0]
    out = args.out or os.path.join(REPO_ROOT, "results", "runs", "compare", name)

    results = {}
    for model in models:
        r = run_model(args, model, os.path.join(out, model))
        if r is None:
            return 1
        results[model] = r
    ref, alt = models
    (s_ref, t_ref, x_ref, w_ref), (s_alt, t_alt, x_alt, w_alt) = results[ref], results[alt]

    header = ["arm", f"p50 {ref}", f"p50 {alt}", "ratio", f"p99 {ref}", f"p99 {alt}", "ratio",
              f"step {ref}", f"step {alt}", "ratio", f"xfer50 {ref}", f"xfer50 {alt}", "ratio",
              f"wall {ref}", f"wall {alt}"]
    rows = []
    for arm_ref, arm_alt in zip(s_ref["arms"], s_alt["arms"]):
        arm = arm_ref["name"]
        lat_ref, lat_alt = arm_ref["update_latency_s"], arm_alt["update_latency_s"]
        xr = statistics.median(x_ref.get(arm, [0.0]))
        xa = statistics.median(x_alt.get(arm, [0.0]))
        rows.append({
            "arm": arm,
            "p50_ref": lat_ref["p50"], "p50_alt": lat_alt["p50"],
            "p50_ratio": ratio(lat_alt["p50"], lat_ref["p50"]),
            "p99_ref": lat_ref["p99"], "p99_alt": lat_alt["p99"],
            "p99_ratio": ratio(lat_alt["p99"], lat_ref["p99"]),
            "step_ref": arm_ref["step_time_s_mean"], "step_alt": arm_alt["step_time_s_mean"],
            "step_ratio": ratio(arm_alt["step_time_s_mean"], arm_ref["step_time_s_mean"]),
            "xfer_ref": xr, "xfer_alt": xa, "xfer_ratio": ratio(xa, xr),
            "wall_ref": t_ref[arm]["wall_s"], "wall_alt": t_alt[arm]["wall_s"],
            "window_limited": arm_ref.get("window_limited", False),
        })

    print(f"{args.scenario}" + ("  " + " ".join("--set " + s for s in args.set) if args.set
                                 else ""))
    print("  ".join(f"{h:>12}" if i else f"{h:<14}" for i, h in enumerate(header)))
    for r in rows:
        cells = [r["arm"][:14]]
        for k in ("p50", "p99", "step", "xfer"):
            cells += [f"{r[k + '_ref']:.4f}", f"{r[k + '_alt']:.4f}", f"{r[k + '_ratio']:.3f}"]
        cells += [f"{r['wall_ref']:.1f}", f"{r['wall_alt']:.1f}"]
        print("  ".join(f"{c:>12}" if i else f"{c:<14}" for i, c in enumerate(cells)))
    print(f"wall seconds, whole run: {ref} {w_ref:.1f}, {alt} {w_alt:.1f} "
          f"({w_ref / w_alt if w_alt > 0 else float('nan'):.1f}x)")
    if any(r["window_limited"] for r in rows):
        print("note: some connections are window-limited (summary.json window_limited)")

    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["scenario", "overrides", "arm",
                            "p50_packet_s", "p50_flow_s", "p50_ratio",
                            "p99_packet_s", "p99_flow_s", "p99_ratio",
                            "step_packet_s", "step_flow_s", "step_ratio",
                            "xfer_p50_packet_s", "xfer_p50_flow_s", "xfer_ratio",
                            "wall_arm_packet_s", "wall_arm_flow_s",
                            "wall_run_packet_s", "wall_run_flow_s", "window_limited"])
            for r in rows:
                w.writerow([os.path.relpath(args.scenario, REPO_ROOT), " ".join(args.set),
                            r["arm"],
                            f"{r['p50_ref']:.6g}", f"{r['p50_alt']:.6g}", f"{r['p50_ratio']:.4f}",
                            f"{r['p99_ref']:.6g}", f"{r['p99_alt']:.6g}", f"{r['p99_ratio']:.4f}",
                            f"{r['step_ref']:.6g}", f"{r['step_alt']:.6g}",
                            f"{r['step_ratio']:.4f}",
                            f"{r['xfer_ref']:.6g}", f"{r['xfer_alt']:.6g}",
                            f"{r['xfer_ratio']:.4f}",
                            f"{r['wall_ref']:.2f}", f"{r['wall_alt']:.2f}",
                            f"{w_ref:.2f}", f"{w_alt:.2f}",
                            int(r["window_limited"])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
