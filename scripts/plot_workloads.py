#!/usr/bin/python3
"""Plots the workload learning curves written by `workload-curves` (results/workloads/*.csv).

Reads only CSV. Usage:
  /usr/bin/python3 scripts/plot_workloads.py results/workloads/curves-*.csv \
      --out results/workloads/learning-curves.png
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_curve(path):
    """Returns (label, metric, steps, quality, step_cpu_s) for one CSV file."""
    rows = []
    with open(path, newline="") as f:
        body = [line for line in f if not line.startswith("#")]
    for row in csv.DictReader(body):
        rows.append(row)
    if not rows:
        raise SystemExit(f"{path}: no rows")
    label = f"{rows[0]['kind']} / {rows[0]['preset']}"
    metric = rows[0]["metric"]
    steps = [int(r["step"]) for r in rows if r["quality"]]
    quality = [float(r["quality"]) for r in rows if r["quality"]]
    cpu = [float(r["step_cpu_s"]) for r in rows if r["step_cpu_s"]]
    return label, metric, steps, quality, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="learning-curve CSVs")
    parser.add_argument("--out", required=True, help="PNG to write")
    args = parser.parse_args()

    curves = [read_curve(p) for p in args.csv]
    metrics = sorted({c[1] for c in curves})
    fig, axes = plt.subplots(1, len(metrics), figsize=(6 * len(metrics), 4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for label, m, steps, quality, cpu in curves:
            if m != metric:
                continue
            mean_cpu = sum(cpu) / len(cpu) if cpu else float("nan")
            ax.plot(steps, quality, marker=".", label=f"{label} ({mean_cpu:.3f} CPU s/step)")
        ax.set_xlabel("optimizer step (full-state sync)")
        ax.set_ylabel(metric + (" (lower is better)" if metric == "reverse_kl" else ""))
        ax.set_title(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    command = "/usr/bin/python3 scripts/plot_workloads.py " + " ".join(args.csv)
    command += " --out " + args.out
    wrapped = "\n".join(command[i:i + 150] for i in range(0, len(command), 150))
    fig.suptitle("HiLo testbed workloads: learning curves (full-state sync)\nmade by: " + wrapped,
                 fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
