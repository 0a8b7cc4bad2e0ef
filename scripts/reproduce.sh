#!/usr/bin/env bash
# Regenerates the paper-style figure set into results/paper/ (--quick: results/paper-quick/): one
# sweep per figure (scenarios/paper/figN-*.textproto through scripts/sweep.py), its CSVs, the
# figure as PNG and PDF, the plotted numbers as text, and a README.md naming the command behind
# each.
#
#   scripts/reproduce.sh [--quick] [--jobs N] [--only fig1,fig3] [--no-build] [--out DIR]
#
# --quick   fewer steps, points, seeds and workers, into results/paper-quick/ (not committed) so
#           that the committed full-mode set in results/paper/ stays as it is: about 2.5 minutes
#           wall on 2 cores. Full mode: about 12 minutes wall on 2 cores.
# --jobs N  simulator runs in parallel (default 2).
# --only    a comma-separated subset of fig1..fig6.
# Sweeps are resumable: rerunning skips every run whose outputs match its resolved scenario.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quick=0
jobs=2
only="fig1,fig2,fig3,fig4,fig5,fig6"
build=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --jobs) jobs="$2"; shift ;;
    --only) only="$2"; shift ;;
    --no-build) build=0 ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "reproduce.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

[ -n "$out" ] || out=$([ "$quick" = 1 ] && echo results/paper-quick || echo results/paper)
PY=/usr/bin/python3
SIM="${HILO_SIM:-$root/build/sim/hilo-sim}"
if [ "$build" = 1 ]; then
  echo "[reproduce] building hilo-sim (incremental)" >&2
  "$root/scripts/build.sh" --target hilo-sim models-real-gradient-error >&2
fi
[ -x "$SIM" ] || { echo "reproduce.sh: $SIM missing (build it or drop --no-build)" >&2; exit 1; }
mkdir -p "$out"
mode=$([ "$quick" = 1 ] && echo quick || echo full)
readme_parts="$out/.readme-parts"
mkdir -p "$readme_parts"
start_all=$(date +%s)
failed=()

# Prints its arguments as one shell command line, quoting only the words that need it.
shquote() {
  local sep="" a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./=,%:+@-]+$ ]]; then printf '%s%s' "$sep" "$a"
    else printf "%s'%s'" "$sep" "${a//\'/\'\\\'\'}"; fi
    sep=" "
  done
}

# Runs one figure: $1 = figure id (fig1), $2 = title, then a sweep command line and, after a
# literal "--plot", the plot command line. Both are echoed into the figure's README section.
figure() {
  local id="$1" title="$2"; shift 2
  local sweep=() plot=()
  while [ $# -gt 0 ] && [ "$1" != "--plot" ]; do sweep+=("$1"); shift; done
  shift
  plot=("$@")
  case ",$only," in *",$id,"*) ;; *) return 0 ;; esac
  echo "[reproduce] $id: $title ($mode)" >&2
  local t0 rc=0
  t0=$(date +%s)
  "${sweep[@]}" 2> >(tee "$out/$id.sweep.log" >&2) || rc=$?
  wait  # for tee
  local runs
  runs=$(grep -o '[0-9]* already done, [0-9]* to run' "$out/$id.sweep.log" | tail -1 || true)
  if [ "$rc" != 0 ]; then
    echo "[reproduce] $id: sweep exited $rc; plotting what finished" >&2
    failed+=("$id (sweep exit $rc)")
  fi
  local table="$out/$id.txt"
  if ! "${plot[@]}" > "$table"; then
    failed+=("$id (plot)")
  fi
  local t1 took
  t1=$(date +%s)
  took="$((t1 - t0)) s"
  # A rerun that only re-plots keeps the wall time of the run that made the CSVs.
  if [[ "$runs" == *" 0 to run" ]] && [ -f "$out/$id.walltime" ]; then
    took="$(cat "$out/$id.walltime") (when its runs were made; this rerun only re-plotted)"
  else
    echo "$took" > "$out/$id.walltime"
  fi
  {
    echo "## $id: $title"
    echo
    echo "Mode: $mode; wall time $took (sweep + plot, --jobs $jobs; runs: ${runs:-see $id.sweep.log})."
    echo "Figure: \`$(basename "${plot[-1]}").png\` / \`.pdf\`; plotted numbers: \`$id.txt\`;"
    echo "CSVs: \`$id/sweep.csv\`, \`$id/sweep_steps.csv\`, \`$id/sweep_workers.csv\`,"
    echo "\`$id/sweep_allocation.csv\`; per-run outputs and logs under \`$id/runs/\`."
    echo
    echo '```sh'
    { echo -n 'scripts/sweep.py '; shquote "${sweep[@]:1}"; echo " --jobs $jobs"; } |
      sed "s|$root/||g"
    { shquote "${plot[@]}"; echo; } | sed "s|$root/||g"
    echo '```'
    echo
    echo '```'
    cat "$table"
    echo '```'
    echo
  } > "$readme_parts/$id.md"
}

sweep() { "$PY" "$root/scripts/sweep.py" "$@" --jobs "$jobs" --hilo-sim "$SIM"; }
# Mode-dependent settings: Q (quick) vs F (full).
pick() { if [ "$quick" = 1 ]; then echo "$1"; else echo "$2"; fi; }

# Figure 1: update latency and step time vs bandwidth (Qwen2.5-7B scale, few steps).
figure fig1 "update latency and step time vs WAN bandwidth" \
  sweep scenarios/paper/fig1-speedup.textproto \
    --grid "network.worker_link.bandwidth=$(pick 10Mbps,100Mbps,1Gbps,10Gbps \
                                                  10Mbps,30Mbps,100Mbps,300Mbps,1Gbps,10Gbps)" \
    --set "workload.steps=$(pick 3 5)" --set "workload.eval_every=$(pick 3 5)" \
    --set "workers[0].count=$(pick 2 4)" --out "$out/fig1" \
  --plot "$PY" scripts/plot_speedup.py "$out/fig1/sweep.csv" --steps "$out/fig1/sweep_steps.csv" \
    --title "Update latency and step time vs WAN bandwidth (Qwen2.5-7B, rank-64 LoRA)" \
    --out "$out/fig1-speedup"

# Figure 2: final quality vs % of adapter bytes (real bytes, many steps).
figure fig2 "final quality vs bytes per update" \
  sweep scenarios/paper/fig2-pareto.textproto --zip \
    --grid "arms[hilo-spar].budget=$(pick 0.5%,1.6%,5% 0.5%,1%,1.6%,5%,15%,30%,60%)" \
    --grid "arms[hilo-topk].budget=$(pick 0.5%,1.6%,5% 0.5%,1%,1.6%,5%,15%,30%,60%)" \
    --grid "arms[hilo-powersgd].budget=$(pick 2.5%,5%,15% 2.5%,4%,6%,10%,20%,30%,50%)" \
    --set "workload.steps=$(pick 30 100)" --out "$out/fig2" \
  --plot "$PY" scripts/plot_pareto.py "$out/fig2/sweep.csv" --steps "$out/fig2/sweep_steps.csv" \
    --title "Final reverse KL vs bytes per update (distillation, LoRA rank 64)" \
    --out "$out/fig2-pareto"

# Figure 3: learning curves vs step and simulated time (Llama-3.2-1B scale).
figure fig3 "learning curves vs step and simulated time" \
  sweep scenarios/paper/fig3-curves.textproto --set "workload.steps=$(pick 30 100)" \
    --out "$out/fig3" \
  --plot "$PY" scripts/plot_curves.py "$out/fig3/sweep_steps.csv" --loss \
    --ylabel "reverse KL to teacher (nats/token, lower is better)" \
    --title "Learning curves at Llama-3.2-1B scale over 100 Mbps links" --out "$out/fig3-curves"

# Figure 4's second panel: energy in the top-k singular triplets of a real gradient and of the
# AdamW update it produced (paper distillation workload, step 11).
if [ -x "$root/build/tests/models-real-gradient-error" ]; then
  (cd "$root" && build/tests/models-real-gradient-error 10 "$out/spectra.csv" \
     > "$out/real-gradient-error.csv" 2> "$out/real-gradient-error.log") ||
    echo "reproduce: models-real-gradient-error failed (see $out/real-gradient-error.log)" >&2
fi

# Figure 4: Spar's rank allocation per matrix over training.
figure fig4 "Spar rank allocation per matrix" \
  sweep scenarios/paper/fig4-allocation.textproto \
    --grid "arms[hilo-spar].budget=1.6%,5%" --set "workload.steps=$(pick 30 100)" \
    --out "$out/fig4" \
  --plot "$PY" scripts/plot_allocation.py "$out/fig4/sweep_allocation.csv" \
    --spectra "$out/spectra.csv" --out "$out/fig4-allocation"

# Figure 5: ablations (error feedback, allocation, value dtype) over seeds.
figure fig5 "Spar ablations at 10% of adapter bytes" \
  sweep scenarios/paper/fig5-ablations.textproto --grid "seed=$(pick 1,2 1,2,3)" \
    --set "workload.steps=$(pick 30 100)" --out "$out/fig5" \
  --plot "$PY" scripts/plot_ablations.py "$out/fig5/sweep.csv" \
    --title "HiLo + Spar ablations at 10% of the adapter's bytes" --out "$out/fig5-ablations"

# Figure 6: drift and hash agreement of delta vs HiLo.
figure fig6 "replica consistency: drift and hash agreement" \
  sweep scenarios/paper/fig6-consistency.textproto --set "workload.steps=$(pick 30 60)" \
    --out "$out/fig6" \
  --plot "$PY" scripts/plot_consistency.py "$out/fig6/sweep_steps.csv" \
    "$out/fig6/sweep_workers.csv" --out "$out/fig6-consistency"

end_all=$(date +%s)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain -- . ":(exclude)$out" 2>/dev/null | head -1)  # outputs aside
{
  echo "# Paper-style figures"
  echo
  echo "Made by \`scripts/reproduce.sh$([ "$quick" = 1 ] && echo ' --quick') --jobs $jobs\`"
  echo "($mode mode) on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit$([ -n "$dirty" ] && echo ' plus uncommitted changes'),"
  total=0
  for f in "$out"/fig*.walltime; do [ -f "$f" ] && total=$((total + $(cut -d' ' -f1 "$f"))); done
  echo "$(nproc) CPU cores; the figures' runs and plots took $total s of wall time in all (this"
  echo "invocation: $((end_all - start_all)) s; a figure whose runs were reused is only re-plotted);"
  echo "simulator \`${SIM#"$root"/}\` ($(stat -c %y "$SIM" | cut -d. -f1), $(sha256sum "$SIM" | cut -c1-12))."
  echo "Every number comes from the simulator runs under each figure's folder; each figure's PNG"
  echo "also carries the plotting command in small print. Scenarios: \`scenarios/paper/\`."
  echo
  for id in fig1 fig2 fig3 fig4 fig5 fig6; do
    [ -f "$readme_parts/$id.md" ] && cat "$readme_parts/$id.md"
  done
} > "$out/README.md"
echo "[reproduce] wrote $out/README.md; total wall time $((end_all - start_all)) s" >&2
if [ "${#failed[@]}" -gt 0 ]; then
  echo "[reproduce] failed: ${failed[*]}" >&2
  exit 1
fi
