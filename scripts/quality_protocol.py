#!/usr/bin/python3
"""Quality of the sync schemes under a protocol a sceptic accepts: many seeds, a full-sync
reference averaged over several runs, steps-to-target and area-under-curve shares with bootstrap
intervals, and solved k/n where the outcome is two-valued.

Runs build/models/sync-curves (hilo-sim's synchronous lockstep without a network: the same
workload, optimizer, seed and arm give hilo-sim's quality column; tests/sim/
new-workloads-sim-test.cc checks it on the new workloads) once per (workload, scheme, budget,
seed), one process at a time under `nice`, and writes under OUT:
  runs/<workload>/<scheme>-<budget>-s<seed>.csv  every learning curve (reused when present: the
                                                 protocol resumes where it stopped)
  protocol-runs.csv     one row per arm run: final quality, the two steps-to-target ratios, AUC
                        share, solved, bytes, hash agreement, CPU seconds
  protocol-table.csv    one row per (workload, scheme, budget): means and bootstrap 95% intervals
  protocol-table.md     the same as Markdown tables, one per workload
  protocol-cost.csv     measured CPU seconds per run by workload and the full protocol's estimate
each CSV with a NAME.csv.meta.json sidecar naming the command, commit and date. The spar-options
grids, which run into the same folder as the full grid, write instead spar-options-table.{csv,md}
alone (the full grid's files untouched), with one more column: each option's paired difference
against the default (hilo-spar at the same budget, from the same runs/ folder).

Metrics, for an arm run of T steps with progress curve q(t) - q(0) (quality oriented so that
higher is better below; the distillation KL is negated) against the reference R(t) = the mean
progress curve q(t) - q(0) of the full-sync runs of the same workload over all its seeds (>= 5
required; progress, not quality, because each seed has its own held-out prompts and start):
  stt_full   steps R needs to reach the arm's final quality, over T (linear interpolation between
             evaluations; 1 when R never gets there within T). 1 = full sync's pace; 0.5 = the arm
             ended where full sync was at half time.
  stt_arm    steps full sync needs to reach 90% of its final progress, over the steps the arm
             needs for the same target (0 when the arm never reaches it within T).
  auc_share  area between q and q(0) over the area between R and R(0), over the run.
  solved     the arm reached the 90% target (two-valued: reported as k/n).
  final_share  the arm's final progress over R's final progress: the "share of full sync's
             progress" of the planted grid (below), except that R is the mean of the
             references, not the full-sync run of the same seed.
  paired_vs_default  (spar-options grids) per seed, an option's stt_full less the default
             hilo-spar's stt_full on the same seed, workload and budget; over the seeds both
             have (the count is reported).
Intervals: percentile bootstrap of the mean over seeds (scipy.stats.bootstrap, 10000 resamples,
fixed random state).

  /usr/bin/python3 scripts/quality_protocol.py --grid small    (into results/runs/quality-protocol-small)
  /usr/bin/python3 scripts/quality_protocol.py --grid full --out results/quality/protocol-full
  /usr/bin/python3 scripts/quality_protocol.py --grid planted --out results/quality --jobs 2
The planted grid (the planted teachers of results/quality/table.csv: three seeds of their own, the
learner's own adapter as the budget's denominator) writes instead the report of
scripts/quality_same_seed.py: runs.csv and table.csv, each run against the full-sync run of its
own seed.
The committed folders are written only when --out names them. The runner is
build/models/sync-curves (--sync-curves PATH, default $HILO_SYNC_CURVES).
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats_helper import mean_bootstrap as bootstrap  # noqa: E402
import hilo_runs  # noqa: E402
import quality_same_seed  # noqa: E402
import sweep_engine as engine  # noqa: E402

# Workloads in the regime chosen by measurement (results/quality/README.md, "Stable regimes").
WORKLOADS = {
    "text-distill": ["--kind", "distill", "--preset", "sim", "--teacher", "finetuned",
                     "--lora-rank", "16", "--prompt-tokens", "16", "--gen-tokens", "16",
                     "--prompts-per-worker", "4", "--eval-prompts", "64", "--lr", "0.003",
                     "--schedule", "linear_warmup", "--warmup", "5"],
    "randomwalks": ["--kind", "grpo", "--preset", "sim", "--grpo-task", "randomwalks",
                    "--lora-rank", "8", "--prompts-per-worker", "16", "--group-size", "8",
                    "--entropy-coef", "0.01", "--eval-prompts", "128", "--lr", "0.001"],
    "residue-chain": ["--kind", "grpo", "--preset", "sim", "--task-prompt-stride", "0",
                      "--d-model", "64", "--lora-rank", "8", "--prompts-per-worker", "16",
                      "--group-size", "8", "--entropy-coef", "0.01", "--eval-prompts", "128",
                      "--lr", "0.001"],
}
# The model-size trend: the real-text distillation at two larger shapes, each with its own base and
# finetuned teacher made by pretrain-text with the committed base's recipe (600 + 250 steps, batch
# 24, seed 1) into --ckpt-dir on first use (20-50 MB each, so built rather than committed).
TEXT_SIZES = {"text-distill-m": ["--d-model", "192", "--layers", "4", "--heads", "6"],
              "text-distill-l": ["--d-model", "256", "--layers", "7", "--heads", "8"]}
# Parameters of each text base (printed by pretrain-text for these shapes).
MODEL_PARAMS = {"text-distill": 466944, "text-distill-m": 1880064, "text-distill-l": 5652480}
PRETRAIN = ["--base-steps", "600", "--teacher-steps", "250", "--batch", "24"]
for _name in TEXT_SIZES:
    WORKLOADS[_name] = WORKLOADS["text-distill"] + ["--text-checkpoint", "{ckpt}/" + _name + ".bin"]
STEPS = {"text-distill": 60, "randomwalks": 60, "residue-chain": 100,
         "text-distill-m": 60, "text-distill-l": 60}
# The real-text distillation at the modelled adapter's rank (64; width 128 = 2 x rank): the one
# protocol workload whose factor matrices are wider than a sketch of width 8 or 16, so that the
# warm sketch acts on it (on the rank-16 and rank-8 learners every matrix is exact at width 16).
WORKLOADS["text-distill-r64"] = list(WORKLOADS["text-distill"])
WORKLOADS["text-distill-r64"][WORKLOADS["text-distill"].index("--lora-rank") + 1] = "64"
STEPS["text-distill-r64"] = 60

# name -> (strategy, compressor, options, extra flags)
SCHEMES = {
    "full": ("full", "dense", "dtype=bf16", []),
    "hilo-spar": ("hilo", "spar", "dtype=bf16", []),
    "hilo-sparq": ("hilo", "sparq", "bits=4", []),
    "primal-sparq": ("primal", "sparq", "bits=3", ["--ef-decay", "0.7"]),
    "delta-spar": ("delta", "spar", "dtype=bf16", []),
    "hilo-powersgd": ("hilo", "powersgd", "", []),
    "hilo-topk": ("hilo", "topk", "", []),
}
ARMS = [s for s in SCHEMES if s != "full"]
# The planted-teacher workloads (a low-rank teacher delta the project chose; teaching figures, not
# quality claims): the fig2 distillation (scenarios/paper/fig2-pareto.textproto at 100 steps) and
# GRPO on the stride-1 residue chain with the same model, which learns in ~20 steps at lr 3e-3
# under full sync and fails visibly under drift. Their grid is "planted".
PLANTED = {
    "distill": ["--kind", "distill", "--preset", "sim", "--d-model", "128", "--context", "64",
                "--lora-rank", "64", "--teacher-rank", "8", "--teacher-decay", "0.7",
                "--prompts-per-worker", "4", "--gen-tokens", "16", "--eval-prompts", "64",
                "--lr", "0.002", "--schedule", "linear_warmup", "--warmup", "5"],
    "grpo": ["--kind", "grpo", "--preset", "sim", "--d-model", "128", "--context", "64",
             "--lora-rank", "64", "--prompts-per-worker", "4", "--gen-tokens", "16",
             "--eval-prompts", "64", "--task-prompt-stride", "0", "--lr", "0.003"],
}
WORKLOADS.update(PLANTED)
STEPS.update({"distill": 100, "grpo": 60})
PLANTED_SCHEMES = {
    "primal-spar": ("primal", "spar", "dtype=bf16", []),
    "primal-sparq-ef1": ("primal", "sparq", "bits=4", []),
    "delta-pulse": ("delta", "pulse", "", []),
    "primal-pulse": ("primal", "pulse", "", []),
}
SCHEMES.update(PLANTED_SCHEMES)
# Spar's optimizer-aware options one at a time (hilo/compress/allocation-policy.h), for the
# spar-options grid only (not among ARMS): against hilo-spar (the default: exact spectra, energy
# allocation), the warm width-8 sketch, and each new option on the default encoder.
SPAR_OPTIONS = {
    "hilo-spar-warm8": ("hilo", "spar", "dtype=bf16;sketch=8;warm=true", []),
    "hilo-spar-precond": ("hilo", "spar", "allocation=preconditioned;dtype=bf16", []),
    "hilo-spar-cov4": ("hilo", "spar", "coverage=4;dtype=bf16", []),
    "hilo-spar-efr1": ("hilo", "spar", "dtype=bf16;ef_max_ratio=1", []),
    # Directions in the basis learner and replicas derive from Adam's first moment
    # (hilo/compress/replicated-basis.h), half the bytes at most, fresh triplets for the rest.
    "hilo-spar-basis": ("hilo", "spar", "basis=replicated;dtype=bf16", []),
    # The other bound on the backlog the issue names: 1-bit Adam's frozen second moment (AdamW's
    # v stops changing after step 10, a sixth of a 60-step run: past the lr warm-up, the v of
    # the steps that carried the most gradient), on the default encoder; both sides replay it.
    "hilo-spar-vfreeze10": ("hilo", "spar", "dtype=bf16", ["--v-freeze-step", "10"]),
    # ... and frozen at step 30, half-way: a v made of more deliveries.
    "hilo-spar-vfreeze30": ("hilo", "spar", "dtype=bf16", ["--v-freeze-step", "30"]),
}
# The sketch grid's arms (rank-64 learner only): the warm sketch at widths 16 and 32, and the
# cold sketch of width 16 (a fresh range finder every encode: is the loss the sketch's or the
# warm start's?).
SKETCH_OPTIONS = {
    "hilo-spar-warm16": ("hilo", "spar", "dtype=bf16;sketch=16;warm=true", []),
    "hilo-spar-warm32": ("hilo", "spar", "dtype=bf16;sketch=32;warm=true", []),
    "hilo-spar-sketch16": ("hilo", "spar", "dtype=bf16;sketch=16", []),
}
SCHEMES.update(SPAR_OPTIONS)
SCHEMES.update(SKETCH_OPTIONS)

# The grids. Headline budgets get `headline_seeds`, the others `seeds`; "full" also extends each
# scheme's parity budget (the smallest whose mean stt_full >= 0.98 over the first seeds) to the
# headline seed count.
GRIDS = {
    # What fits a shared 2-core machine in minutes: short runs, one scheme at the headline point.
    "small": {"workloads": ["randomwalks", "text-distill"], "schemes": ["hilo-spar"],
              "budgets": ["1.6%"], "headline": ["1.6%"], "seeds": 3, "headline_seeds": 3,
              "ref_seeds": 5, "parity": False,
              "steps": {"randomwalks": 20, "text-distill": 15}},
    "full": {"workloads": ["text-distill", "randomwalks", "residue-chain"], "schemes": ARMS,
             "budgets": ["0.5%", "1.6%", "5%", "15%"], "headline": ["1.6%"], "seeds": 3,
             "headline_seeds": 10, "ref_seeds": 10, "parity": True},
    # Spar's options one at a time at the headline budget: short runs, three seeds (an ablation
    # that fits beside other work on a shared 2-core machine, labelled as such where reported).
    "spar-options": {"workloads": ["text-distill", "randomwalks", "residue-chain"],
                     "schemes": ["hilo-spar"] + list(SPAR_OPTIONS), "budgets": ["1.6%"],
                     "headline": ["1.6%"], "seeds": 3, "headline_seeds": 3, "ref_seeds": 5,
                     "parity": False, "paired_default": "hilo-spar",
                     "table_prefix": "spar-options",
                     "steps": {"text-distill": 30, "randomwalks": 30, "residue-chain": 50}},
    # The same options at the full protocol's length and seeds, headline budget only: run into
    # the full grid's folder, they share its full-sync references and its hilo-spar runs.
    # "paired_default": the scheme each option is paired with seed by seed (its curves read from
    # the same runs/ folder, run or not by this grid); "table_prefix": the grid writes
    # PREFIX-table.{csv,md} and nothing else, so the full grid's tables in that folder stay.
    "spar-options-full": {"workloads": ["text-distill", "randomwalks", "residue-chain"],
                          "schemes": list(SPAR_OPTIONS), "budgets": ["1.6%"],
                          "headline": ["1.6%"], "seeds": 10, "headline_seeds": 10,
                          "ref_seeds": 10, "parity": False, "paired_default": "hilo-spar",
                          "table_prefix": "spar-options"},
    # The default exact spectra against the warm sketch where the sketch acts: the real-text
    # distillation at rank 64, 10 seeds at the headline budget, each arm paired with the default;
    # hilo-sparq and the replicated basis beside them for scale.
    "sketch": {"workloads": ["text-distill-r64"],
               "schemes": ["hilo-spar", "hilo-spar-warm8"] + list(SKETCH_OPTIONS) +
                          ["hilo-sparq", "hilo-spar-basis"],
               "budgets": ["1.6%"], "headline": ["1.6%"], "seeds": 10, "headline_seeds": 10,
               "ref_seeds": 10, "parity": False, "paired_default": "hilo-spar",
               "table_prefix": "sketch"},
    # Does the 1.6% share hold as the model grows? 0.47M, 1.88M and 5.65M parameters.
    "size": {"workloads": ["text-distill", "text-distill-m", "text-distill-l"],
             "schemes": ["hilo-spar"], "budgets": ["1.6%"], "headline": ["1.6%"], "seeds": 10,
             "headline_seeds": 10, "ref_seeds": 5, "parity": False},
    # The planted teachers (results/quality/table.csv, runs.csv): three seeds of their own per
    # workload, every budget, the learner's own adapter as the budget's denominator, and the
    # report of quality_same_seed.py (each run against its own seed's full-sync run) instead of
    # the protocol's tables. Lossless schemes run once, without a budget.
    "planted": {"workloads": ["distill", "grpo"],
                "schemes": ["hilo-spar", "delta-spar", "primal-spar", "hilo-sparq",
                            "primal-sparq", "delta-pulse", "primal-pulse"],
                "budgets": ["0.5%", "1%", "1.6%", "3%", "5%", "10%"], "headline": [],
                "seed_lists": {"distill": [21, 22, 23], "grpo": [1, 2, 3]},
                "lossless": ["delta-pulse", "primal-pulse"], "unbudgeted_tag": "lossless",
                "eval_every": 10, "regime": "learner", "report": "same-seed", "parity": False,
                # the report's rows: every planted scheme's curves present, in this order
                "report_order": ["full", "hilo-spar", "delta-spar", "primal-spar", "hilo-sparq",
                                 "primal-sparq", "primal-sparq-ef1", "delta-pulse",
                                 "primal-pulse"]},
}
SEED0 = 101  # seeds are SEED0, SEED0 + 1, ...
TARGET = 0.9
PARITY = 0.98  # of full sync's own leave-one-out stt_full: a budget at parity
ENDPOINT_EVALS = 3  # a curve's endpoint: the mean of its last three evaluations
# The budget regimes. "modelled": a percentage is of the modelled adapter (Qwen2.5-7B at rank 64,
# the adapter the paper's 1.6% is of), and a rank-based compressor on the tiny learner gets the
# budget that buys that adapter's rank-1 directions per factor matrix (sync-curves
# --budget-transfer directions; entry-based compressors keep the fraction, which buys both
# adapters the same entry fraction). "learner": a percentage is of the learner's own adapter.
REGIMES = {
    "modelled": ["--llm-profile", "Qwen2.5-7B", "--modelled-rank", "64",
                 "--budget-transfer", "directions"],
    "learner": [],
}


def tag(budget, unbudgeted="unlimited"):
    return unbudgeted if budget is None else budget.replace(".", "p").replace("%", "pct")


def curve_path(out, workload, scheme, budget, seed):
    # The planted workloads' runs without a budget were named "lossless" from the start.
    none = GRIDS["planted"]["unbudgeted_tag"] if workload in PLANTED else "unlimited"
    return os.path.join(out, "runs", workload, f"{scheme}-{tag(budget, none)}-s{seed}.csv")


def ensure_base(pretrain, workload, ckpt_dir, nice=10):
    """Makes the text checkpoint a size-trend workload needs when it is not there yet."""
    if workload not in TEXT_SIZES:
        return
    path = os.path.join(ckpt_dir, workload + ".bin")
    if os.path.exists(path):
        return
    os.makedirs(ckpt_dir, exist_ok=True)
    cmd = [pretrain, "--out", path + ".part", "--spectrum",
           os.path.join(ckpt_dir, workload + "-spectrum.csv")] + PRETRAIN + TEXT_SIZES[workload]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(["nice", "-n", str(nice)] + cmd, check=True)
    os.replace(path + ".part", path)


def infeasible_path(curve):
    """Where a run that the scheme's smallest payload makes impossible is recorded."""
    return curve[:-len(".csv")] + ".infeasible"


def run_command(binary, workload, scheme, budget, seed, steps, ckpt_dir, regime, eval_every=5):
    """The sync-curves command line of one run (without --out)."""
    strategy, compressor, options, extra = SCHEMES[scheme]
    cmd = [binary] + [a.replace("{ckpt}", ckpt_dir) for a in WORKLOADS[workload]] + [
        "--steps", str(steps), "--workers", "2", "--eval-every", str(eval_every),
        "--seed", str(seed),
        "--strategy", strategy, "--compressor", compressor, "--options", options] + extra
    if budget is not None:
        cmd += ["--budget", budget] + REGIMES[regime]
    return cmd


def run_task(binary, workload, scheme, budget, seed, path, steps, ckpt_dir, regime, out, nice,
             eval_every=5):
    """One run as a task of the sweep engine (scripts/sweep_engine.py): sync-curves writes
    PATH.part, which finish_task moves into place once the run succeeded."""
    cmd = run_command(binary, workload, scheme, budget, seed, steps, ckpt_dir, regime, eval_every)
    name = os.path.basename(path)[:-len(".csv")]
    return {"slug": f"{workload}/{name}", "path": path,
            "cmd": ["nice", "-n", str(nice)] + cmd + ["--out", path + ".part"],
            "log_path": os.path.join(out, "logs", workload, name + ".log")}


def finish_task(task):
    """Moves a finished run's curve into place with its measured cost; a run whose budget the
    scheme cannot meet at all (exit 2, budget_too_small: e.g. PowerSGD's rank-1 floor) is
    recorded as infeasible and not retried; a partial curve is never left to be reused."""
    path, tmp = task["path"], task["path"] + ".part"
    if task["status"] == "ok" and os.path.exists(tmp):
        with open(tmp, "a") as f:
            f.write(f"# cpu_s={task.get('cpu_s') or float('nan'):.3f} "
                    f"wall_s={task['seconds']:.3f}\n")
        os.replace(tmp, path)
        return
    if os.path.exists(tmp):
        os.remove(tmp)
    if task["status"] == "failed" and task.get("exit_code") == 2:
        with open(task["log_path"]) as f:
            log = f.read()
        if "budget_too_small" in log:
            with open(infeasible_path(path), "w") as f:
                f.write(log.strip().splitlines()[-1] + "\n")
            task["status"] = "infeasible"


def read_curve(path):
    """(steps array, quality array, footer dict, metric) of a sync-curves CSV."""
    table = hilo_runs.read_table(path)
    footer = hilo_runs.comment_values(
        table.comments, ("mean_fraction_pct", "hash_mismatches", "cpu_s", "wall_s",
                         "buys_modelled", "buys_learner"))
    rows = table.rows
    ev = [r for r in rows if r["quality"] != ""]
    t = np.array([float(r["version"]) for r in ev])
    q = np.array([float(r["quality"]) for r in ev])
    steps = [r for r in rows if r["version"] != "0"]
    footer["gradient_at_replicas"] = int(all(r["gradient_at_replica_view"] == "1"
                                             for r in steps))
    return t, q, footer, rows[0]["metric"]


def first_reach(t, q, target):
    """First (interpolated) step where q(t) >= target, or None."""
    if q[0] >= target:
        return float(t[0])
    for i in range(1, len(t)):
        if q[i] >= target:
            a, b = q[i - 1], q[i]
            return float(t[i - 1] + (t[i] - t[i - 1]) * (target - a) / (b - a))
    return None


def area(t, q):
    return float(np.sum((q[1:] + q[:-1]) * np.diff(t)) / 2 - q[0] * (t[-1] - t[0]))


def endpoint(q, last=1):
    """A curve's end: the mean of its last `last` evaluations (one evaluation swings by more than
    a scheme's difference; the protocol uses ENDPOINT_EVALS)."""
    return float(np.mean(q[-max(1, min(last, len(q))):]))


def arm_metrics(t, q, ref_t, ref_q, last=1):
    """The metrics of the curve (t, q) against the reference (ref_t, ref_q), both oriented so
    that higher is better; `last` evaluations make each curve's endpoint."""
    T = float(t[-1])
    end, ref_end = endpoint(q, last), endpoint(ref_q, last)
    reach = first_reach(ref_t, ref_q, end)
    stt_full = 1.0 if reach is None else reach / T
    target = ref_q[0] + TARGET * (ref_end - ref_q[0])
    t_arm = first_reach(t, q, target)
    t_ref = first_reach(ref_t, ref_q, target)
    stt_arm = 0.0 if t_arm is None else (t_ref / t_arm if t_arm > 0 else 1.0)
    auc = area(t, q) / area(ref_t, ref_q)
    share = (end - q[0]) / (ref_end - ref_q[0])
    return {"stt_full": stt_full, "stt_arm": stt_arm, "auc_share": auc,
            "final_share": float(share), "solved": int(t_arm is not None),
            "steps_to_target": t_arm}


def paired_vs_default(option, default):
    """(mean, lo, hi, n) of option[s] - default[s] over the seeds s both dicts (seed -> score)
    have, with the protocol's bootstrap interval; n = 0 gives nan."""
    diffs = [option[s] - default[s] for s in sorted(set(option) & set(default))]
    mean, lo, hi = bootstrap(diffs) if diffs else (float("nan"),) * 3
    return mean, lo, hi, len(diffs)


def commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{r[k]:.6g}" if isinstance(r[k], float) else r[k]) for k in fields})
    meta = {"command": " ".join(["/usr/bin/python3"] + sys.argv), "commit": commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
    with open(path + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def check_regime(out, regime):
    """Curves of one OUT are of one regime: OUT/regime.txt records it, and another is refused
    (a resumed protocol would otherwise mix them)."""
    path = os.path.join(out, "regime.txt")
    if os.path.exists(path):
        with open(path) as f:
            have = f.read().strip()
        if have != regime:
            sys.exit(f"quality_protocol: {out} holds curves of --regime {have}; pass "
                     f"--regime {have} or another --out")
        return
    os.makedirs(out, exist_ok=True)
    with open(path, "w") as f:
        f.write(regime + "\n")


def plan(grid, seeds_done, parity=None):
    """The (workload, scheme, budget, seed) runs of `grid`; `seeds_done` maps a (workload,
    scheme, budget) to the stt_full values measured so far and `parity` a workload to the
    stt_full at parity (the lower end of full sync's leave-one-out interval; PARITY without
    one), for the parity extension."""
    g = GRIDS[grid]
    out = []
    for w in g["workloads"]:
        if "seed_lists" in g:  # seeds of its own per workload, the same for every run
            seeds = g["seed_lists"][w]
            out += [(w, "full", None, s) for s in seeds]
            for scheme in g["schemes"]:
                budgets = [None] if scheme in g.get("lossless", []) else g["budgets"]
                out += [(w, scheme, b, s) for b in budgets for s in seeds]
            continue
        for s in range(g["ref_seeds"]):
            out.append((w, "full", None, SEED0 + s))
        for scheme in g["schemes"]:
            for b in g["budgets"]:
                n = g["headline_seeds"] if b in g["headline"] else g["seeds"]
                out += [(w, scheme, b, SEED0 + s) for s in range(n)]
            if g["parity"]:
                for b in sorted(g["budgets"], key=lambda x: float(x[:-1])):
                    done = seeds_done.get((w, scheme, b), [])
                    level = (parity or {}).get(w, PARITY)
                    if len(done) >= g["seeds"] and np.mean(done) >= level:
                        out += [(w, scheme, b, SEED0 + s) for s in range(g["headline_seeds"])]
                        break
    seen = set()
    return [r for r in out if not (r in seen or seen.add(r))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    engine.add_binary_args(ap, "sync-curves")
    ap.add_argument("--out", help="output folder (default results/runs/quality-protocol-GRID, "
                    "ignored by git; name results/quality/... to remake the committed tables)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="small")
    ap.add_argument("--workloads", default="", help="comma list: restrict the grid's workloads")
    ap.add_argument("--budgets", default="",
                    help="comma list: restrict the grid's budgets (e.g. 1.6%%: its headline only)")
    ap.add_argument("--schemes", default="", help="comma list: restrict the grid's schemes")
    ap.add_argument("--dry-run", action="store_true", help="print the runs still missing")
    ap.add_argument("--refs-only", action="store_true",
                    help="run only the full-sync references (full sync's smoothness first)")
    ap.add_argument("--no-run", action="store_true",
                    help="run nothing: write the tables from the curves already there (a "
                         "protocol still under way, evaluated as far as it got)")
    ap.add_argument("--pretrain", default="build/models/pretrain-text",
                    help="pretrain-text, for the size grid's bases")
    ap.add_argument("--ckpt-dir", default="results/runs/text-bases",
                    help="where the size grid's bases are made and kept")
    ap.add_argument("--nice", type=int, default=10, choices=range(0, 20), metavar="0-19",
                    help="niceness of each run (default 10: the protocol yields to other work)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at a time (default 1; each run uses one thread)")
    ap.add_argument("--dask", metavar="ADDRESS|local[:N]",
                    help="run on a Dask cluster (scripts/README.md) instead of this machine")
    ap.add_argument("--regime", choices=sorted(REGIMES),
                    help="what a percentage budget is of: the modelled Qwen2.5-7B rank-64 "
                         "adapter, its directions per matrix handed to the learner (default; "
                         "the planted grid: learner), or the learner's own adapter")
    ap.add_argument("--endpoint-evals", type=int, default=ENDPOINT_EVALS,
                    help="evaluations averaged into a curve's endpoint (default 3)")
    args = ap.parse_args()
    args.out = args.out or engine.default_out(f"quality-protocol-{args.grid}")
    args.regime = args.regime or GRIDS[args.grid].get("regime", "modelled")
    if args.jobs < 1 or args.endpoint_evals < 1:
        sys.exit("quality_protocol: --jobs and --endpoint-evals must be >= 1")
    check_regime(args.out, args.regime)
    if args.workloads:
        keep = args.workloads.split(",")
        bad = [w for w in keep if w not in WORKLOADS]
        if bad:
            sys.exit(f"quality_protocol: unknown workload(s) {bad}; known: {list(WORKLOADS)}")
        GRIDS[args.grid]["workloads"] = [w for w in GRIDS[args.grid]["workloads"] if w in keep]
    if args.budgets:
        keep = args.budgets.split(",")
        bad = [b for b in keep if b not in GRIDS[args.grid]["budgets"]]
        if bad:
            sys.exit(f"quality_protocol: budget(s) {bad} not in grid {args.grid}: "
                     f"{GRIDS[args.grid]['budgets']}")
        GRIDS[args.grid]["budgets"] = [b for b in GRIDS[args.grid]["budgets"] if b in keep]
    if args.schemes:
        keep = args.schemes.split(",")
        bad = [s for s in keep if s not in GRIDS[args.grid]["schemes"]]
        if bad:
            sys.exit(f"quality_protocol: scheme(s) {bad} not in grid {args.grid}: "
                     f"{GRIDS[args.grid]['schemes']}")
        GRIDS[args.grid]["schemes"] = [s for s in GRIDS[args.grid]["schemes"] if s in keep]

    def evaluate():
        """Metrics of every curve present for the grid's runs, and the references."""
        refs, runs = {}, []
        todo = plan(args.grid, {})
        for w in GRIDS[args.grid]["workloads"]:
            seeds = [s for (ww, sc, b, s) in todo if ww == w and sc == "full"
                     and os.path.exists(curve_path(args.out, w, "full", None, s))]
            if len(seeds) >= 5:
                curves = [read_curve(curve_path(args.out, w, "full", None, s)) for s in seeds]
                sign = -1.0 if curves[0][3] == "reverse_kl" else 1.0
                # Progress from each run's own start: seeds differ in their held-out prompts, so
                # their initial qualities differ too.
                by_seed = {s: sign * (c[1] - c[1][0]) for s, c in zip(seeds, curves)}
                refs[w] = (curves[0][0], np.mean(list(by_seed.values()), axis=0), sign,
                           len(seeds), curves, by_seed)
        return refs, runs

    def loo(w, seed):
        """The reference without full sync's run of `seed` (its leave-one-out reference)."""
        by_seed = refs[w][5]
        return np.mean([x for s, x in by_seed.items() if s != seed], axis=0)

    def parity_levels():
        """Full sync's own score per workload: each full-sync run against the mean of the
        others (stt_full; mean and bootstrap interval over seeds). A budget is at parity when
        a scheme's mean stt_full reaches the interval's lower end."""
        out = {}
        for w, ref in refs.items():
            t = ref[0]
            scores = [arm_metrics(t, x, t, loo(w, s), args.endpoint_evals)["stt_full"]
                      for s, x in ref[5].items()]
            out[w] = bootstrap(scores)
        return out

    # Pass 1: the grid; pass 2 (full grid): extend parity budgets, known only after pass 1.
    for _ in range(2):
        refs, _ = evaluate()
        levels = parity_levels()
        done = {}
        for (w, scheme, b, seed) in plan(args.grid, {}):
            p = curve_path(args.out, w, scheme, b, seed)
            if scheme != "full" and w in refs and os.path.exists(p):
                t, q, _, _ = read_curve(p)
                m = arm_metrics(t, refs[w][2] * (q - q[0]), refs[w][0], refs[w][1],
                                args.endpoint_evals)
                done.setdefault((w, scheme, b), []).append(m["stt_full"])
        parity = {w: lv[1] for w, lv in levels.items()}
        todo = [r for r in plan(args.grid, done, parity)
                if not os.path.exists(curve_path(args.out, *r))
                and not os.path.exists(infeasible_path(curve_path(args.out, *r)))
                and (r[1] == "full" or not args.refs_only)]
        # References first, then the headline budgets (their ten seeds carry the ranking), so
        # that a stopped protocol can already be evaluated where it matters most.
        headline = GRIDS[args.grid]["headline"]
        todo.sort(key=lambda r: (r[1] != "full", r[2] not in headline))
        if args.no_run:
            break
        if args.dry_run:
            for r in todo:
                print(*r)
            return
        if todo:  # a protocol whose curves are all there needs no binary
            try:
                engine.check_binary(args.sync_curves, "sync-curves")
            except engine.BadInput as e:
                print(f"quality_protocol.py: {e}", file=sys.stderr)
                return 2
        for w in sorted({r[0] for r in todo}):
            ensure_base(args.pretrain, w, args.ckpt_dir, args.nice)
        tasks = []
        for (w, scheme, b, seed) in todo:
            p = curve_path(args.out, w, scheme, b, seed)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            tasks.append(run_task(args.sync_curves, w, scheme, b, seed, p,
                                  GRIDS[args.grid].get("steps", STEPS).get(w, STEPS[w]),
                                  args.ckpt_dir, args.regime, args.out, args.nice,
                                  GRIDS[args.grid].get("eval_every", 5)))
        # References run first: the parity extension of pass 2 and every score need them.
        for batch in ([t for t in tasks if "/full-" in t["slug"]],
                      [t for t in tasks if "/full-" not in t["slug"]]):
            if not batch:
                continue
            stopped = engine.run_all(batch, engine.make_executor(args.jobs, None, args.dask),
                                     "protocol", finish_task)
            failed = [t for t in batch if t["status"] in ("failed", "timeout")]
            if stopped or failed:
                sys.exit(f"quality_protocol: {len(failed)} run(s) failed"
                         f"{' and the protocol was stopped' if stopped else ''}; their logs are "
                         f"under {os.path.join(args.out, 'logs')}; rerun the same command to "
                         "resume")

    if GRIDS[args.grid].get("report") == "same-seed":
        g = GRIDS[args.grid]
        try:
            table = quality_same_seed.write_tables(args.out, g["workloads"], g["report_order"],
                                                   g["unbudgeted_tag"], write_csv)
        except ValueError as e:
            sys.exit(f"quality_protocol: {e}")
        print(f"{'workload':<9}{'scheme':<18}{'budget':>9}{'% adapter':>11}{'share':>8}"
              f"{'+-95%':>8}{'n':>3}")
        for r in table:
            print(f"{r['workload']:<9}{r['scheme']:<18}{r['budget']:>9}{r['fraction_pct']:>11}"
                  f"{r['share_mean']:>8}{r['share_ci95']:>8}{r['n']:>3}")
        return 0

    refs, _ = evaluate()
    rows, cost = [], {}
    for (w, scheme, b, seed) in plan(args.grid, done, parity):
        p = curve_path(args.out, w, scheme, b, seed)
        if not os.path.exists(p) or w not in refs:
            continue
        t, q, footer, metric = read_curve(p)
        cost.setdefault(w, []).append(footer.get("cpu_s", float("nan")))
        ref_t, ref_q, sign, n_ref, _, by_seed = refs[w]
        last = args.endpoint_evals
        x = sign * (q - q[0])
        # Full sync's own runs are scored against the others (leave-one-out: the parity
        # level); an arm against all of them, and paired with its own seed's full-sync run
        # against the same leave-one-out reference (same prompts and start).
        m = arm_metrics(t, x, ref_t, loo(w, seed) if scheme == "full" else ref_q, last)
        paired_diff, paired_ratio = float("nan"), float("nan")
        if scheme != "full" and seed in by_seed:
            ref_s = loo(w, seed)
            own = arm_metrics(ref_t, by_seed[seed], ref_t, ref_s, last)["stt_full"]
            paired_diff = arm_metrics(t, x, ref_t, ref_s, last)["stt_full"] - own
            paired_ratio = endpoint(x, last) / endpoint(by_seed[seed], last)
        rows.append({"workload": w, "scheme": scheme, "budget": b or "unlimited", "seed": seed,
                     "metric": metric, "initial_quality": float(q[0]),
                     "final_quality": float(q[-1]),
                     "endpoint_quality": endpoint(q, last),
                     "ref_final_progress": float(sign * endpoint(ref_q, last)),
                     "ref_runs": n_ref - (scheme == "full"),
                     "stt_full": m["stt_full"], "paired_stt_diff": paired_diff,
                     "paired_progress_ratio": paired_ratio, "stt_arm": m["stt_arm"],
                     "auc_share": m["auc_share"], "final_share": m["final_share"],
                     "solved": m["solved"],
                     "steps_to_target": ("" if m["steps_to_target"] is None
                                         else float(m["steps_to_target"])),
                     "fraction_pct": footer.get("mean_fraction_pct", float("nan")),
                     "buys_modelled": footer.get("buys_modelled", float("nan")),
                     "buys_learner": footer.get("buys_learner", float("nan")),
                     "hash_mismatches": int(footer.get("hash_mismatches", -1)),
                     "gradient_at_replicas": footer["gradient_at_replicas"],
                     "cpu_s": footer.get("cpu_s", float("nan"))})
    os.makedirs(args.out, exist_ok=True)
    g = GRIDS[args.grid]
    prefix = g.get("table_prefix")  # a grid that writes only PREFIX-table.{csv,md}
    table_md = os.path.join(args.out, f"{prefix or 'protocol'}-table.md")
    if not prefix:
        write_csv(os.path.join(args.out, "protocol-runs.csv"),
                  ["workload", "scheme", "budget", "seed", "metric", "initial_quality",
                   "final_quality", "endpoint_quality", "ref_final_progress", "ref_runs",
                   "stt_full", "paired_stt_diff", "paired_progress_ratio", "stt_arm",
                   "auc_share", "final_share", "solved", "steps_to_target", "fraction_pct",
                   "buys_modelled", "buys_learner", "hash_mismatches", "gradient_at_replicas",
                   "cpu_s"], rows)

    def default_scores(w, b):
        """seed -> stt_full of the grid's default scheme's runs at (w, b) present in runs/,
        scored as every row is (against the mean reference, the same endpoint)."""
        ref_t, ref_q, sign = refs[w][0], refs[w][1], refs[w][2]
        out = {}
        for s in range(g["headline_seeds"] if b in g["headline"] else g["seeds"]):
            p = curve_path(args.out, w, g["paired_default"], b, SEED0 + s)
            if os.path.exists(p):
                t, q, _, _ = read_curve(p)
                out[SEED0 + s] = arm_metrics(t, sign * (q - q[0]), ref_t, ref_q,
                                             args.endpoint_evals)["stt_full"]
        return out

    groups = {}
    for r in rows:
        groups.setdefault((r["workload"], r["scheme"], r["budget"]), []).append(r)
    table = []
    for (w, scheme, b), rs in groups.items():
        row = {"workload": w, "scheme": scheme, "budget": b, "n": len(rs),
               "fraction_pct": float(np.mean([r["fraction_pct"] for r in rs])),
               "buys_modelled": float(np.mean([r["buys_modelled"] for r in rs])),
               "buys_learner": float(np.mean([r["buys_learner"] for r in rs])),
               "solved": f"{sum(r['solved'] for r in rs)}/{len(rs)}",
               "hash_mismatches": sum(r["hash_mismatches"] for r in rs),
               "bit_identical": int(all(r["gradient_at_replicas"] for r in rs))}
        for k in ("stt_full", "paired_stt_diff", "paired_progress_ratio", "stt_arm",
                  "auc_share", "final_share", "endpoint_quality"):
            vals = [r[k] for r in rs if r[k] == r[k]]  # paired values need the seed's full run
            mean, lo, hi = bootstrap(vals) if vals else (float("nan"),) * 3
            row[k], row[k + "_lo"], row[k + "_hi"] = mean, lo, hi
        if g.get("paired_default"):
            # Each option against the default on the same seed: the ranking of options, which
            # their intervals against full sync (shared between options) cannot give.
            paired = ((float("nan"),) * 3 + (0,) if scheme in ("full", g["paired_default"])
                      else paired_vs_default({r["seed"]: r["stt_full"] for r in rs},
                                             default_scores(w, b)))
            for k, v in zip(("", "_lo", "_hi", "_n"), paired):
                row["paired_vs_default" + k] = v
        table.append(row)
    fields = ["workload", "scheme", "budget", "n", "fraction_pct", "buys_modelled",
              "buys_learner", "stt_full", "stt_full_lo", "stt_full_hi", "paired_stt_diff",
              "paired_stt_diff_lo", "paired_stt_diff_hi", "paired_progress_ratio",
              "paired_progress_ratio_lo", "paired_progress_ratio_hi", "stt_arm", "stt_arm_lo",
              "stt_arm_hi", "auc_share", "auc_share_lo", "auc_share_hi", "final_share",
              "final_share_lo", "final_share_hi", "endpoint_quality", "endpoint_quality_lo",
              "endpoint_quality_hi", "solved", "hash_mismatches", "bit_identical"]
    if g.get("paired_default"):
        fields += ["paired_vs_default", "paired_vs_default_lo", "paired_vs_default_hi",
                   "paired_vs_default_n"]
    write_csv(table_md[:-len(".md")] + ".csv", fields, table)

    vs_default_note = vs_default_head = vs_default_rule = ""
    if g.get("paired_default"):
        vs_default_note = (f"; paired vs default: each option's stt_full less "
                           f"{g['paired_default']}'s at the same budget on the same seed, over "
                           "the seeds both have (n)")
        vs_default_head, vs_default_rule = "paired vs default | ", "---:|"

    def vs_default_cell(r):
        if not g.get("paired_default"):
            return ""
        if r["scheme"] == g["paired_default"]:
            return "(the default) | "
        if r["scheme"] == "full":
            return " | "
        return (f"{r['paired_vs_default']:+.3f} [{r['paired_vs_default_lo']:+.3f}, "
                f"{r['paired_vs_default_hi']:+.3f}] (n {r['paired_vs_default_n']}) | "
                if r["paired_vs_default_n"] else "(n 0) | ")

    with open(table_md, "w") as f:
        for w in GRIDS[args.grid]["workloads"]:
            if w not in refs:
                continue
            if not any(r["workload"] == w and r["scheme"] != "full" for r in table):
                f.write(f"**{w}**: the {refs[w][3]} full-sync references only; no arm has run "
                        "yet.\n\n")
                continue
            f.write(f"**{w}** (reference: mean progress of {refs[w][3]} full-sync runs, "
                    f"{refs[w][2] * endpoint(refs[w][1], args.endpoint_evals):+.4g} "
                    f"{refs[w][4][0][3]} from each run's start; endpoints: the mean of the last "
                    f"{args.endpoint_evals} evaluations; regime {args.regime}; mean [bootstrap "
                    f"95% interval] over seeds; full sync's row: each run against the others, "
                    f"the parity level; paired: each arm against its own seed's full-sync run"
                    f"{vs_default_note})\n\n| scheme | budget | n | learner's bytes % | "
                    f"directions (modelled / learner) | stt_full | paired stt diff | paired "
                    f"progress ratio | {vs_default_head}stt_arm | solved | bit-identical |\n"
                    f"|---|---:|---:|---:|---:|---:|---:|---:|{vs_default_rule}---:|---:|---:|\n")
            cell = lambda r, k: (f"{r[k]:.3f} [{r[k + '_lo']:.3f}, {r[k + '_hi']:.3f}]"
                                 if r[k] == r[k] else "")
            for r in sorted((r for r in table if r["workload"] == w),
                            key=lambda r: r["scheme"] != "full"):
                buys = (f"{r['buys_modelled']:.3g} / {r['buys_learner']:.3g}"
                        if r["buys_modelled"] == r["buys_modelled"] and r["scheme"] != "full"
                        else "")
                bytes_pct = f"{r['fraction_pct']:.2f}" if r["scheme"] != "full" else "100"
                name = "full (leave-one-out)" if r["scheme"] == "full" else r["scheme"]
                f.write(f"| {name} | {r['budget']} | {r['n']} | {bytes_pct} | {buys} "
                        f"| {cell(r, 'stt_full')} | {cell(r, 'paired_stt_diff')} | "
                        f"{cell(r, 'paired_progress_ratio')} | {vs_default_cell(r)}"
                        f"{cell(r, 'stt_arm')} | "
                        f"{r['solved']} | "
                        f"{'-' if r['scheme'] == 'full' else 'yes' if r['bit_identical'] else 'no'}"
                        f" |\n")
            cannot = {}
            for (ww, scheme, b, seed) in plan(args.grid, done, parity):
                q = infeasible_path(curve_path(args.out, ww, scheme, b, seed))
                if ww == w and os.path.exists(q):
                    cannot.setdefault((scheme, b), open(q).read().strip())
            for (scheme, b), why in cannot.items():
                f.write(f"\n{scheme} at {b}: infeasible ({why.split(': ', 1)[-1]})\n")
            f.write("\n")

    # Full sync's own smoothness. Reward tasks: a seed reaches when its best reward is >= 90% of
    # the best reward of any seed, and stalls when its final reward is below 50% of that best.
    # Distillation (KL, lower is better): the same on progress from each run's start (KL_0 - KL),
    # since seeds start from different held-out prompts.
    smooth = []
    for w in GRIDS[args.grid]["workloads"]:
        if w not in refs:
            continue
        sign, curves = refs[w][2], refs[w][4]
        reward = sign > 0
        series = [c[1] if reward else sign * (c[1] - c[1][0]) for c in curves]
        best = max(float(np.max(x)) for x in series)
        for c, x in zip(curves, series):
            smooth.append({"workload": w, "metric": c[3], "basis": "reward" if reward else
                           "progress", "best": float(np.max(x)), "final": float(x[-1]),
                           "best_of_all": best,
                           "reaches_90pct": int(float(np.max(x)) >= TARGET * best),
                           "stalls": int(float(x[-1]) < 0.5 * best)})
    if not prefix:
        write_csv(os.path.join(args.out, "full-sync-seeds.csv"),
                  ["workload", "metric", "basis", "best", "final", "best_of_all",
                   "reaches_90pct", "stalls"], smooth)
    with open(table_md, "a") as f:
        f.write("**Full sync's own runs** (a seed reaches when its best reward - for distillation "
                "its best progress KL_0 - KL - is >= 90% of the best of any seed, and stalls when "
                "it ends below 50% of that best)\n\n| workload | basis | seeds | reach 90% of "
                "the best | stall |\n|---|---|---:|---:|---:|\n")
        for w in GRIDS[args.grid]["workloads"]:
            rs = [r for r in smooth if r["workload"] == w]
            if rs:
                f.write(f"| {w} | {rs[0]['basis']} | {len(rs)} | "
                        f"{sum(r['reaches_90pct'] for r in rs)}/{len(rs)} | "
                        f"{sum(r['stalls'] for r in rs)}/{len(rs)} |\n")
        f.write("\n")

    # Cost: measured CPU seconds per run of this grid (at its step counts) and what its whole plan
    # costs at that rate.
    cost_rows = []
    for w in GRIDS[args.grid]["workloads"]:
        per = [c for c in cost.get(w, []) if c == c]
        n_plan = sum(1 for r in plan(args.grid, done, parity) if r[0] == w)
        mean = float(np.mean(per)) if per else float("nan")
        cost_rows.append({"workload": w, "steps": GRIDS[args.grid].get("steps", STEPS).get(
                              w, STEPS[w]), "runs_measured": len(per), "cpu_s_per_run": mean,
                          "grid_runs": n_plan, "grid_cpu_h": mean * n_plan / 3600})
    if not prefix:
        write_csv(os.path.join(args.out, "protocol-cost.csv"),
                  ["workload", "steps", "runs_measured", "cpu_s_per_run", "grid_runs",
                   "grid_cpu_h"], cost_rows)
    print(open(table_md).read())


if __name__ == "__main__":
    sys.exit(main())
