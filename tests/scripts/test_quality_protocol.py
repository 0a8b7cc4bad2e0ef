#!/usr/bin/python3
"""scripts/quality_protocol.py checked on curves with known answers
(CTest: scripts.quality_protocol).

Usage: tests/scripts/test_quality_protocol.py [BUILD_DIR]   (from the repository root)

  1. The metrics: an arm that follows the reference has steps-to-target and AUC share 1; one at
     half the pace has stt_full 1/2; one that never reaches the target is not solved.
  2. The protocol end to end with a stand-in for sync-curves whose curves are known: --refs-only
     runs the references alone, --no-run evaluates without running; the table's stt_full, solved
     k/n, full sync's leave-one-out parity level, the paired differences and the full-sync
     smoothness (a stalled reference seed is counted as such) come out as computed by hand, a
     rerun reuses every curve (resumes), and another --regime in the same folder is refused.
  3. The planted grid (--grid planted, the planted-teacher sweep of results/quality): a stand-in
     binary sees each workload's own seeds, its step count and evaluation interval, a budget
     only for budgeted schemes and no regime flags, writes "lossless" curves for the others, and
     the same-seed share comes out as computed by hand; the committed results/quality/table.csv
     and runs.csv are what the driver makes from the committed curves, byte for byte.
  4. The spar-options grids: each option's "paired vs default" (per seed, its stt_full less
     hilo-spar's on the same seed; mean and the protocol's bootstrap interval over the seeds both
     have) on hand-made scores and, end to end, on a stand-in binary's seed-dependent curves with
     one default seed missing (left out, n shown); the grid writes spar-options-table.* and none
     of the full grid's files.
  5. With BUILD_DIR (pretrain-text and sync-curves built): a tiny text base of another shape is
     made, sync-curves trains on it through --text-checkpoint, and bad shapes or a missing
     checkpoint exit 2 naming the flag.
"""
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import quality_protocol as qp  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def metrics():
    t = np.arange(0, 61, 5, dtype=float)
    ref = 1 - np.exp(-t / 15)
    m = qp.arm_metrics(t, ref.copy(), t, ref)
    check(abs(m["stt_full"] - 1) < 1e-9 and abs(m["stt_arm"] - 1) < 1e-9
          and abs(m["auc_share"] - 1) < 1e-9 and abs(m["final_share"] - 1) < 1e-9
          and m["solved"] == 1, "identical arm scores 1")
    half = 1 - np.exp(-t / 30)  # the reference's progress at t / 2
    m = qp.arm_metrics(t, half, t, ref)
    # Full sync reaches the arm's final quality 1 - e^-2 at t = 30 of 60 (interpolated).
    check(abs(m["stt_full"] - 0.5) < 0.02,
          f"half-pace arm stt_full ~ 0.5 (got {m['stt_full']:.3f})")
    want = (1 - np.exp(-2)) / (1 - np.exp(-4))  # final progress over the reference's
    check(abs(m["final_share"] - want) < 1e-9,
          f"half-pace arm final_share = {want:.4f} (got {m['final_share']:.4f})")
    flat = 0.3 * ref
    m = qp.arm_metrics(t, flat, t, ref)
    check(m["solved"] == 0 and m["stt_arm"] == 0.0, "arm below the 90% target is not solved")
    check(abs(m["final_share"] - 0.3) < 1e-9, f"flat arm final_share 0.3 (got "
          f"{m['final_share']:.4f})")
    # The endpoint is the mean of the last evaluations: an arm that ends on one lucky evaluation
    # is scored on the three.
    spike = ref.copy()
    spike[-1] += 0.3
    check(abs(qp.endpoint(spike, 3) - (ref[-3:].sum() + 0.3) / 3) < 1e-12,
          "the endpoint averages the last three evaluations")
    check(qp.arm_metrics(t, spike, t, ref, 1)["stt_full"] == 1.0 and
          qp.arm_metrics(t, spike, t, ref, 3)["final_share"] <
          qp.arm_metrics(t, spike, t, ref, 1)["final_share"],
          "a one-evaluation spike counts less over three evaluations")


FAKE = r'''#!/usr/bin/python3
import math, sys
a = sys.argv[1:]
v = lambda k: a[a.index(k) + 1]
steps, seed, strategy, out = int(v("--steps")), int(v("--seed")), v("--strategy"), v("--out")
tau = 10.0 if strategy == "full" else 20.0
scale = 0.2 if (strategy == "full" and seed == 103) else 1.0  # one stalled reference seed
with open(out, "w") as f:
    f.write("version,metric,quality,gradient_at_replica_view\n")
    for s in range(steps + 1):
        q = 0.1 + scale * 0.8 * (1 - math.exp(-s / tau)) if s % 5 == 0 else ""
        f.write(f"{s},mean_reward,{q},1\n")
    f.write("# mean_payload_bytes=10 mean_fraction_pct=1.5 hash_mismatches=0\n")
'''


def stand_in(d, source):
    """(the stand-in binary's path, its output folder, the protocol command using it) in d."""
    fake = os.path.join(d, "sync-curves")
    with open(fake, "w") as f:
        f.write(source)
    os.chmod(fake, 0o755)
    out = os.path.join(d, "out")
    return fake, out, ["/usr/bin/python3", os.path.join(ROOT, "scripts", "quality_protocol.py"),
                       "--sync-curves", fake, "--out", out, "--grid", "small", "--workloads",
                       "randomwalks", "--endpoint-evals", "1"]


def end_to_end():
    with tempfile.TemporaryDirectory() as d:
        fake, out, cmd = stand_in(d, FAKE)
        r = subprocess.run(cmd + ["--refs-only"], capture_output=True, text=True)
        made = sorted(os.listdir(os.path.join(out, "runs", "randomwalks")))
        check(r.returncode == 0 and len(made) == 5 and all(f.startswith("full-") for f in made),
              f"--refs-only runs the 5 references and nothing else ({made})")
        os.chmod(fake, 0o644)  # --no-run must not call the binary
        r = subprocess.run(cmd + ["--no-run"], capture_output=True, text=True)
        rows = list(csv.DictReader(open(os.path.join(out, "protocol-table.csv"))))
        check(r.returncode == 0 and [x for x in rows if x["scheme"] != "full"] == [] and
              os.path.exists(os.path.join(out, "full-sync-seeds.csv")),
              "--no-run writes the tables from what is there (no arm yet) without running")
        os.chmod(fake, 0o755)
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"protocol with a stand-in binary exits 0 ({r.stderr[-300:]})")
        if r.returncode != 0:
            return
        rows = list(csv.DictReader(open(os.path.join(out, "protocol-table.csv"))))
        arm = [x for x in rows if x["scheme"] == "hilo-spar"]
        check(len(arm) == 1 and arm[0]["n"] == "3", "one arm row over 3 seeds")
        # By hand: reference = mean of 5 seeds' progress 0.8(1-e^-t/10) (seed 103 at 0.2 of it),
        # i.e. 0.672(1-e^-t/10); the arm ends at 0.8(1-e^-1) = 0.5057 at t = 20, which the
        # reference reaches at t = -10 ln(1 - 0.5057/0.672) = 14.0 (interpolated on the 5-step
        # grid: a little later), so stt_full ~ 0.69.
        stt = float(arm[0]["stt_full"])
        check(0.66 < stt < 0.74, f"stt_full as computed by hand (got {stt:.3f})")
        check(arm[0]["solved"] == "0/3", "the arm misses 90% of the reference's progress: 0/3")
        # The reference's final progress is 0.672(1-e^-2) = 0.5811: a share of 0.5057 / 0.5811.
        share = float(arm[0]["final_share"])
        check(abs(share - 0.8703) < 1e-3, f"final_share as computed by hand (got {share:.4f})")
        smooth = list(csv.DictReader(open(os.path.join(out, "full-sync-seeds.csv"))))
        reach = sum(int(x["reaches_90pct"]) for x in smooth)
        stalls = sum(int(x["stalls"]) for x in smooth)
        check(len(smooth) == 5 and reach == 4 and stalls == 1,
              f"full-sync smoothness: 4/5 reach, 1/5 stalls (got {reach}, {stalls})")
        md = open(os.path.join(out, "protocol-table.md")).read()
        check("| randomwalks | reward | 5 | 4/5 | 1/5 |" in md,
              "the smoothness row is in the Markdown")
        # Full sync against itself (leave-one-out): seeds 101/102/104/105 end above the mean of
        # the others (stt_full 1); seed 103 (0.2 of the others' progress) ends at 0.138, which
        # the other four's mean 0.8(1-e^-t/10) passes at t ~ 2.2 on the 5-step grid: the parity
        # level is (4 + 0.11) / 5 = 0.82.
        full = [x for x in rows if x["scheme"] == "full"]
        level = float(full[0]["stt_full"]) if full else -1
        check(len(full) == 1 and full[0]["n"] == "5" and abs(level - 0.822) < 0.01,
              f"full sync's leave-one-out parity level 0.82 (got {level:.3f})")
        check("| full (leave-one-out) | unlimited | 5 |" in md, "the parity row is in the table")
        # Paired: seed 101's arm (0.8(1-e^-1) = 0.5057 at its end) against the mean of full
        # sync's other seeds, 0.64(1-e^-t/10), reached at t ~ 15.8 of 20 (stt 0.788), less its own
        # full-sync run's leave-one-out score 1; progress ratio 0.5057 / 0.8(1-e^-2) = 0.731.
        per_run = {(x["scheme"], x["seed"]): x for x in
                   csv.DictReader(open(os.path.join(out, "protocol-runs.csv")))}
        arm101 = per_run.get(("hilo-spar", "101"), {})
        diff = float(arm101.get("paired_stt_diff", "nan"))
        ratio = float(arm101.get("paired_progress_ratio", "nan"))
        check(abs(diff + 0.212) < 0.01, f"paired stt_full difference by hand (got {diff:.3f})")
        check(abs(ratio - 0.7311) < 1e-3, f"paired progress ratio by hand (got {ratio:.4f})")
        r = subprocess.run(cmd + ["--regime", "learner"], capture_output=True, text=True)
        check(r.returncode != 0 and "--regime modelled" in r.stderr,
              "curves of another regime in the same folder are refused")
        os.chmod(fake, 0o644)  # a rerun must not call the binary again
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, "a rerun reuses every curve (the binary is not runnable now)")


def infeasible():
    """A budget below the scheme's smallest payload (exit 2, budget_too_small) is recorded as
    infeasible, reported, not retried, and does not stop the protocol; any other failure does."""
    fake_src = FAKE.replace('tau = 10.0', 'if strategy != "full" and seed == 102:\n'
                            '    sys.stderr.write("sync-curves: budget_too_small: budget 1.6% is '
                            'below the smallest payload\\n")\n    sys.exit(2)\ntau = 10.0')
    with tempfile.TemporaryDirectory() as d:
        fake, out, cmd = stand_in(d, fake_src)
        r = subprocess.run(cmd + ["--jobs", "2"], capture_output=True, text=True)
        runs = os.path.join(out, "runs", "randomwalks")
        marker = os.path.join(runs, "hilo-spar-1p6pct-s102.infeasible")
        check(r.returncode == 0 and os.path.exists(marker),
              "an infeasible budget is recorded and the protocol goes on")
        md = open(os.path.join(out, "protocol-table.md")).read()
        check("hilo-spar at 1.6%: infeasible" in md and "| hilo-spar | 1.6% | 2 |" in md,
              "the table says so and counts the feasible seeds")
        os.chmod(fake, 0o644)
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, "an infeasible run is not retried")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'sync-curves: something else' >&2\nexit 2\n")
        os.chmod(fake, 0o755)
        os.remove(os.path.join(runs, "hilo-spar-1p6pct-s103.csv"))
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode != 0 and "something else" in r.stderr,
              "any other failure stops the protocol with the run's error shown")


def tools(build):
    pretrain = os.path.join(build, "models", "pretrain-text")
    sync = os.path.join(build, "models", "sync-curves")
    with tempfile.TemporaryDirectory() as d:
        ckpt = os.path.join(d, "tiny.bin")
        r = subprocess.run([pretrain, "--out", ckpt, "--d-model", "30", "--heads", "4"],
                           capture_output=True, text=True)
        check(r.returncode == 2 and "--d-model" in r.stderr, "heads not dividing d_model: exit 2")
        r = subprocess.run([pretrain, "--out", ckpt, "--d-model", "32", "--layers", "1", "--heads",
                            "2", "--base-steps", "3", "--teacher-steps", "2", "--batch", "2"],
                           capture_output=True, text=True)
        check(r.returncode == 0 and "parameters (d_model 32, 1 blocks" in r.stderr,
              f"a tiny base of another shape is made ({r.stderr[-200:]})")
        base = [sync, "--kind", "distill", "--preset", "sim", "--teacher", "finetuned",
                "--lora-rank", "4", "--prompt-tokens", "8", "--gen-tokens", "4",
                "--prompts-per-worker", "2", "--eval-prompts", "4", "--steps", "2",
                "--workers", "1", "--eval-every", "1", "--strategy", "hilo", "--compressor",
                "spar", "--budget", "5%"]
        curve = os.path.join(d, "c.csv")
        r = subprocess.run(base + ["--text-checkpoint", ckpt, "--out", curve],
                           capture_output=True, text=True)
        lines = open(curve).read().splitlines() if os.path.exists(curve) else []
        data = [x for x in lines if x and not x.startswith("#")]
        check(r.returncode == 0 and len(data) == 4,
              f"sync-curves trains on it through --text-checkpoint ({r.stderr[-200:]})")
        # The modelled regime: a rank-based compressor gets the budget that buys the modelled
        # directions per matrix, an entry-based one keeps the fraction of its own adapter.
        modelled = ["--llm-profile", "Qwen2.5-7B", "--modelled-rank", "64", "--budget-transfer",
                    "directions", "--text-checkpoint", ckpt]
        for comp, what in (("spar", "directions"), ("topk", "entries")):
            args = [a if a != "spar" else comp for a in base] + modelled + ["--out", curve]
            r = subprocess.run(args, capture_output=True, text=True)
            head = " ".join(x for x in open(curve).read().splitlines()[:3] if x.startswith("#"))
            vals = dict(kv.split("=", 1) for kv in head.replace("#", " ").split() if "=" in kv)
            adapter, budget = int(vals.get("adapter_bytes", 0)), int(vals.get("budget_bytes", -1))
            bm, bl = float(vals.get("buys_modelled", 0)), float(vals.get("buys_learner", -1))
            check(r.returncode == 0 and vals.get("buys_unit") == what and abs(bl - bm) < 0.1 * bm
                  and (comp == "spar" or budget <= 0.05 * adapter + 1),
                  f"{comp} in the modelled regime buys the learner what it buys the 7B "
                  f"({bl:.4g} vs {bm:.4g}, budget {budget} of {adapter} bytes)")
        r = subprocess.run(base + ["--text-checkpoint", os.path.join(d, "none.bin")],
                           capture_output=True, text=True)
        check(r.returncode == 2 and "--text-checkpoint" in r.stderr and "none.bin" in r.stderr,
              "a missing checkpoint: exit 2 naming the flag and the path")
        r = subprocess.run(base + ["--text-checkpoint", ckpt, "--d-model", "64"],
                           capture_output=True, text=True)
        check(r.returncode == 2 and "does not fit" in r.stderr,
              "a shape the checkpoint does not hold: exit 2")


PLANTED_FAKE = r'''#!/usr/bin/python3
import math, sys
a = sys.argv[1:]
v = lambda k: a[a.index(k) + 1]
steps, strategy, out = int(v("--steps")), v("--strategy"), v("--out")
tau = 10.0 if strategy == "full" else 20.0
with open(out, "w") as f:
    f.write("# argv " + " ".join(a) + "\n")
    f.write("version,metric,quality,gradient_at_replica_view,master_gap_rel_l2,encode_s,decode_s\n")
    for s in range(steps + 1):
        q = 0.1 + 0.8 * (1 - math.exp(-s / tau)) if s % int(v("--eval-every")) == 0 else ""
        f.write(f"{s},mean_reward,{q},1,0,0.001,0.002\n")
    f.write("# mean_payload_bytes=10 mean_fraction_pct=1.5 hash_mismatches=0\n")
'''


def planted():
    with tempfile.TemporaryDirectory() as d:
        fake, out, _ = stand_in(d, PLANTED_FAKE)
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "scripts", "quality_protocol.py"),
               "--sync-curves", fake, "--out", out, "--grid", "planted", "--workloads", "grpo",
               "--schemes", "hilo-spar,delta-pulse", "--budgets", "1.6%"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"the planted grid with a stand-in binary exits 0 "
              f"({r.stderr[-300:]})")
        if r.returncode != 0:
            return
        folder = os.path.join(out, "runs", "grpo")
        made = sorted(os.listdir(folder))
        want = sorted(f"{n}-s{s}.csv" for n in ("full-lossless", "hilo-spar-1p6pct",
                                                 "delta-pulse-lossless") for s in (1, 2, 3))
        check(made == want, f"the planted runs: its own seeds 1-3, lossless without a budget "
              f"({made})")
        argv = {n: open(os.path.join(folder, n)).readline() for n in made}
        budgeted = argv["hilo-spar-1p6pct-s2.csv"]
        check(" --budget 1.6%" in budgeted and "--budget-transfer" not in budgeted and
              "--llm-profile" not in budgeted and " --steps 60 " in budgeted and
              " --eval-every 10 " in budgeted and " --lora-rank 64 " in budgeted,
              f"a budgeted run: its budget, the learner's regime, 60 steps, evaluations every 10 "
              f"({budgeted.strip()})")
        check(all("--budget" not in argv[n] for n in made if "lossless" in n),
              "lossless runs have no budget")
        rows = {(x["scheme"], x["budget"]): x for x in
                csv.DictReader(open(os.path.join(out, "table.csv")))}
        # The arm ends at 0.8(1-e^-3) of progress, full sync at 0.8(1-e^-6): share 0.9526.
        share = float(rows.get(("hilo-spar", "1.6%"), {}).get("share_mean", "nan"))
        check(abs(share - 0.95257) < 1e-4, f"the same-seed share by hand (got {share})")
        check(rows.get(("full", "lossless"), {}).get("share_mean") == "1.0000" and
              os.path.exists(os.path.join(out, "table.csv.meta.json")),
              "full sync's own share is 1, the table has its provenance sidecar")
        r = subprocess.run(cmd[:-6] + ["--grid", "planted", "--schemes", "nope"],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "nope" in r.stderr, "an unknown scheme is refused by name")

    committed = os.path.join(ROOT, "results", "quality")
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.join(committed, "runs"), os.path.join(d, "runs"))
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts",
                                                             "quality_protocol.py"),
                            "--sync-curves", "/nonexistent", "--grid", "planted", "--out", d],
                           capture_output=True, text=True)
        same = all(r.returncode == 0 and os.path.exists(os.path.join(d, n)) and
                   open(os.path.join(d, n)).read() == open(os.path.join(committed, n)).read()
                   for n in ("table.csv", "runs.csv"))
        check(same, "the committed planted table.csv and runs.csv are what the driver makes from "
              f"the committed curves (no binary needed) ({r.stderr[-300:]})")


def paired_vs_default():
    """The pairing by seed on hand-made scores: seed 103 has no default run and seed 104 no
    option run, so only 101 and 102 count."""
    from stats_helper import mean_bootstrap
    option = {101: 0.50, 102: 0.70, 103: 0.60}
    default = {101: 0.40, 102: 0.45, 104: 0.90}
    mean, lo, hi, n = qp.paired_vs_default(option, default)
    check(n == 2 and abs(mean - 0.175) < 1e-12,
          f"paired vs default: seeds 101 and 102 only, mean (0.10 + 0.25) / 2 = 0.175 "
          f"(got {mean:.4f}, n {n})")
    check((lo, hi) == mean_bootstrap([0.50 - 0.40, 0.70 - 0.45])[1:] and
          0.10 - 1e-12 <= lo <= mean <= hi <= 0.25 + 1e-12,
          f"its interval is the protocol's bootstrap of the two differences ([{lo:.3f}, "
          f"{hi:.3f}])")
    mean, lo, hi, n = qp.paired_vs_default({101: 0.5}, {102: 0.5})
    check(n == 0 and mean != mean and lo != lo and hi != hi, "no common seed: n 0, nan")


# Arms learn at a pace of their seed's own (tau 20, 25, 30 for seeds 101-103), preconditioned
# allocation 1/0.8 as fast on every seed: the option beats the default on each seed by a
# different amount, so pairing with the wrong seed gives another mean.
OPTIONS_FAKE = r'''#!/usr/bin/python3
import math, sys
a = sys.argv[1:]
v = lambda k: a[a.index(k) + 1]
steps, seed, strategy, out = int(v("--steps")), int(v("--seed")), v("--strategy"), v("--out")
tau = 10.0 if strategy == "full" else (20.0 + 5 * (seed - 101)) * (
    0.8 if "allocation=preconditioned" in v("--options") else 1.0)
with open(out, "w") as f:
    f.write("version,metric,quality,gradient_at_replica_view\n")
    for s in range(steps + 1):
        q = 0.1 + 0.8 * (1 - math.exp(-s / tau)) if s % 5 == 0 else ""
        f.write(f"{s},mean_reward,{q},1\n")
    f.write("# mean_payload_bytes=10 mean_fraction_pct=1.5 hash_mismatches=0\n")
'''


def spar_options():
    with tempfile.TemporaryDirectory() as d:
        fake, out, cmd = stand_in(d, OPTIONS_FAKE)
        cmd = [x if x != "small" else "spar-options" for x in cmd]
        cmd = cmd[:cmd.index("--endpoint-evals")] + ["--schemes", "hilo-spar,hilo-spar-precond"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"the spar-options grid with a stand-in binary exits 0 "
              f"({r.stderr[-300:] if r.returncode else 'stderr not shown'})")
        if r.returncode != 0:
            return
        check(sorted(os.listdir(out)) == ["logs", "regime.txt", "runs", "spar-options-table.csv",
                                          "spar-options-table.csv.meta.json",
                                          "spar-options-table.md"],
              f"it writes spar-options-table.* and none of the full grid's files "
              f"({sorted(os.listdir(out))})")
        runs = os.path.join(out, "runs", "randomwalks")
        os.remove(os.path.join(runs, "hilo-spar-1p6pct-s101.csv"))  # a default seed missing
        r = subprocess.run(cmd + ["--no-run"], capture_output=True, text=True)
        rows = {x["scheme"]: x for x in
                csv.DictReader(open(os.path.join(out, "spar-options-table.csv")))}
        # By hand, with the protocol's scores (stt_full against the mean of the five full-sync
        # runs, endpoint the mean of the last three evaluations): each curve of seeds 102 and 103.
        full = [qp.read_curve(os.path.join(runs, f"full-unlimited-s{s}.csv"))
                for s in range(101, 106)]
        ref_t, ref = full[0][0], np.mean([c[1] - c[1][0] for c in full], axis=0)

        def score(scheme, seed):
            t, q, _, _ = qp.read_curve(os.path.join(runs, f"{scheme}-1p6pct-s{seed}.csv"))
            return qp.arm_metrics(t, q - q[0], ref_t, ref, qp.ENDPOINT_EVALS)["stt_full"]
        diffs = [score("hilo-spar-precond", s) - score("hilo-spar", s) for s in (102, 103)]
        wrong = [score("hilo-spar-precond", s) - score("hilo-spar", s + 1) for s in (102,)]
        precond = rows.get("hilo-spar-precond", {})
        got = float(precond.get("paired_vs_default", "nan"))
        check(r.returncode == 0 and precond.get("paired_vs_default_n") == "2" and
              precond.get("n") == "3" and abs(got - np.mean(diffs)) < 1e-5 and
              abs(np.mean(diffs) - np.mean(wrong)) > 1e-2,
              f"paired vs default over seeds 102 and 103 only (n 2 of 3): {np.mean(diffs):.5f} "
              f"(got {got:.5f})")
        lo, hi = (float(precond.get("paired_vs_default_" + k, "nan")) for k in ("lo", "hi"))
        check(min(diffs) - 1e-5 <= lo <= got <= hi <= max(diffs) + 1e-5,
              f"its interval lies within the two seeds' differences ([{lo:.4f}, {hi:.4f}])")
        md = open(os.path.join(out, "spar-options-table.md")).read()
        check(f"| {got:+.3f} [{lo:+.3f}, {hi:+.3f}] (n 2) |" in md and "| (the default) |" in md
              and "| paired vs default |" in md,
              "the Markdown shows the column with its seed count, the default marked as such")


if __name__ == "__main__":
    metrics()
    end_to_end()
    infeasible()
    planted()
    paired_vs_default()
    spar_options()
    if len(sys.argv) > 1:
        tools(sys.argv[1])
    sys.exit(1 if FAILS else 0)
