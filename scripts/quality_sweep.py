#!/usr/bin/python3
"""Quality vs bytes of the sync schemes, over seeds and budgets, without a network.

Runs build/models/sync-curves (hilo-sim's synchronous lockstep: same seed and configuration give
the simulator's quality column) once per (workload, scheme, budget, seed), --jobs at a time
through scripts/sweep_engine.py (done/total/ETA on stderr; a failed run's log is kept in
OUT/logs/ and its end printed), and writes:
  OUT/runs/<workload>/<scheme>-<budget>-s<seed>.csv   the learning curve of every run
  OUT/runs.csv    one row per run: final quality, share of full sync's progress on the same seed,
                  bytes per update, hash agreement, master gap, encode/decode time
  OUT/table.csv   one row per (workload, scheme, budget): mean share and its 95% interval
Runs whose curve already exists are reused (delete the file to rerun it). Without --out, OUT is
results/runs/quality-sweep (ignored by git); the committed tables are made with --out results/quality.

  /usr/bin/python3 scripts/quality_sweep.py --out results/quality --jobs 2
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

import stats_helper
import hilo_runs
import sweep_engine as engine

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


def budget_tag(budget):
    return "lossless" if budget is None else budget.replace(".", "p").replace("%", "pct")


def read_curve(path):
    table = hilo_runs.read_table(path)
    footer = hilo_runs.comment_values([c for c in table.comments if "mean_payload_bytes" in c])
    return table.rows, footer


def run_command(binary, workload, scheme, budget, seed, path):
    strategy, compressor, options, extra, _ = SCHEMES[scheme]
    cmd = ["nice", "-n", "15", binary] + WORKLOADS[workload]["args"] + [
        "--seed", str(seed), "--strategy", strategy, "--compressor", compressor,
        "--options", options] + extra + ["--out", path]
    if budget is not None:
        cmd += ["--budget", budget]
    return cmd


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
    engine.add_binary_args(ap, "sync-curves")
    ap.add_argument("--out", default=engine.default_out("quality-sweep"),
                    help="output folder (default results/runs/quality-sweep)")
    ap.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    ap.add_argument("--dask", metavar="ADDRESS|local[:N]", help="run on a Dask cluster")
    ap.add_argument("--workloads", default="distill,grpo")
    ap.add_argument("--schemes", default="hilo-spar,delta-spar,primal-spar,hilo-sparq,primal-sparq,"
                    "delta-pulse,primal-pulse")
    ap.add_argument("--budgets", default="0.5%,1%,1.6%,3%,5%,10%")
    ap.add_argument("--seeds", default="", help="comma list (default: each workload's three)")
    args = ap.parse_args()

    budgets = [b for b in args.budgets.split(",") if b]
    try:
        engine.check_binary(args.sync_curves, "sync-curves")
    except engine.BadInput as e:
        print(f"quality_sweep.py: {e}", file=sys.stderr)
        sys.exit(2)
    runs, tasks = [], []
    for workload in args.workloads.split(","):
        seeds = ([int(s) for s in args.seeds.split(",")] if args.seeds
                 else WORKLOADS[workload]["seeds"])
        folder = os.path.join(args.out, "runs", workload)
        os.makedirs(folder, exist_ok=True)
        for scheme in ["full"] + [s for s in args.schemes.split(",") if s != "full"]:
            for budget in (budgets if SCHEMES[scheme][4] else [None]):
                for seed in seeds:
                    name = f"{scheme}-{budget_tag(budget)}-s{seed}"
                    path = os.path.join(folder, name + ".csv")
                    if os.path.exists(path):
                        continue
                    tasks.append({
                        "slug": f"{workload}/{name}", "path": path,
                        "log_path": os.path.join(args.out, "logs", workload, name + ".log"),
                        "cmd": run_command(args.sync_curves, workload, scheme, budget, seed,
                                           path + ".partial")})

    def on_finish(task):
        # A curve is written under its name only when its run finished: never a partial one.
        if task["status"] == "ok":
            os.replace(task["path"] + ".partial", task["path"])
            os.remove(task["log_path"])  # only a failed run's log is kept
        elif os.path.exists(task["path"] + ".partial"):
            os.remove(task["path"] + ".partial")

    if tasks:
        engine.log(f"{len(tasks)} run(s) to do, logs of failed ones in "
                   f"{os.path.join(args.out, 'logs')}", "quality")
        stopped = engine.run_all(tasks, engine.make_executor(args.jobs, None, args.dask),
                                 "quality", on_finish)
        if stopped:
            sys.exit(128 + stopped)
        failed = [t for t in tasks if t["status"] != "ok"]
        if failed:
            sys.exit(f"quality_sweep.py: {len(failed)} run(s) failed: " +
                     ", ".join(t["log_path"] for t in failed))

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
            ci = stats_helper.mean_ci(shares)[1] if n > 1 else 0
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
