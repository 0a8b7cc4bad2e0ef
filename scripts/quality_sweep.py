#!/usr/bin/python3
"""Quality vs bytes of the sync schemes, over seeds and budgets, without a network.

Runs build/models/sync-curves (hilo-sim's synchronous lockstep: same seed and configuration give
the simulator's quality column) once per (workload, scheme, budget, seed), one process at a time,
and writes:
  OUT/runs/<workload>/<scheme>-<budget>-s<seed>.csv   the learning curve of every run
  OUT/runs.csv    one row per run: final quality, share of full sync's progress on the same seed,
                  bytes per update, hash agreement, master gap, encode/decode time
  OUT/table.csv   one row per (workload, scheme, budget): mean share and its 95% interval
Runs whose curve already exists are reused (delete the file to rerun it).

  /usr/bin/python3 scripts/quality_sweep.py --out results/quality
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys

# The two workloads: the fig2 distillation (scenarios/paper/fig2-pareto.textproto at 100 steps)
# and GRPO on the stride-1 residue chain with the same model, which learns in ~20 steps at lr 3e-3
# under full sync and fails visibly under drift.
WORKLOADS = {
    "distill": {
        "seeds": [21, 22, 23],
        "args": ["--kind", "distill", "--preset", "sim", "--steps", "100", "--workers", "2",
                 "--eval-every", "10", "--d-model", "128", "--context", "64", "--lora-rank", "64",
                 "--teacher-rank", "8", "--teacher-decay", "0.7", "--prompts-per-worker", "4",
                 "--gen-tokens", "16", "--eval-prompts", "64", "--lr", "0.002",
                 "--schedule", "linear_warmup", "--warmup", "5"],
    },
    "grpo": {
        "seeds": [1, 2, 3],
        "args": ["--kind", "grpo", "--preset", "sim", "--steps", "60", "--workers", "2",
                 "--eval-every", "10", "--d-model", "128", "--context", "64", "--lora-rank", "64",
                 "--prompts-per-worker", "4", "--gen-tokens", "16", "--eval-prompts", "64",
                 "--task-prompt-stride", "0", "--lr", "0.003"],
    },
}

# name -> (strategy, compressor, options, extra flags, budgeted). Budgeted schemes run at every
# --budgets value; the others once.
SCHEMES = {
    "full": ("full", "dense", "dtype=bf16", [], False),
    "hilo-spar": ("hilo", "spar", "dtype=bf16", [], True),
    "delta-spar": ("delta", "spar", "dtype=bf16", [], True),
    "primal-spar": ("primal", "spar", "dtype=bf16", [], True),
    "hilo-sparq": ("hilo", "sparq", "bits=4", [], True),
    "primal-sparq": ("primal", "sparq", "bits=3", ["--ef-decay", "0.7"], True),
    "primal-sparq-ef1": ("primal", "sparq", "bits=4", [], True),
    "delta-pulse": ("delta", "pulse", "", [], False),
    "primal-pulse": ("primal", "pulse", "", [], False),
}

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}


def budget_tag(budget):
    return "lossless" if budget is None else budget.replace(".", "p").replace("%", "pct")


def read_curve(path):
    rows = []
    footer = {}
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#") or "mean_payload_bytes" in l]
    for l in lines:
        if l.startswith("#"):
            for kv in l[1:].split():
                k, v = kv.split("=")
                footer[k] = float(v)
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    return rows, footer


def run_one(binary, workload, scheme, budget, seed, path):
    strategy, compressor, options, extra, _ = SCHEMES[scheme]
    cmd = ["nice", "-n", "15", binary] + WORKLOADS[workload]["args"] + [
        "--seed", str(seed), "--strategy", strategy, "--compressor", compressor,
        "--options", options] + extra + ["--out", path]
    if budget is not None:
        cmd += ["--budget", budget]
    print(" ".join(cmd[3:]), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)


def summarize(rows, footer):
    evals = [r for r in rows if r["quality"] != ""]
    steps = [r for r in rows if r["version"] != "0"]
    mean = lambda key: statistics.fmean(float(r[key]) for r in steps) if steps else float("nan")
    gaps = [float(r["master_gap_rel_l2"]) for r in steps if r["master_gap_rel_l2"] != ""]
    return {
        "initial_quality": float(evals[0]["quality"]),
        "final_quality": float(evals[-1]["quality"]),
        "mean_quality": statistics.fmean(float(r["quality"]) for r in evals[1:]),
        "fraction_pct": footer.get("mean_fraction_pct", float("nan")),
        "hash_mismatches": int(footer.get("hash_mismatches", -1)),
        "gradient_at_replicas": int(all(r["gradient_at_replica_view"] == "1" for r in steps)),
        "master_gap_rel_l2_last": gaps[-1] if gaps else float("nan"),
        "encode_ms": 1000 * mean("encode_s"),
        "decode_ms": 1000 * mean("decode_s"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/models/sync-curves")
    ap.add_argument("--out", default="results/quality")
    ap.add_argument("--workloads", default="distill,grpo")
    ap.add_argument("--schemes", default="hilo-spar,delta-spar,primal-spar,hilo-sparq,primal-sparq,"
                    "delta-pulse,primal-pulse")
    ap.add_argument("--budgets", default="0.5%,1%,1.6%,3%,5%,10%")
    ap.add_argument("--seeds", default="", help="comma list (default: each workload's three)")
    args = ap.parse_args()

    budgets = [b for b in args.budgets.split(",") if b]
    runs = []
    for workload in args.workloads.split(","):
        seeds = ([int(s) for s in args.seeds.split(",")] if args.seeds
                 else WORKLOADS[workload]["seeds"])
        folder = os.path.join(args.out, "runs", workload)
        os.makedirs(folder, exist_ok=True)
        for scheme in ["full"] + [s for s in args.schemes.split(",") if s != "full"]:
            for budget in (budgets if SCHEMES[scheme][4] else [None]):
                for seed in seeds:
                    path = os.path.join(folder, f"{scheme}-{budget_tag(budget)}-s{seed}.csv")
                    if not os.path.exists(path):
                        try:
                            run_one(args.bin, workload, scheme, budget, seed, path)
                        except BaseException:
                            if os.path.exists(path):
                                os.remove(path)  # never leave a partial curve to be reused
                            raise

    # The tables cover every curve under OUT/runs, including those of earlier invocations with
    # other schemes or budgets.
    for workload in sorted(os.listdir(os.path.join(args.out, "runs"))):
        folder = os.path.join(args.out, "runs", workload)
        for name in sorted(os.listdir(folder)):
            m = re.fullmatch(r"(.+)-(lossless|[0-9p]+pct)-s([0-9]+)\.csv", name)
            if not m or m.group(1) not in SCHEMES:
                continue
            scheme, tag, seed = m.group(1), m.group(2), int(m.group(3))
            budget = "lossless" if tag == "lossless" else tag.replace("pct", "%").replace("p", ".")
            rows, footer = read_curve(os.path.join(folder, name))
            r = {"workload": workload, "scheme": scheme, "budget": budget, "seed": seed,
                 "metric": rows[0]["metric"]}
            r.update(summarize(rows, footer))
            runs.append(r)
    order = {s: i for i, s in enumerate(SCHEMES)}
    runs.sort(key=lambda r: (r["workload"], order[r["scheme"]],
                             0 if r["budget"] == "lossless" else float(r["budget"][:-1]),
                             r["seed"]))

    # Share of full sync's progress on the same seed: (q0 - q) / (q0 - q_full) for a loss,
    # (q - q0) / (q_full - q0) for a reward; both are (q - q0) / (q_full - q0).
    full = {(r["workload"], r["seed"]): r for r in runs if r["scheme"] == "full"}
    for r in runs:
        f = full[(r["workload"], r["seed"])]
        r["share_of_full"] = ((r["final_quality"] - r["initial_quality"]) /
                              (f["final_quality"] - f["initial_quality"]))
        r["mean_share_of_full"] = ((r["mean_quality"] - r["initial_quality"]) /
                                   (f["mean_quality"] - f["initial_quality"]))

    fields = ["workload", "scheme", "budget", "seed", "metric", "initial_quality",
              "final_quality", "share_of_full", "mean_quality", "mean_share_of_full",
              "fraction_pct", "hash_mismatches", "gradient_at_replicas",
              "master_gap_rel_l2_last", "encode_ms", "decode_ms"]
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        f.write("# command: " + " ".join(sys.argv) + "\n")
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in runs:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    groups = {}
    for r in runs:
        groups.setdefault((r["workload"], r["scheme"], r["budget"]), []).append(r)
    with open(os.path.join(args.out, "table.csv"), "w", newline="") as f:
        f.write("# command: " + " ".join(sys.argv) + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["workload", "scheme", "budget", "n", "fraction_pct", "share_mean",
                    "share_ci95", "share_min", "final_quality_mean", "mean_share_mean",
                    "hash_mismatches", "gradient_at_replicas", "encode_ms", "decode_ms"])
        for (workload, scheme, budget), rs in groups.items():
            shares = [r["share_of_full"] for r in rs]
            n = len(shares)
            ci = T95.get(n - 1, 2.0) * statistics.stdev(shares) / math.sqrt(n) if n > 1 else 0
            w.writerow([workload, scheme, budget, n,
                        f"{statistics.fmean(r['fraction_pct'] for r in rs):.4g}",
                        f"{statistics.fmean(shares):.4f}", f"{ci:.4f}", f"{min(shares):.4f}",
                        f"{statistics.fmean(r['final_quality'] for r in rs):.5g}",
                        f"{statistics.fmean(r['mean_share_of_full'] for r in rs):.4f}",
                        sum(r["hash_mismatches"] for r in rs),
                        min(r["gradient_at_replicas"] for r in rs),
                        f"{statistics.fmean(r['encode_ms'] for r in rs):.3g}",
                        f"{statistics.fmean(r['decode_ms'] for r in rs):.3g}"])


    # Plain CSVs (pandas.read_csv without options): the '# command' lines go to sidecars.
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "csv_provenance.py"),
                    os.path.join(args.out, "runs.csv"), os.path.join(args.out, "table.csv")],
                   check=True)


if __name__ == "__main__":
    main()
