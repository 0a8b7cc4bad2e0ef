#!/usr/bin/python3
"""Reruns the simulator side of results/validation/emulation.csv against its emulation side.

Usage:
  scripts/validation_sim_rerun.py [--csv results/validation/emulation.csv] [--hilo-sim PATH]
                                  [--only SUBSTRING ...] [--out DIR] [--md FILE] [--rows-csv FILE]

The emulation side (Linux kernel TCP through emulated links) does not depend on the simulator's
TCP, so a change to sim/net can be checked row by row without rerunning it: for every row of the
CSV this runs `hilo-sim run <the row's scenario> --set <the row's overrides> --quiet`, reads the
update latency p50 / p99 from summary.json, and prints a table with the simulator's earlier
numbers (as the CSV has them), the new ones and the emulation's, with sim/emu ratios against the
goals (p50 within 10%, p99 within 20%; 1%-loss rows p50 within 25%). Rows whose emulation side
recorded its latency net of compute overrun (emu_latency_net_p50_s, from summary.json's
update_latency_net_s) add the simulator's new p50 / p99 over it (`net ratio`; "-" for older rows).
Every row names the commit each side was measured at. --only keeps rows whose label contains one of the substrings.
Runs only the Python standard library.
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys

import sweep_engine as engine

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario_for(label):
    if label.startswith("link-"):
        return "scenarios/validation/emu-link.textproto"
    base = label.split("-8")[0] if label.endswith("-8") else label
    return f"scenarios/validation/emu-{base}.textproto"


def meta_value(path, key):
    if not os.path.exists(path):
        return "?"
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    return "?"


def mark(ratio, tolerance):
    return f"{ratio:.3f}" + ("" if abs(ratio - 1) <= tolerance else " !")


def net_cell(n, p50_tol):
    """The simulator's p50 and p99 over the emulation's net of compute overrun, or "-"."""
    if n["emu_net_p50"] != n["emu_net_p50"]:  # nan: the row predates the net figure
        return "-"
    return (f"{mark(n['after_p50'] / n['emu_net_p50'], p50_tol)} / "
            f"{mark(n['after_p99'] / n['emu_net_p99'], 0.2)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", default="results/validation/emulation.csv")
    parser.add_argument("--meta", default="results/validation/emulation-meta.txt")
    engine.add_binary_args(parser, "hilo-sim")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--out", default="results/runs/validation-sim-rerun")
    parser.add_argument("--md", help="write the table here (default stdout)")
    parser.add_argument("--rows-csv", help="append one row per rerun to this CSV")
    args = parser.parse_args()
    try:
        engine.check_binary(args.hilo_sim, "hilo-sim")
    except engine.BadInput as e:
        print(f"validation_sim_rerun.py: {e}", file=sys.stderr)
        return 2
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if args.only:
        rows = [r for r in rows if any(o in r["label"] for o in args.only)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=REPO_ROOT).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "--", "sim"], cwd=REPO_ROOT).returncode != 0
    sim_commit = commit + (" (with uncommitted sim/ changes)" if dirty else "")
    emu_commit = meta_value(args.meta, "commit")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    out_rows = []
    for r in rows:
        scenario = scenario_for(r["label"])
        sets = [a for o in r["overrides"].split() for a in ("--set", o)]
        out = os.path.join(args.out, r["label"])
        cmd = [args.hilo_sim, "run", scenario, *sets, "--quiet", "--out", out]
        print("[rerun] " + " ".join(cmd), file=sys.stderr, flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        arm = next(a for a in summary["arms"] if a["name"] == r["arm"])
        new = {
            "label": r["label"], "arm": r["arm"],
            "emu_p50": float(r["emu_latency_p50_s"]), "emu_p99": float(r["emu_latency_p99_s"]),
            "before_p50": float(r["sim_latency_p50_s"]),
            "before_p99": float(r["sim_latency_p99_s"]),
            "after_p50": arm["update_latency_s"]["p50"], "after_p99": arm["update_latency_s"]["p99"],
            "emu_net_p50": float(r.get("emu_latency_net_p50_s") or "nan"),
            "emu_net_p99": float(r.get("emu_latency_net_p99_s") or "nan"),
            "sim_commit": sim_commit, "emu_commit": emu_commit, "date": date,
        }
        out_rows.append(new)
        if args.rows_csv:
            fresh = not os.path.exists(args.rows_csv)
            with open(args.rows_csv, "a", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(new))
                if fresh:
                    w.writeheader()
                w.writerow(new)
    lines = [
        "| row | emu p50 s | sim before | ratio | sim now | ratio | emu p99 s | sim before | ratio "
        "| sim now | ratio | net ratio p50 / p99 | sim measured at | emu measured at |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for n in out_rows:
        p50_tol = 0.25 if "loss0.01" in n["label"] or "loss0.02" in n["label"] else 0.10
        lines.append(
            f"| {n['label']} | {n['emu_p50']:.3f} | {n['before_p50']:.3f} | "
            f"{mark(n['before_p50'] / n['emu_p50'], p50_tol)} | {n['after_p50']:.3f} | "
            f"{mark(n['after_p50'] / n['emu_p50'], p50_tol)} | {n['emu_p99']:.3f} | "
            f"{n['before_p99']:.3f} | {mark(n['before_p99'] / n['emu_p99'], 0.2)} | "
            f"{n['after_p99']:.3f} | {mark(n['after_p99'] / n['emu_p99'], 0.2)} | "
            f"{net_cell(n, p50_tol)} | "
            f"{n['sim_commit']}, {n['date']} | {n['emu_commit']} |")
    text = "\n".join(lines) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
