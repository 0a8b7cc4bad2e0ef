#!/usr/bin/env python3
"""Runs the simulator side of the validation table's lossy rows over several seeds.

For each row of results/validation/emulation.csv with random loss (`--csv`), runs `hilo-sim run
<the row's scenario> --set <the row's overrides> --set seed=S --quiet` for every seed S of `--seeds`
(a scenario's seed also draws its links' losses) with each `--hilo-sim` binary given (`--hilo-sim
PATH` or `--hilo-sim NAME=PATH`, repeatable: e.g. the code as it is and a change to compare) in
each network model of `--models` (packet, flow; default packet), and
writes one CSV row per (row, binary, seed) with the update latency p50 and p99 (`--out`,
default results/runs/validation-seeds/seeds.csv) and a table to stdout: per row and binary the mean
p50 and p99 over seeds with their range, and their ratio to the emulation side in the CSV (one
emulated run per lossy row in a table made before validate_emulation.sh --lossy-seeds; since, the
mean over its loss seeds, whose simulator sides the CSV holds too, in both models). Exit 2 on bad input (a missing binary, an empty seed list).

  scripts/validation_seeds.py --seeds 1,2,3,4,5 --hilo-sim now=build/sim/hilo-sim \\
      --hilo-sim fix=/path/to/other/hilo-sim
"""
import argparse
import csv
import json
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(REPO_ROOT, "scenarios", "validation", "emu-link.textproto")


def parse_binaries(values):
    out = []
    default = os.environ.get("HILO_SIM") or os.path.join(REPO_ROOT, "build", "sim", "hilo-sim")
    for v in values or [default]:
        name, _, path = v.rpartition("=")
        name = name or os.path.basename(os.path.dirname(os.path.dirname(path))) or "hilo-sim"
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ValueError(f"--hilo-sim {v}: {path} is not an executable")
        out.append((name, path))
    return out


def lossy(row):
    for o in row["overrides"].split():
        key, _, value = o.partition("=")
        if key.endswith(".loss") and float(value) > 0:
            return True
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", default=os.path.join(REPO_ROOT, "results/validation/emulation.csv"))
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated scenario seeds")
    parser.add_argument("--hilo-sim", action="append", metavar="[NAME=]PATH",
                        help="a hilo-sim binary, repeatable (default $HILO_SIM, else "
                        "build/sim/hilo-sim)")
    parser.add_argument("--only", action="append", default=[], help="rows whose label has this")
    parser.add_argument("--models", default="packet",
                        help="network models, comma-separated: packet, flow (default packet)")
    parser.add_argument("--out", default=os.path.join(REPO_ROOT,
                                                      "results/runs/validation-seeds/seeds.csv"))
    args = parser.parse_args()
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        if not seeds:
            raise ValueError("--seeds: no seed given")
        binaries = parse_binaries(args.hilo_sim)
        models = [m for m in args.models.split(",") if m]
        if not models or any(m not in ("packet", "flow") for m in models):
            raise ValueError(f"--models {args.models}: allowed packet, flow")
    except ValueError as e:
        print(f"validation_seeds.py: {e}", file=sys.stderr)
        return 2
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if lossy(r)]
    rows = [r for r in rows if not args.only or any(o in r["label"] for o in args.only)]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    runs_dir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "runs")
    results = []
    variants = [(name if len(models) == 1 and models[0] == "packet" else f"{name}/{m}", path, m)
                for name, path in binaries for m in models]
    total = len(rows) * len(variants) * len(seeds)
    for r in rows:
        sets = [a for o in r["overrides"].split() for a in ("--set", o)]
        for name, path, model in variants:
            for seed in seeds:
                out = os.path.join(runs_dir, f"{r['label']}-{name.replace('/', '-')}-seed{seed}")
                cmd = [path, "run", SCENARIO, *sets, "--set", f"network.model={model}", "--set",
                       f"seed={seed}", "--quiet", "--out", out]
                print(f"[{len(results) + 1}/{total}] {r['label']} {name} seed {seed}",
                      file=sys.stderr, flush=True)
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    print(" ".join(cmd) + "\n" + done.stdout + done.stderr, file=sys.stderr)
                    return 1
                with open(os.path.join(out, "summary.json")) as f:
                    arm = next(a for a in json.load(f)["arms"] if a["name"] == r["arm"])
                results.append({"label": r["label"], "binary": name, "seed": seed,
                                "p50": arm["update_latency_s"]["p50"],
                                "p99": arm["update_latency_s"]["p99"],
                                "emu_p50": float(r["emu_latency_p50_s"]),
                                "emu_p99": float(r["emu_latency_p99_s"])})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]) if results else ["label"])
        w.writeheader()
        w.writerows(results)
    print(f"| row | binary | seeds | p50 mean s (range) | / emu | p99 mean s (range) | / emu |")
    print("|---|---|---:|---|---:|---|---:|")
    for r in rows:
        for name, _, _ in variants:
            mine = [x for x in results if x["label"] == r["label"] and x["binary"] == name]
            p50 = [x["p50"] for x in mine]
            p99 = [x["p99"] for x in mine]
            m50, m99 = sum(p50) / len(p50), sum(p99) / len(p99)
            print(f"| {r['label']} | {name} | {len(mine)} | {m50:.3f} ({min(p50):.3f}-{max(p50):.3f})"
                  f" | {m50 / mine[0]['emu_p50']:.3f} | {m99:.3f} ({min(p99):.3f}-{max(p99):.3f})"
                  f" | {m99 / mine[0]['emu_p99']:.3f} |")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
