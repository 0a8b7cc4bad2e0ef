#!/usr/bin/python3
"""Summarizes run.sh's curves: one row per (arm, seed) and the mean over seeds, with each arm's
final reverse KL paired against hilo-spar's run of the same seed (same prompts and start).
  /usr/bin/python3 results/quality/spar-options/summarize.py > results/quality/spar-options/table.csv
"""
import csv
import glob
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
rows = {}
for path in sorted(glob.glob(os.path.join(here, "runs", "text-distill-*-s*.csv"))):
    arm, seed = re.match(r"text-distill-(.+)-s(\d+)\.csv$", os.path.basename(path)).groups()
    evals, fracs, footer = [], [], {}
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        if r["fraction_of_adapter_bytes"]:
            fracs.append(float(r["fraction_of_adapter_bytes"]))
        if r["quality"]:
            evals.append(float(r["quality"]))
    rows[(arm, int(seed))] = {"kl_start": evals[0], "kl_final": evals[-1],
                              "kl_last3": sum(evals[-3:]) / len(evals[-3:]),
                              "fraction_pct": sum(fracs) / len(fracs)}
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["arm", "seed", "kl_start", "kl_final", "kl_last3_mean", "kl_final_minus_hilo_spar",
            "fraction_pct"])
arms = sorted({a for a, _ in rows}, key=lambda a: (a != "hilo-spar", a))
for arm in arms:
    seeds = sorted(s for a, s in rows if a == arm)
    diffs = []
    for s in seeds:
        r = rows[(arm, s)]
        base = rows.get(("hilo-spar", s))
        d = r["kl_final"] - base["kl_final"] if base else float("nan")
        diffs.append(d)
        w.writerow([arm, s, f"{r['kl_start']:.5f}", f"{r['kl_final']:.5f}", f"{r['kl_last3']:.5f}",
                    f"{d:+.5f}", f"{r['fraction_pct']:.3f}"])
    mean = lambda k: sum(rows[(arm, s)][k] for s in seeds) / len(seeds)
    w.writerow([arm, "mean", f"{mean('kl_start'):.5f}", f"{mean('kl_final'):.5f}",
                f"{mean('kl_last3'):.5f}", f"{sum(diffs) / len(diffs):+.5f}",
                f"{mean('fraction_pct'):.3f}"])
