#!/usr/bin/python3
"""Remakes one results/ folder whose files come from several studies, with one command.

Usage: scripts/remake_results.py FOLDER [--only FILE] [--list] [--dry-run] [--no-build]
  FOLDER     a folder of results/ (every one has its studies here: --list shows them)
  --only     run only the study that makes FILE (a file name of the folder, or a sub-folder's
             name ending in /, which a study makes whole)
  --list     print each study: the files it makes, how, and its command
  --dry-run  print the commands in the order they would run, run nothing
  --no-build do not build the targets the studies need first

Each study is one shell command run from the repository root (bash, errexit and pipefail on).
A study's files are either written by the command itself ("command") or written from its output
("from output": tables and prose assembled from what the command printed, which is kept in
results/runs/remake/<folder>/<study>.log, ignored by git). A name ending in / is a sub-folder
the study makes whole. This is the one remake path: scripts/reproduce.sh writes results/paper/
only when this script's studies name it with --out. Studies run one after the other, in
the order below; the first that fails stops the remake (exit 1, naming it and its log). Emulation
studies need root and take the machine-wide lock /tmp/hilo-emu.lock.

Exit codes: 0 all studies ran, 1 a study failed, 2 bad arguments (unknown folder or file).
"""
import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
RUNS = "results/runs/remake"


@dataclass(frozen=True)
class Study:
    name: str
    files: tuple  # file names in the folder this study makes
    cmd: str  # one bash command, run from the repository root
    made: str  # "command" or "from output"
    targets: tuple = ()  # build targets it needs
    root: bool = False  # needs root (emulation)
    note: str = ""


SIM = "results/sim"
VAL = "results/validation"
CMP = "results/compressors"
PAPER = "results/paper"
QUAL = "results/quality"
TEACH = "results/teaching"
QUICK = "results/quickstart"
FAULTS = "results/faults"
WORK = "results/workloads"
HILO = "results/hilo"
FUZZ = "results/fuzz"
OUT_SIM = f"{RUNS}/sim"

_fig1_flow = (
    f"for ss in true false; do nice -n 10 {PY} scripts/sweep.py scenarios/paper/fig1-speedup.textproto"
    " --grid network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps,10Gbps --set network.model=flow"
    f" --set network.slow_start_after_idle=$ss --out {OUT_SIM}/fig1-flow-ss$ss --jobs 1; done;"
    f" cp {OUT_SIM}/fig1-flow-sstrue/sweep.csv {SIM}/fig1-auto-flow.csv;"
    f" cp {OUT_SIM}/fig1-flow-ssfalse/sweep.csv {SIM}/fig1-auto-flow-no-restart.csv;"
    f" nice -n 10 {PY} scripts/sweep.py scenarios/paper/fig1-speedup.textproto"
    " --grid network.worker_link.bandwidth=1Gbps,10Gbps --set network.model=packet"
    f" --out {OUT_SIM}/fig1-packet --jobs 1; cp {OUT_SIM}/fig1-packet/sweep.csv {SIM}/fig1-auto-packet.csv"
)

_quickstart = "build/sim/hilo-sim run scenarios/quickstart.textproto --quiet"

STUDIES = {
    SIM: (
        Study("flow-vs-packet", ("flow-vs-packet.md", "flow-vs-packet.csv"),
              f"rm -f {SIM}/flow-vs-packet.csv; for f in scenarios/validation/*.textproto; do"
              " case $(basename $f) in emu-*) continue ;; esac;"
              f" {PY} scripts/compare_models.py $f --out {OUT_SIM}/compare/$(basename $f .textproto)"
              f" --csv {SIM}/flow-vs-packet.csv; done",
              "command", ("hilo-sim",), note="the .md is written from the .csv and the log"),
        Study("flow-vs-packet-idle-restart", ("flow-vs-packet-idle-restart.md",),
              "for sc in link-100Mbps-40ms link-1Gbps-40ms star-8-shared-uplink gpu-mix-staleness1; do"
              f" {PY} scripts/compare_models.py scenarios/validation/$sc.textproto"
              f" --out {OUT_SIM}/idle-restart/$sc; done",
              "from output", ("hilo-sim",)),
        Study("single-link-transfer", ("single-link-transfer.md",),
              "build/tests/sim-single-link-bench", "from output", ("sim-single-link-bench",)),
        Study("single-link-loss", ("single-link-loss.txt",),
              "for p in 0.005 0.01 0.02; do echo \"# --loss=$p\"; build/tests/sim-single-link-bench"
              " --loss=$p --rates=10Mbps,100Mbps --delays=10ms,40ms,100ms --bytes=3000000"
              " --messages=4; done",
              "from output", ("sim-single-link-bench",), note="the header lines are kept"),
        Study("single-link-warm", ("single-link-warm.md",),
              "build/tests/sim-single-link-bench --warm --rates=10Gbps --delays=100ms --messages=2",
              "from output", ("sim-single-link-bench",)),
        Study("transport-cost", ("transport-cost.txt", "transport-cost-flow.txt"),
              "uptime; build/tests/sim-transport-bench; uptime;"
              " build/tests/sim-transport-bench --model=flow",
              "from output", ("sim-transport-bench",), note="the header lines are kept"),
        Study("transport-cost-stock", ("transport-cost-stock.txt",),
              "uptime; for i in 1 2; do for c in 'N=8 100Mbps/40ms mtu1500'"
              " '50MB 1Gbps/40ms mtu1500 bdp'; do build/tests/sim-transport-bench --model=stock"
              " --only=\"$c\"; done; done; uptime",
              "from output", ("sim-transport-bench",), note="the header lines are kept"),
        Study("flow-model-cost", ("flow-model-cost.md",),
              f"for m in flow packet; do /usr/bin/time {_quickstart} --set network.model=$m"
              f" --out {OUT_SIM}/flow-model-cost/$m; done;"
              f" /usr/bin/time {_quickstart} --set network.model=flow --set workers[0].count=32"
              " --set workers[1].count=32 --set workload.steps=10"
              f" --out {OUT_SIM}/flow-model-cost/flow-64;"
              f" /usr/bin/time {_quickstart} --set network.model=flow --set workers[0].count=512"
              " --set workers[1].count=512 --set workload.steps=2 --set workload.eval_every=2"
              f" --out {OUT_SIM}/flow-model-cost/flow-1024",
              "from output", ("hilo-sim",)),
        Study("simulator-cost", ("simulator-cost.md",),
              "for n in 4 16 32; do"
              f" /usr/bin/time {_quickstart} --set workload.steps=3 --set workers[0].count=$n"
              " --set workers[1].count=$n --set workload.eval_every=100"
              " --set 'arms[0].strategy=hilo' --set 'arms[0].compressor=spar'"
              " --set 'arms[0].budget=1.6%' --set 'arms[0].options.dtype=bf16'"
              f" --out {OUT_SIM}/simulator-cost/hilo-$n; done;"
              " for n in 4 16; do"
              f" /usr/bin/time {_quickstart} --set workload.steps=2 --set workers[0].count=$n"
              " --set workers[1].count=$n --set workload.eval_every=100"
              f" --out {OUT_SIM}/simulator-cost/full-$n; done",
              "from output", ("hilo-sim",)),
        Study("cost-table", ("cost-table.md", "cost-table.csv"),
              f"{PY} scripts/cost_table.py --out {SIM}/cost-table", "command", ("hilo-sim",),
              note="the table at the top is remade; the '## ' sections after it are kept"),
        Study("fig1-auto", ("fig1-auto-buffers.md", "fig1-auto-flow.csv",
                            "fig1-auto-flow-no-restart.csv", "fig1-auto-packet.csv"),
              _fig1_flow, "command", ("hilo-sim",),
              note="the .md is written from the three .csv files"),
    ),
    VAL: (
        Study("emulation",
              ("emulation.md", "emulation.csv", "emulation-meta.txt", "emulation-commits.csv",
               "emulation-notes.md", "emulation-history.md", "emulation-new-rows.md",
               "emulation-new-rows.csv", "emulation-new-rows-commits.csv"),
              "flock /tmp/hilo-emu.lock scripts/validate_emulation.sh --out results/validation", "command",
              ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True,
              note="emulation-notes.md (why rows miss) is written by hand from emulation.md; "
              "emulation-history.md keeps the notes of the earlier tables; "
              "the emulation-new-rows files hold rows a full run puts into emulation.csv"),
        Study("emulation-ceiling",
              ("emulation-ceiling.md", "emulation-ceiling.csv", "emulation-ceiling-meta.txt"),
              "flock /tmp/hilo-emu.lock scripts/emulation_ceiling.sh --out results/validation", "command",
              ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True),
        Study("simulator-rerun", ("simulator-rerun.md",),
              f"nice -n 10 {PY} scripts/validation_sim_rerun.py --hilo-sim build/sim/hilo-sim",
              "from output", ("hilo-sim",),
              note="the table it prints is the newest section of the file"),
        Study("seeds", ("seeds.md", "seeds.csv", "seeds-flow.csv"),
              f"nice -n 10 {PY} scripts/validation_seeds.py --seeds 1,2,3,4,5"
              " --hilo-sim now=build/sim/hilo-sim --out results/validation/seeds.csv;"
              f" nice -n 10 {PY} scripts/validation_seeds.py --seeds 1,2,3,4,5 --models flow"
              " --hilo-sim now=build/sim/hilo-sim --out results/validation/seeds-flow.csv",
              "from output", ("hilo-sim",),
              note="the table it prints goes into seeds.md by hand; its rfc rows need a second "
              "binary built with the patch at the end of seeds.md"),
        Study("tcp-trace", ("tcp-trace/",),
              "flock /tmp/hilo-emu.lock scripts/tcp_trace_overlay.sh --emu"
              " 100Mbps-40ms-loss0 10Mbps-10ms-loss0 50Mbps-40ms-loss0.01", "command",
              ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True,
              note="the learner's sending end towards worker-0 of each row (workload.steps=5), "
              "packet and flow model and the kernel through emulated links, and their overlay"),
        Study("tiny-modes", ("tiny-modes.md",),
              f"/usr/bin/time build/sim/hilo-sim run tests/scripts/tiny.textproto --quiet"
              f" --out {RUNS}/validation/tiny/sim;"
              " flock /tmp/hilo-emu.lock /usr/bin/time build/sim/hilo-emu run"
              f" tests/scripts/tiny.textproto --network direct --out {RUNS}/validation/tiny/emu-direct;"
              " flock /tmp/hilo-emu.lock /usr/bin/time build/sim/hilo-emu run"
              f" tests/scripts/tiny.textproto --out {RUNS}/validation/tiny/emu-ns3",
              "from output", ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True),
    ),
    CMP: (
        Study("reconstruction-error", ("reconstruction-error.csv", "reconstruction-error.csv.meta.json"),
              f"build/tests/hilo-compress-error > {CMP}/reconstruction-error.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error.csv", "command",
              ("hilo-compress-error",)),
        Study("reconstruction-error-spectral",
              ("reconstruction-error-spectral.csv", "reconstruction-error-spectral.csv.meta.json"),
              "build/tests/hilo-compress-error spar spar-sketch8 powersgd sparq"
              f" > {CMP}/reconstruction-error-spectral.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-spectral.csv", "command",
              ("hilo-compress-error",)),
        Study("reconstruction-error-sketch",
              ("reconstruction-error-sketch.csv", "reconstruction-error-sketch.csv.meta.json"),
              "build/tests/hilo-compress-error spar-sketch16 spar-sketch8"
              f" > {CMP}/reconstruction-error-sketch.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-sketch.csv", "command",
              ("hilo-compress-error",)),
        Study("real-gradient-error",
              ("real-gradient-error.csv", "real-gradient-error.csv.meta.json",
               "gradient-vs-update-spectra.csv", "gradient-vs-update-spectra.csv.meta.json"),
              f"build/tests/models-real-gradient-error 10 {CMP}/gradient-vs-update-spectra.csv"
              f" > {CMP}/real-gradient-error.csv; {PY} scripts/csv_provenance.py"
              f" {CMP}/real-gradient-error.csv {CMP}/gradient-vs-update-spectra.csv", "command",
              ("models-real-gradient-error",)),
        Study("bench-2threads", ("bench-2threads.json", "bench-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              f" --benchmark_out={CMP}/bench-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-2threads.txt", "command", ("hilo-compress-bench",)),
        Study("bench-1thread", ("bench-1thread.json", "bench-1thread.txt"),
              "HILO_BENCH_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1"
              " build/tests/hilo-compress-bench"
              f" --benchmark_out={CMP}/bench-1thread.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-1thread.txt", "command", ("hilo-compress-bench",)),
        Study("bench-steady-2threads", ("bench-steady-2threads.json", "bench-steady-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(0|3|9|11)/(16|50)/'"
              f" --benchmark_out={CMP}/bench-steady-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-steady-2threads.txt", "command", ("hilo-compress-bench",),
              note="the .txt's first line (command, commit, load) is written by hand"),
        Study("bench-spectral", ("bench-spectral-2threads.json", "bench-spectral-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench --benchmark_filter='Spar|PowerSgd'"
              f" --benchmark_out={CMP}/bench-spectral-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-spectral-2threads.txt", "command", ("hilo-compress-bench",),
              note="the filter and the before/after binaries are in the .txt header"),
        Study("reconstruction-error-screen",
              ("reconstruction-error-screen.csv", "reconstruction-error-screen.csv.meta.json"),
              "build/tests/hilo-compress-error spar-screen8 spar-screen16"
              f" > {CMP}/reconstruction-error-screen.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-screen.csv", "command",
              ("hilo-compress-error",)),
        Study("bench-screen", ("bench-screen-2threads.json", "bench-screen-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|9|11|12|13)/(16|50)/'"
              f" --benchmark_out={CMP}/bench-screen-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-screen-2threads.txt", "command", ("hilo-compress-bench",)),
        Study("reconstruction-error-warm",
              ("reconstruction-error-warm.csv", "reconstruction-error-warm.csv.meta.json"),
              "build/tests/hilo-compress-error spar-warm8 spar-warm4"
              f" > {CMP}/reconstruction-error-warm.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-warm.csv", "command",
              ("hilo-compress-error",)),
        Study("bench-warm", ("bench-warm-2threads.json", "bench-warm-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|9|12|14|15)/(16|50)/'"
              f" --benchmark_out={CMP}/bench-warm-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-warm-2threads.txt", "command", ("hilo-compress-bench",)),
        Study("bench-widths", ("bench-widths-2threads.json", "bench-widths-2threads.txt",
                               "bench-widths-before-2threads.json"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|14)/(16|50)/'"
              f" --benchmark_out={CMP}/bench-widths-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-widths-2threads.txt", "command", ("hilo-compress-bench",),
              note="bench-widths-before-2threads.json is the same command run with a binary built"
              " before per-matrix widths (the commit is in the .txt's first line)"),
        Study("reconstruction-error-widths",
              ("reconstruction-error-widths.csv", "reconstruction-error-widths.csv.meta.json"),
              "build/tests/hilo-compress-error spar-warm8"
              f" > {CMP}/reconstruction-error-widths.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-widths.csv", "command",
              ("hilo-compress-error",)),
        Study("bench-onepass", ("bench-onepass-2threads.json", "bench-onepass-2threads.txt",
                                "bench-onepass-before-2threads.json"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|14)/(16|50)/'"
              f" --benchmark_out={CMP}/bench-onepass-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-onepass-2threads.txt", "command", ("hilo-compress-bench",),
              note="bench-onepass-before-2threads.json is the same command run with a binary built"
              " before the one-pass warm sketch (the commits are in the .txt's first line)"),
        Study("bench-onepass-idle", ("bench-onepass-idle-2threads.json",
                                     "bench-onepass-idle-2threads.txt"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|14)/(16|50)/' --benchmark_repetitions=3"
              f" --benchmark_out={CMP}/bench-onepass-idle-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-onepass-idle-2threads.txt", "command", ("hilo-compress-bench",),
              note="run it on an otherwise idle machine: the ratio moves with the load"),
        Study("reconstruction-error-onepass",
              ("reconstruction-error-onepass.csv", "reconstruction-error-onepass.csv.meta.json"),
              "build/tests/hilo-compress-error spar-warm8 powersgd"
              f" > {CMP}/reconstruction-error-onepass.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-onepass.csv", "command",
              ("hilo-compress-error",)),
        Study("bench-kernel", ("bench-kernel-2threads.json", "bench-kernel-2threads.txt",
                               "bench-kernel-before-2threads.json",
                               "bench-kernel-nogram-2threads.json"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|14)/(16|50)/' --benchmark_repetitions=3"
              f" --benchmark_out={CMP}/bench-kernel-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-kernel-2threads.txt", "command", ("hilo-compress-bench",),
              note="the -before and -nogram .json files are the same command run with binaries"
              " built before the sketch kernel and without the fused Gram matrix (the commits are"
              " in the .txt's first line)"),
        Study("bench-kernel-idle", ("bench-kernel-idle-2threads.json",
                                    "bench-kernel-idle-2threads.txt",
                                    "bench-kernel-idle-run2-2threads.json",
                                    "bench-kernel-idle-before-2threads.json",
                                    "bench-kernel-idle-before-run2-2threads.json"),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-compress-bench"
              " --benchmark_filter='BM_Encode/(3|14)/(16|50)/' --benchmark_repetitions=3"
              f" --benchmark_out={CMP}/bench-kernel-idle-2threads.json --benchmark_out_format=json"
              f" | tee {CMP}/bench-kernel-idle-2threads.txt", "command", ("hilo-compress-bench",),
              note="run it on an otherwise idle machine; the -run2 file is the same command run"
              " again, the -before files the same command with the binary of c4c291c (sgemm)"),
        Study("reconstruction-error-kernel",
              ("reconstruction-error-kernel.csv", "reconstruction-error-kernel.csv.meta.json"),
              "build/tests/hilo-compress-error spar-warm8 powersgd"
              f" > {CMP}/reconstruction-error-kernel.csv;"
              f" {PY} scripts/csv_provenance.py {CMP}/reconstruction-error-kernel.csv", "command",
              ("hilo-compress-error",)),
        Study("sketch-pass", ("sketch-pass-1thread.txt",),
              "build/tests/hilo-spectra-bench --benchmark_filter='BM_SketchPass'"
              f" | tee {CMP}/sketch-pass-1thread.txt", "command", ("hilo-spectra-bench",),
              note="the file's first line names the commit"),
        Study("profile-warm8", ("profile-warm8-2threads.txt",),
              "perf record -F 400 --call-graph dwarf,16384 -o /tmp/warm.data"
              " build/tests/hilo-compress-bench --benchmark_filter='BM_Encode/(3|14)/(16|50)/';"
              " perf script -i /tmp/warm.data -F tid,ip,sym,dso | c++filt"
              " | tests/bench/hilo-profile-buckets.py --drop-first-fill"
              " 'SparCompressor::Encode|SpectralTruncation::'"
              f" > {CMP}/profile-warm8-2threads.txt", "command", ("hilo-compress-bench",),
              note="the file's first line names the binary's commit and the PowerSGD variant"),
        Study("plan-profile", ("plan-profile-2threads.txt",),
              "OMP_WAIT_POLICY=PASSIVE build/tests/hilo-spectra-bench --benchmark_filter=BM_Plan"
              f" | tee {CMP}/plan-profile-2threads.txt", "command", ("hilo-spectra-bench",)),
    ),
}


def _figure(fig, files, targets=("hilo-sim",)):
    """A figure of results/paper, remade by scripts/reproduce.sh into the committed folder."""
    return Study(fig, (f"{fig}/", f"{fig}.txt") + files,
                 f"scripts/reproduce.sh --out {PAPER} --only {fig} --jobs 2 --no-build", "command",
                 targets, note="reproduce.sh rewrites this figure's section of README.md and "
                 "keeps its hand-written head")


_fig2_grpo_budgets = "0.25%,0.5%,1%,1.6%,5%,15%,30%,60%"
_teaching = ("01-full-sync-on-a-wan", "02-apply-the-decoded-gradient", "03-error-feedback",
             "04-stragglers", "05-faults", "04-all-h100")
_workload_curves = (
    ("curve-distill-default", "--kind distill --preset default --steps 200"),
    ("curve-grpo-default", "--kind grpo --preset default --steps 200"),
    ("curve-distill-paper", "--kind distill --preset paper --steps 200 --workers 2 --lr 3e-3"),
    ("curve-grpo-paper", "--kind grpo --preset paper --steps 200 --workers 2 --lr 3e-4"
                         " --task-prompt-stride 0"),
)
_fault_table = f"{PY} scripts/fault_table.py --out {FAULTS} --runs {RUNS}/faults/runs --jobs 1"

STUDIES.update({
    PAPER: (
        _figure("fig1", ("fig1-speedup.png", "fig1-speedup.pdf")),
        _figure("fig2", ("fig2-pareto.png", "fig2-pareto.pdf", "fig2-pareto-absolute.png",
                         "fig2-pareto-absolute.pdf")),
        Study("fig2-grpo", ("fig2-grpo/", "fig2-grpo.txt", "fig2-grpo.md", "fig2-grpo-pareto.png",
                            "fig2-grpo-pareto.pdf", "fig2-pareto-with-grpo.png",
                            "fig2-pareto-with-grpo.pdf"),
              f"nice -n 10 {PY} scripts/sweep.py scenarios/paper/fig2-grpo.textproto --zip"
              + "".join(f" --grid 'arms[{a}].budget={_fig2_grpo_budgets}'"
                        for a in ("hilo-spar", "hilo-topk"))
              + " --grid 'arms[hilo-powersgd].budget=2.5%,3%,4%,6%,10%,20%,30%,50%'"
              + "".join(f" --grid 'arms[{a}].budget={_fig2_grpo_budgets}'"
                        for a in ("delta-spar", "delta-topk"))
              + f" --cross seed=1 --set workload.steps=100 --out {PAPER}/fig2-grpo --jobs 2;"
              f" {PY} scripts/plot_pareto.py {PAPER}/fig2-grpo/sweep.csv"
              f" --steps {PAPER}/fig2-grpo/sweep_steps.csv --out {PAPER}/fig2-grpo-pareto"
              f" > {PAPER}/fig2-grpo.txt;"
              f" {PY} scripts/plot_pareto.py {PAPER}/fig2/sweep.csv {PAPER}/fig2-grpo/sweep.csv"
              f" --steps {PAPER}/fig2/sweep_steps.csv --steps {PAPER}/fig2-grpo/sweep_steps.csv"
              f" --normalize --out {PAPER}/fig2-pareto-with-grpo",
              "command", ("hilo-sim",),
              note="one seed (about 26 minutes idle); fig2-grpo.md is written by hand from "
              "fig2-grpo.txt; the two-panel figure needs fig2's runs"),
        _figure("fig3", ("fig3-curves.png", "fig3-curves.pdf")),
        _figure("fig4", ("fig4-allocation.png", "fig4-allocation.pdf", "spectra.csv",
                         "spectra.csv.meta.json", "real-gradient-error.csv",
                         "real-gradient-error.csv.meta.json"),
                ("hilo-sim", "models-real-gradient-error")),
        _figure("fig5", ("fig5-ablations.png", "fig5-ablations.pdf")),
        _figure("fig6", ("fig6-consistency.png", "fig6-consistency.pdf")),
        _figure("fig7", ("fig7-time-to-target.png", "fig7-time-to-target.pdf")),
        _figure("fig8", ("fig8-timeline.png", "fig8-timeline.pdf")),
        Study("lr-sweep", ("lr-sweep/", "lr-sweep.md"),
              f"nice -n 10 {PY} scripts/sweep.py {PAPER}/lr-sweep/full-only.textproto"
              " --grid optimizer.lr=1e-3,1.5e-3,2e-3,3e-3 --cross seed=1,2,3,4,5,6,7,8,9,10"
              f" --set workload.steps=100 --out {PAPER}/lr-sweep --jobs 1",
              "command", ("hilo-sim",),
              note="lr-sweep.md is written by hand from lr-sweep/sweep.csv"),
    ),
    TEACH: (
        Study("teaching", tuple(f"{n}/" for n in _teaching),
              f"for n in {' '.join(_teaching)}; do"
              " s=scenarios/teaching/${n/04-all-h100/04-stragglers}.textproto; x=;"
              " [ $n = 04-all-h100 ] && x=--set=workers[1].gpu=H100-SXM;"
              f" build/sim/hilo-sim run $s $x --out {RUNS}/teaching/$n > {TEACH}/$n/table.txt;"
              f" cp {RUNS}/teaching/$n/summary.json {TEACH}/$n/; done;"
              f" cp {RUNS}/teaching/03-error-feedback/steps.csv {TEACH}/03-error-feedback/",
              "command", ("hilo-sim",)),
    ),
    QUICK: (
        Study("quickstart", ("table.txt", "summary.json"),
              f"build/sim/hilo-sim run scenarios/quickstart.textproto --out {RUNS}/quickstart"
              f" > {QUICK}/table.txt; cp {RUNS}/quickstart/summary.json {QUICK}/",
              "command", ("hilo-sim",)),
        Study("cold-clone", ("cold-clone.md",),
              "on a fresh Debian 12 machine (no packages, no compiler cache): git clone REPO"
              " /tmp/cold && cd /tmp/cold && time scripts/quickstart.sh (and scripts/test.sh in a"
              " fresh clone), the times written by hand",
              "from output", ()),
    ),
    FAULTS: (
        Study("faults-sim", ("faults.csv", "faults.csv.meta.json", "faults.md"), _fault_table,
              "command", ("hilo-sim",)),
        Study("faults-emulation", ("faults-emulation.csv", "faults-emulation.csv.meta.json",
                                   "faults-emulation.md"),
              f"flock /tmp/hilo-emu.lock {_fault_table} --runner hilo-emu", "command",
              ("hilo-sim", "hilo-emu", "hilo-node")),
        Study("faults-emulation-ns3", ("faults-emulation-ns3.csv",
                                       "faults-emulation-ns3.csv.meta.json",
                                       "faults-emulation-ns3.md"),
              f"flock /tmp/hilo-emu.lock {_fault_table} --runner hilo-emu --network ns3",
              "command", ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True),
        Study("round-timeout", ("round-timeout.md", "round-timeout.csv"),
              f"{PY} scripts/sweep.py scenarios/teaching/07-round-deadline.textproto"
              " --grid mode.round_timeout=2s,300ms,250ms,200ms,150ms,100ms"
              f" --out {RUNS}/round-timeout --jobs 1 (the table by hand: round-timeout.md)",
              "from output", ("hilo-sim",)),
        Study("chaos", ("chaos.md",),
              "flock /tmp/hilo-emu.lock scripts/chaos.sh 2;"
              " NETWORK=ns3 flock /tmp/hilo-emu.lock scripts/chaos.sh 2;"
              " SEED=3 NETWORK=ns3 flock /tmp/hilo-emu.lock scripts/chaos.sh 2",
              "from output", ("hilo-sim", "hilo-emu", "hilo-node", "hilo-netem"), root=True),
    ),
    WORK: (
        Study("curves", tuple(f"{n}{e}" for n, _ in _workload_curves
                              for e in (".csv", ".csv.meta.json")) + ("learning-curves.png",
                                                                       "learning-curves.pdf"),
              "; ".join(f"build/models/workload-curves {a} --out {WORK}/{n}.csv;"
                        f" {PY} scripts/csv_provenance.py {WORK}/{n}.csv"
                        for n, a in _workload_curves)
              + f"; {PY} scripts/plot_workloads.py "
              + " ".join(f"{WORK}/{n}.csv" for n, _ in _workload_curves)
              + f" --out {WORK}/learning-curves",
              "command", ("workload-curves",)),
        Study("grpo-paper-search", ("grpo-paper-search/",),
              f"for m in {WORK}/grpo-paper-search/*.csv.meta.json; do"
              f" eval \"$({PY} -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"command\"])'"
              " \"$m\")\"; "
              f"{PY} scripts/csv_provenance.py \"${{m%.meta.json}}\"; done",
              "command", ("workload-curves",),
              note="reruns the command each CSV's .meta.json records"),
    ),
    HILO: (
        Study("replay-bench", ("replay-bench.txt",),
              f"build/tests/hilo-replay-bench --benchmark_counters_tabular=true"
              f" > {HILO}/replay-bench.txt", "command", ("hilo-replay-bench",)),
    ),
    FUZZ: (
        Study("fuzz", ("README.md",),
              "rm -rf build-fuzz/corpus build-fuzz/crashes && nice -n 19 scripts/fuzz.sh 600",
              "from output", note="builds its own instrumented build-fuzz/ (clang); README.md's "
              "table is written from the output"),
    ),
    QUAL: (
        Study("protocol", ("protocol/",),
              f"{PY} scripts/quality_protocol.py --grid small --out {QUAL}/protocol",
              "command", ("sync-curves",)),
        Study("protocol-full", ("protocol-full/",),
              f"{PY} scripts/quality_protocol.py --grid full --out {QUAL}/protocol-full;"
              f" {PY} scripts/plot_protocol.py {QUAL}/protocol-full/protocol-table.csv"
              f" --out {QUAL}/protocol-full/stt-vs-bytes",
              "command", ("sync-curves",), note="about 2.6 CPU hours, resumable"),
        Study("protocol-modelled", ("protocol-modelled/",),
              f"{PY} scripts/quality_protocol.py --grid full --regime modelled"
              f" --workloads text-distill,randomwalks,residue-chain"
              f" --out {QUAL}/protocol-modelled;"
              f" {PY} scripts/quality_protocol.py --grid spar-options-full --regime modelled"
              f" --workloads text-distill,randomwalks,residue-chain"
              f" --out {QUAL}/protocol-modelled;"
              f" {PY} scripts/quality_protocol.py --grid sketch --regime modelled"
              f" --out {QUAL}/protocol-modelled",
              "command", ("sync-curves",),
              note="about 4.3 CPU hours (protocol-cost.csv) at --jobs 1, resumable; the "
              "spar-options grid's 150 runs write spar-options-table.* only, the sketch grid's "
              "80 (rank-64 distillation) sketch-table.* only"),
        Study("spar-options", ("spar-options/",),
              f"results/quality/spar-options/run.sh 101 102; {PY}"
              " results/quality/spar-options/summarize.py > results/quality/spar-options/table.csv;"
              " build/tests/hilo-compress-bench --benchmark_filter=BM_Encode (the filter in its README)"
              " (three runs: encode-bench-run1.json, encode-bench-run2.json, encode-bench-run3.json,"
              " each with its own filter)",
              "from output", ("sync-curves", "hilo-compress-bench")),
        Study("reproduction", ("reproduction.md",),
              f"{PY} scripts/check_reproduction.py (the table: hilo-sim run of teaching 02 under"
              " OPENBLAS_CORETYPE / ATEN_CPU_CAPABILITY variants, by hand)",
              "from output", ("hilo-sim",)),
        Study("size-trend", ("size-trend/",),
              f"{PY} scripts/quality_protocol.py --grid size --out {QUAL}/size-trend"
              f" --ckpt-dir {RUNS}/quality/text-bases;"
              f" cp {RUNS}/quality/text-bases/*-spectrum.csv {QUAL}/size-trend/;"
              f" {PY} scripts/plot_protocol.py {QUAL}/size-trend/protocol-table.csv --x params"
              f" --out {QUAL}/size-trend/share-vs-size",
              "command", ("sync-curves", "pretrain-text"),
              note="pretrains its two larger bases first (about 16 CPU minutes for the largest)"),
        Study("lockstep-sweep", ("runs/", "regime.txt", "runs.csv", "runs.csv.meta.json",
                                 "table.csv", "table.csv.meta.json", "quality-vs-bytes.png",
                                 "quality-vs-bytes.pdf"),
              f"{PY} scripts/quality_protocol.py --grid planted --out {QUAL} --jobs 2;"
              f" {PY} scripts/plot_protocol.py {QUAL}/table.csv --runs {QUAL}/runs.csv"
              f" --out {QUAL}/quality-vs-bytes",
              "command", ("sync-curves",), note="several hours of runs"),
        Study("scenario", ("scenario/",),
              f"{PY} scripts/sweep.py scenarios/paper/quality-1.6pct.textproto"
              f" --grid seed=21,22,23 --out {QUAL}/scenario", "command", ("hilo-sim",)),
        Study("teacher-spectrum", ("teacher-spectrum.csv",),
              "build/models/pretrain-text --out models/data/fortunes-lm.bin --base-steps 600"
              f" --teacher-steps 250 --batch 24 --spectrum {QUAL}/teacher-spectrum.csv",
              "command", ("pretrain-text",),
              note="also remakes the committed checkpoint models/data/fortunes-lm.bin (21 min)"),
    ),
})


def claims(study, name):
    """Whether `name` (a path inside the folder) is one of the study's files or lies under one of
    its sub-folders."""
    return any(name == f or (f.endswith("/") and name.startswith(f)) for f in study.files)


def studies_for(folder, only):
    studies = STUDIES[folder]
    if only is None:
        return list(studies)
    picked = [s for s in studies if only in s.files or claims(s, only)]
    if not picked:
        raise KeyError(only)
    return picked


def describe(folder, study):
    how = "written by the command" if study.made == "command" else "written from its output"
    lines = [f"{study.name}: {', '.join(study.files)} ({how}{'; root' if study.root else ''})"]
    if study.note:
        lines.append(f"  note: {study.note}")
    lines.append(f"  $ {study.cmd}")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--only", help="the study that makes this file (a file name of the folder)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args(argv)
    folder = os.path.normpath(args.folder)
    if folder not in STUDIES:
        print(f"remake_results.py: unknown folder '{args.folder}' (known: {', '.join(STUDIES)})",
              file=sys.stderr)
        return 2
    try:
        studies = studies_for(folder, args.only)
    except KeyError:
        print(f"remake_results.py: --only '{args.only}': no study of {folder} makes that file",
              file=sys.stderr)
        return 2
    if args.list or args.dry_run:
        for s in studies:
            print(describe(folder, s) if args.list else s.cmd)
        return 0
    if any(s.root for s in studies) and os.geteuid() != 0:
        names = ", ".join(s.name for s in studies if s.root)
        print(f"remake_results.py: {names} need root (emulation); run as root or use --only",
              file=sys.stderr)
        return 2
    targets = sorted({t for s in studies for t in s.targets})
    if targets and not args.no_build:
        build = [os.path.join(ROOT, "scripts", "build.sh")]
        for t in targets:
            build += ["--target", t]
        if subprocess.run(build, cwd=ROOT).returncode != 0:
            print("remake_results.py: the build failed", file=sys.stderr)
            return 1
    logs = os.path.join(ROOT, RUNS, os.path.basename(folder))
    os.makedirs(logs, exist_ok=True)
    for i, s in enumerate(studies, 1):
        log = os.path.join(logs, s.name + ".log")
        print(f"[{i}/{len(studies)}] {s.name}: {', '.join(s.files)} (log {os.path.relpath(log, ROOT)})",
              flush=True)
        t0 = time.time()
        with open(log, "w") as f:
            rc = subprocess.run(["bash", "-c", "set -euo pipefail; " + s.cmd], cwd=ROOT, stdout=f,
                                stderr=subprocess.STDOUT).returncode
        print(f"    {time.time() - t0:.0f} s, exit {rc}", flush=True)
        if rc != 0:
            print(f"remake_results.py: study {s.name} failed (exit {rc}); see {log}", file=sys.stderr)
            return 1
        if s.made != "command":
            print(f"    write {', '.join(s.files)} from {os.path.relpath(log, ROOT)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
