#!/usr/bin/env bash
# Regenerates the paper-style figure set into OUT (default results/runs/paper/, --quick:
# results/runs/paper-quick/, both ignored by git; the committed set is remade only with
# --out results/paper, which `scripts/remake_results.py results/paper` runs): one sweep per
# figure (scenarios/paper/figN-*.textproto through scripts/sweep.py), its CSVs, the figure as PNG
# and PDF, the plotted numbers as text, and a README.md naming the command behind each. An
# existing README.md keeps its head (everything above the first "## " section, written by hand)
# and the sections of figures not run; the sections of the figures run are rewritten, and the
# generated head goes to results/runs/reproduce/<OUT>/README-head.md.
#
#   scripts/reproduce.sh [--quick] [--jobs N] [--only fig1,fig3] [--no-build] [--out DIR]
#                        [--hilo-sim PATH] [--print-commands]
#
# --quick   fewer steps, points, seeds and workers (default OUT results/runs/paper-quick/).
# --out DIR where the figures go (default results/runs/paper/, --quick results/runs/paper-quick/).
# --jobs N  simulator runs in parallel (default 2).
# --only    a comma-separated subset of fig1..fig8 and fig2-grpo (the GRPO panel: opt-in, about
#           an hour on an idle 2-core machine; --only fig2-grpo,fig2 adds it to fig2).
# --hilo-sim PATH  the simulator (default $HILO_SIM, else build/sim/hilo-sim).
# --print-commands  print every figure's commands (as the scenario files' headers show them),
#           run nothing.
# Sweep logs, per-figure wall times and README sections are kept under
# results/runs/reproduce/<OUT with / as ->/ (ignored by git), not next to the figures.
# Figures: fig1 update latency and step time vs bandwidth; fig2 final quality vs bytes per update
# over seeds 1,2,3 (HiLo and delta arms, drift; a GRPO panel next to distillation once
# scenarios/paper/fig2-grpo.textproto exists, with the same arm names); fig3 learning curves;
# fig4 Spar's rank allocation (+ gradient/update spectra); fig5 ablations; fig6 replica
# consistency; fig7 time to a target quality vs bandwidth; fig8 the timeline of teaching
# scenario 04 (stragglers), synchronous and with max_staleness 1.
# Sweeps are resumable: rerunning skips every run whose outputs match its resolved scenario,
# simulator binary and profile data.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
args=("$@")
quick=0
jobs=2
only="fig1,fig2,fig3,fig4,fig5,fig6,fig7,fig8"
build=1
out=""
print=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --jobs) jobs="$2"; shift ;;
    --only) only="$2"; shift ;;
    --no-build) build=0 ;;
    --out) out="$2"; shift ;;
    --hilo-sim) HILO_SIM="$2"; shift ;;
    --print-commands) print=1 ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reproduce.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

[ -n "$out" ] || out=$([ "$quick" = 1 ] && echo results/runs/paper-quick || echo results/runs/paper)
out="${out%/}"
PY=/usr/bin/python3
SIM="${HILO_SIM:-$root/build/sim/hilo-sim}"
if [ "$print" = 0 ]; then
  if [ "$build" = 1 ]; then
    echo "[reproduce] building hilo-sim (incremental)" >&2
    "$root/scripts/build.sh" --target hilo-sim models-real-gradient-error >&2
  fi
  [ -x "$SIM" ] || { echo "reproduce.sh: $SIM missing (build it, drop --no-build, or pass --hilo-sim PATH)" >&2; exit 2; }
  mkdir -p "$out"
fi
mode=$([ "$quick" = 1 ] && echo quick || echo full)
# Working state (sweep logs, wall times, README sections) stays out of the results folder.
state_name="$(realpath -m --relative-to="$root" "$out")"
state="$root/results/runs/reproduce/${state_name//\//-}"
readme_parts="$state/readme-parts"
[ "$print" = 1 ] || mkdir -p "$readme_parts"
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

selected() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# The command lines of a figure as the scenario headers show them: `sweep` is spelled
# scripts/sweep.py (reproduce.sh adds --jobs and --hilo-sim), paths relative to the checkout.
show() {
  if [ "$1" = sweep ]; then echo -n 'scripts/sweep.py '; shift; fi
  shquote "$@"
  echo
}

# Runs one figure: $1 = figure id (fig1), $2 = title, then a sweep command line and, after each
# literal "--plot", a plot command line. All are echoed into the figure's README section.
figure() {
  local id="$1" title="$2"; shift 2
  local sweep=() plots=() cur=()
  while [ $# -gt 0 ] && [ "$1" != "--plot" ]; do sweep+=("$1"); shift; done
  while [ $# -gt 0 ]; do  # plot command lines, kept as quoted strings
    shift
    cur=()
    while [ $# -gt 0 ] && [ "$1" != "--plot" ]; do cur+=("$1"); shift; done
    plots+=("$(shquote "${cur[@]}")")
  done
  selected "$id" || return 0
  if [ "$print" = 1 ]; then
    { show "${sweep[@]}"; for p in "${plots[@]}"; do echo "$p"; done; } |
      sed "s|$root/||g; s|^|$id: |"
    return 0
  fi
  echo "[reproduce] $id: $title ($mode)" >&2
  local t0 rc=0
  t0=$(date +%s)
  "${sweep[@]}" 2> >(tee "$state/$id.sweep.log" >&2) || rc=$?
  wait  # for tee
  local runs
  runs=$(grep -o '[0-9]* already done, [0-9]* to run' "$state/$id.sweep.log" | tail -1 || true)
  if [ "$rc" != 0 ]; then
    echo "[reproduce] $id: sweep exited $rc; plotting what finished" >&2
    failed+=("$id (sweep exit $rc)")
  fi
  local table="$out/$id.txt" p
  : > "$table"
  for p in "${plots[@]}"; do
    if ! eval "$p" >> "$table"; then
      failed+=("$id (plot)")
    fi
  done
  local t1 took
  t1=$(date +%s)
  took="$((t1 - t0)) s"
  # A rerun that only re-plots keeps the wall time of the run that made the CSVs.
  if [[ "$runs" == *" 0 to run" ]] && [ -f "$state/$id.walltime" ]; then
    took="$(cat "$state/$id.walltime") (when its runs were made; this rerun only re-plotted)"
  else
    echo "$took" > "$state/$id.walltime"
  fi
  local sweep_dir="${sweep[-1]}"
  {
    echo "## $id: $title"
    echo
    echo -n "Mode: $mode; wall time $took (sweep + plot, --jobs $jobs; "
    echo "runs: ${runs:-unknown})."
    echo -n "Figure(s):"
    for p in "${plots[@]}"; do echo -n " \`$(basename "${p##* }").png\`"; done
    echo " (and \`.pdf\`); plotted numbers: \`$id.txt\`;"
    local rel="${sweep_dir#"$out"/}"
    echo "CSV: \`$rel/sweep.csv\` (provenance: \`$rel/sweep.json\`); per-run CSVs under"
    echo "\`$rel/runs/\` (the plotters join them)."
    echo
    echo '```sh'
    {
      show "${sweep[@]}" | sed "s|\$| --jobs $jobs|"
      for p in "${plots[@]}"; do echo "$p"; done
    } | sed "s|$root/||g"
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
    --out "$out/fig1-speedup"

# Figure 2: final quality vs % of adapter bytes over seeds, HiLo and delta arms (real bytes, many
# steps); with scenarios/paper/fig2-grpo.textproto (same arms) a GRPO panel beside it.
fig2_budgets="$(pick 0.5%,1.6%,5% 0.25%,0.5%,1%,1.6%,5%,15%,30%,60%)"
fig2_psgd="$(pick 2.5%,5%,15% 2.5%,3%,4%,6%,10%,20%,30%,50%)"
fig2_grid=(--zip --grid "arms[hilo-spar].budget=$fig2_budgets"
           --grid "arms[hilo-topk].budget=$fig2_budgets"
           --grid "arms[hilo-powersgd].budget=$fig2_psgd"
           --grid "arms[delta-spar].budget=$fig2_budgets"
           --grid "arms[delta-topk].budget=$fig2_budgets"
           --cross "seed=$(pick 1,2 1,2,3)" --set "workload.steps=$(pick 30 100)")
fig2_csvs=("$out/fig2/sweep.csv")
fig2_steps=(--steps "$out/fig2/sweep_steps.csv")
# The GRPO panel is opt-in (--only fig2-grpo,fig2): its 24 runs of 6 arms x 100 GRPO steps on the
# paper preset take about an hour on an idle 2-core machine; selected, fig2 plots it too.
if [ -f scenarios/paper/fig2-grpo.textproto ]; then
  figure fig2-grpo "GRPO: final mean reward vs bytes per update" \
    sweep scenarios/paper/fig2-grpo.textproto "${fig2_grid[@]}" --out "$out/fig2-grpo" \
    --plot "$PY" scripts/plot_pareto.py "$out/fig2-grpo/sweep.csv" \
      --steps "$out/fig2-grpo/sweep_steps.csv" --out "$out/fig2-grpo-pareto"
  if selected fig2-grpo; then
    fig2_csvs+=("$out/fig2-grpo/sweep.csv")
    fig2_steps+=(--steps "$out/fig2-grpo/sweep_steps.csv")
  fi
fi
figure fig2 "final quality vs bytes per update (real-text teacher)" \
  sweep scenarios/paper/fig2-pareto.textproto "${fig2_grid[@]}" --out "$out/fig2" \
  --plot "$PY" scripts/plot_pareto.py "${fig2_csvs[@]}" "${fig2_steps[@]}" --normalize \
    --out "$out/fig2-pareto" \
  --plot "$PY" scripts/plot_pareto.py "${fig2_csvs[@]}" "${fig2_steps[@]}" \
    --out "$out/fig2-pareto-absolute"

# Figure 3: learning curves vs step and simulated time (Llama-3.2-1B scale).
figure fig3 "learning curves vs step and simulated time" \
  sweep scenarios/paper/fig3-curves.textproto --set "workload.steps=$(pick 30 100)" \
    --out "$out/fig3" \
  --plot "$PY" scripts/plot_curves.py "$out/fig3/sweep_steps.csv" --loss \
    --ylabel "reverse KL (lower is better)" --out "$out/fig3-curves"

# Figure 4's second panel: energy in the top-k singular triplets of a real gradient and of the
# AdamW update it produced (paper distillation workload, step 11); the tool's '#' lines go to
# the CSVs' sidecars.
spectra_cmd=(build/tests/models-real-gradient-error 10 "$out/spectra.csv")
spectra_workload="paper distillation workload (width 256, LoRA rank 64), step 11"
if selected fig4; then
  if [ "$print" = 1 ]; then
    echo "fig4: $(shquote "${spectra_cmd[@]}") > $out/real-gradient-error.csv"
    echo "fig4: $(shquote "$PY" scripts/csv_provenance.py "$out/spectra.csv" \
      "$out/real-gradient-error.csv" --set "workload=$spectra_workload")"
  elif [ -x "$root/build/tests/models-real-gradient-error" ]; then
    if "${spectra_cmd[@]}" > "$out/real-gradient-error.csv" 2> "$state/real-gradient-error.log"; then
      "$PY" scripts/csv_provenance.py "$out/spectra.csv" "$out/real-gradient-error.csv" \
        --set "workload=$spectra_workload"
    else
      echo "reproduce: models-real-gradient-error failed (see $state/real-gradient-error.log)" >&2
    fi
  fi
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
  --plot "$PY" scripts/plot_ablations.py "$out/fig5/sweep.csv" --out "$out/fig5-ablations"

# Figure 6: drift and hash agreement of delta vs HiLo.
figure fig6 "replica consistency: drift and hash agreement" \
  sweep scenarios/paper/fig6-consistency.textproto --set "workload.steps=$(pick 30 60)" \
    --out "$out/fig6" \
  --plot "$PY" scripts/plot_consistency.py "$out/fig6/sweep_steps.csv" \
    "$out/fig6/sweep_workers.csv" --ylabel "reverse KL (lower is better)" \
    --out "$out/fig6-consistency"

# Figure 7: speed and quality at one operating point: simulated time to 80% of full sync's
# progress (fig3's scenario) at three bandwidths.
figure fig7 "time to a target quality vs bandwidth" \
  sweep scenarios/paper/fig3-curves.textproto \
    --grid "network.worker_link.bandwidth=10Mbps,100Mbps,1Gbps" \
    --set "workload.steps=$(pick 10 100)" --set "workload.eval_every=2" --out "$out/fig7" \
  --plot "$PY" scripts/plot_time_to_target.py "$out/fig7/sweep.csv" \
    --target-share "$(pick 0.5 0.8)" --out "$out/fig7-time-to-target"

# Figure 8: what stragglers and staleness look like: teaching scenario 04 as a timeline.
figure fig8 "timeline of stragglers, synchronous vs max_staleness 1" \
  sweep scenarios/teaching/04-stragglers.textproto --grid "mode.max_staleness=0,1" \
    --out "$out/fig8" \
  --plot "$PY" scripts/plot_timeline.py "$out/fig8/runs/max-staleness-0" \
    "$out/fig8/runs/max-staleness-1" --labels "synchronous;max_staleness 1" \
    --out "$out/fig8-timeline"

[ "$print" = 1 ] && exit 0

end_all=$(date +%s)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
out_abs="$(cd "$out" && pwd)"
exclude=()  # the outputs themselves are not uncommitted changes
case "$out_abs/" in "$root"/*) exclude=(":(exclude)${out_abs#"$root"/}") ;; esac
dirty=$(git -C "$root" status --porcelain -- . "${exclude[@]}" 2>/dev/null | head -1 || true)
# The command as it was given (the Remake line names --only and --out too).
invocation="scripts/reproduce.sh${args[*]:+ $(shquote "${args[@]}")}"
total=0
for f in "$state"/fig*.walltime; do [ -f "$f" ] && total=$((total + $(cut -d' ' -f1 "$f"))); done
{
  echo "# Paper-style figures"
  echo
  echo "Remake: \`$invocation\`  "
  echo "Wall time ($(nproc) cores): $total s in all (per figure below).  "
  echo "Commit: $commit$([ -n "$dirty" ] && echo ' plus uncommitted changes') (each figure's \`sweep.json\` names the commit its runs were made at)."
  echo
  echo "Made by \`$invocation\`"
  echo "($mode mode) on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit$([ -n "$dirty" ] && echo ' plus uncommitted changes'),"
  echo "$(nproc) CPU cores; the figures' runs and plots took $total s of wall time in all (this"
  echo "invocation: $((end_all - start_all)) s; a figure whose runs were reused is only re-plotted);"
  echo "simulator \`${SIM#"$root"/}\` ($(stat -c %y "$SIM" | cut -d. -f1), $(sha256sum "$SIM" | cut -c1-12))."
  echo "Every number comes from the simulator runs under each figure's folder; each figure's PNG"
  echo "also carries the plotting command in small print. Scenarios: \`scenarios/paper/\`."
  echo
} > "$state/README-head.md"
{
  if [ -f "$out/README.md" ]; then  # its head is written by hand: keep it as it is
    awk '/^## / { exit } { print }' "$out/README.md"
  else
    cat "$state/README-head.md"
  fi
  for id in fig1 fig2-grpo fig2 fig3 fig4 fig5 fig6 fig7 fig8; do
    if [ -f "$readme_parts/$id.md" ]; then
      cat "$readme_parts/$id.md"
    elif [ -f "$out/README.md" ]; then  # not run here: keep its section of the README as it is
      awk -v h="## $id:" 'index($0, h) == 1 { on = 1; print; next }
                          /^## / { on = 0 } on' "$out/README.md"
    fi
  done
} > "$out/README.md.new"
mv "$out/README.md.new" "$out/README.md"
echo "[reproduce] wrote $out/README.md (generated head: ${state#"$root"/}/README-head.md); total wall time $((end_all - start_all)) s" >&2
if [ "${#failed[@]}" -gt 0 ]; then
  echo "[reproduce] failed: ${failed[*]}" >&2
  exit 1
fi
