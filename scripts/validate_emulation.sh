#!/usr/bin/env bash
# Validates the simulator against emulated links (README, "Emulated links"): runs
# scripts/compare_modes.py on every scenario of scenarios/validation/emu-*.textproto -- the single
# link at 10/50/100 Mbps x 10/40 ms one-way x 0%/1% loss, 0.1% and 2% loss at 40 ms, 300 Mbps, a
# shared uplink, regions (2 and 4 workers per region), relays and a GPU mix with staleness 1 --
# and writes results/validation/emulation.csv (a row per scenario and arm), emulation.md (the
# table, with this command, the kernel, the machine's load and the emulator's lag, and
# emulation-notes.md -- why rows miss, written by hand -- below it), emulation-commits.csv (the
# commit and date each side of each row -- packet model, flow model, emulation -- was made at; a
# side kept by --reuse keeps its earlier line) into OUT (--out; default
# results/runs/validation-emu/tables, ignored by git: results/validation/ is written only when
# --out names it), and the runs under results/runs/validation-emu/ (--runs).
# Every row's simulator side runs in both network models, the packet model (the sim_* columns)
# and the flow model (flow_*), each against the same emulation figures (compare_modes.py --flow),
# and the table checks each model against the goals on its own. Each loss-free row's emulation
# runs three times and its median run is the reference (the kernel's TCP varies from run to run
# by more than a loss-free row's 10% goal: compare_modes.py --emu-runs). A row with random loss
# runs over loss seeds 1..N (--lossy-seeds, default 5): every side -- packet model, flow model and
# emulation -- once per seed with --set seed=S (the scenario's seed draws the links' losses, in
# hilo-sim and in hilo-netem alike), and each side's figure is the mean over the seeds of each
# seed's p50 and p99 (compare_modes.py --seeds): one loss draw is not a lossy row's figure
# (results/validation/seeds.md). Every emulation run is traced (hilo-emu --trace-tcp), so the
# table shows how often each run's kernel left slow start by HyStart's delay test (an RTT
# excursion the link does not have can slow a whole run: results/validation/emulation-notes.md).
# The rule for such runs, fixed before the table that first used it: on a loss-free row, a run
# whose kernel took more HyStart delay exits than the packet model's run of the row is replaced by
# one more run, up to 2 more per row (compare_modes.py --replace-excursions 2; the packet model's
# run is traced for it), and the figure is the median of the first three runs without one (filled
# with the earliest replaced runs if two more were not enough, so an exit the kernel takes every
# time is never hidden); every run made stays in the CSV and the table's runs cell. Rows with
# random loss keep every run: loss, not HyStart, ends their slow starts.
# Needs root (hilo-emu --network ns3) and a build
# (scripts/build.sh --target hilo-sim hilo-emu hilo-node hilo-netem). About 2 hours: 50 lossy
# emulation runs at about 1.9 minutes, 39 loss-free ones at about 37 s, and the simulator's runs.
usage() {
  cat <<'USAGE'
Usage: scripts/validate_emulation.sh [--reuse] [--emu-runs N] [--lossy-seeds N]
                                    [--lossy-emu-runs N] [--keep-lossy] [--rows LABEL,...]
                                    [--out DIR] [--runs DIR] [--hilo-sim PATH] [--hilo-emu PATH]
                                    [--help]
  --reuse           keep each run's earlier results where its summary.json exists (rerun one
                    side only by deleting that side's folders)
  --emu-runs N      emulation runs per loss-free row, the median run the reference (default 3)
  --lossy-seeds N   rows with random loss run loss seeds 1..N on every side (packet model, flow
                    model, emulation; --set seed=S), their figures the mean over seeds (default 5)
  --lossy-emu-runs N  emulation runs per loss seed of a row with random loss, the median run
                    that seed's figure (default 1)
  --keep-lossy      rows with random loss keep their lines of the current emulation.csv and
                    emulation-commits.csv (every side's commit and date with them) instead of
                    running: the loss-free rows are rerun alone
  --rows LABEL,...  run only these rows (e.g. link-10Mbps-10ms-loss0.01,star-uplink); the table
                    then has only them
  --out DIR         where emulation.{csv,md}, emulation-meta.txt and emulation-commits.csv go
                    (default results/runs/validation-emu/tables; --out results/validation
                    remakes the committed tables). --reuse and --keep-lossy read the earlier
                    rows from DIR, else from results/validation/
  --runs DIR        where the runs go, a folder per row (default results/runs/validation-emu)
  --hilo-sim PATH   hilo-sim binary (default $HILO_SIM, else build/sim/hilo-sim)
  --hilo-emu PATH   hilo-emu binary (default $HILO_EMU, else build/sim/hilo-emu)
Every row's simulator side runs in the packet and the flow model; the table checks each model
against the goals (loss-free rows p50 within 10%, p99 within 20%; rows with random loss, means
over their seeds, p50 within 25%, p99 within 35%). Writes OUT/emulation.{csv,md}; runs go to
RUNS (results/runs/validation-emu/). Needs root (hilo-emu --network ns3). About 2 hours (lossy rows
about 1.9 minutes per emulation run, loss-free rows about 37 s).
USAGE
}
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
reuse=()
bins=()
clean_runs=3
lossy_runs=1
lossy_seeds=5
keep_lossy=0
only=""
out=results/runs/validation-emu/tables
runs_dir=results/runs/validation-emu
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse) reuse=(--reuse) ;;
    --keep-lossy) keep_lossy=1 ;;
    --emu-runs|--lossy-emu-runs|--lossy-seeds)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]?$ ]] || {
        echo "validate_emulation.sh: $1 needs a count 1..99" >&2; exit 2; }
      case "$1" in
        --emu-runs) clean_runs="$2" ;;
        --lossy-emu-runs) lossy_runs="$2" ;;
        *) lossy_seeds="$2" ;;
      esac
      shift ;;
    --rows)
      [[ $# -ge 2 && -n "$2" ]] || {
        echo "validate_emulation.sh: --rows needs LABEL,..." >&2; exit 2; }
      only="$2"; shift ;;
    --hilo-sim|--hilo-emu)
      [ $# -ge 2 ] || { echo "validate_emulation.sh: $1 needs a PATH" >&2; exit 2; }
      bins+=("$1" "$2"); shift ;;
    --out|--runs)
      [ $# -ge 2 ] || { echo "validate_emulation.sh: $1 needs a DIR" >&2; exit 2; }
      if [ "$1" = --out ]; then out="$2"; else runs_dir="$2"; fi
      shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "validate_emulation.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

# The rows, in the table's order: label, scenario, overrides (one word each), and whether the row
# has random loss. The link grid: 10/50/100 Mbps x 10/40 ms x 0%/1% loss; then loss between and
# beyond the grid's 0% and 1%, a rate past 100 Mbps (where slow start after idle rather than bytes
# bounds an update), the shared uplink, regions, relays, the GPU mix, and twice the workers behind
# each region's WAN link.
labels=() scenarios=() overrides=() lossy=()
add_row() { # label scenario lossy(0|1) [override ...]
  labels+=("$1"); scenarios+=("$2"); lossy+=("$3"); shift 3; overrides+=("$*")
}
link_row() { # rate delay loss
  local l=0
  [ "$3" = 0 ] || l=1
  add_row "link-$1-$2-loss$3" scenarios/validation/emu-link.textproto $l \
    "network.worker_link.bandwidth=$1" "network.worker_link.delay=$2" "network.worker_link.loss=$3"
}
for rate in 10Mbps 50Mbps 100Mbps; do
  for delay in 10ms 40ms; do
    for loss in 0 0.01; do link_row $rate $delay $loss; done
  done
done
for loss in 0.001 0.02; do
  for rate in 10Mbps 100Mbps; do link_row $rate 40ms $loss; done
done
for delay in 10ms 40ms; do link_row 300Mbps $delay 0; done
for s in star-uplink regions relay gpu-mix; do
  add_row "$s" "scenarios/validation/emu-$s.textproto" 0
done
add_row regions-8 scenarios/validation/emu-regions.textproto 0 'workers[0].count=4' \
  'workers[1].count=4'
if [ -n "$only" ]; then
  for want in ${only//,/ }; do
    [[ " ${labels[*]} " == *" $want "* ]] || {
      echo "validate_emulation.sh: --rows: no row '$want' (rows: ${labels[*]})" >&2; exit 2; }
  done
fi
wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

mkdir -p "$out" "$runs_dir"
csv="$out/emulation.csv"
# The earlier rows (--reuse, --keep-lossy) and the hand-written notes: OUT's, else the committed.
earlier_dir="$out"
[ -f "$csv" ] || earlier_dir=results/validation
old_csv="$(mktemp)"
[ -f "$earlier_dir/emulation.csv" ] && cp "$earlier_dir/emulation.csv" "$old_csv"
rm -f "$csv"
# Which commit made each side of each row: label,side,commit,date, side sim (the packet model),
# flow (the flow model) or emu. A side kept by --reuse keeps the line it had; a side run now gets
# this commit and date.
commits="$out/emulation-commits.csv"
old_commits="$(mktemp)"
trap 'rm -f "$old_commits" "$old_csv"' EXIT
[ -f "$earlier_dir/emulation-commits.csv" ] && cp "$earlier_dir/emulation-commits.csv" "$old_commits"
echo "label,side,commit,date" > "$commits"
head_commit="$(git rev-parse --short HEAD)$(git diff --quiet -- sim scripts scenarios || echo '+uncommitted')"
meta="$out/emulation-meta.txt"
earlier=""
if { [ ${#reuse[@]} -gt 0 ] || [ $keep_lossy = 1 ]; } && [ -f "$earlier_dir/emulation-meta.txt" ]; then
  # Results reused from an earlier run keep that run's date and load on record.
  earlier="$(grep -E '^(date|load before|load after):' "$earlier_dir/emulation-meta.txt" | sed 's/^/earlier run (results reused or rows kept), /')"
fi
{
  echo "command: scripts/validate_emulation.sh --out $out${reuse:+ --reuse} --emu-runs $clean_runs --lossy-seeds $lossy_seeds --lossy-emu-runs $lossy_runs$([ $keep_lossy = 1 ] && echo ' --keep-lossy')$([ -n "$only" ] && echo " --rows $only")$([ "$runs_dir" != results/runs/validation-emu ] && echo " --runs $runs_dir")"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- sim scripts scenarios || echo ' (with uncommitted changes)')"
  echo "kernel: $(uname -r)"
  echo "cpus: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ -n "$earlier" ] && echo "$earlier"
} > "$meta"

keep_row() { # label: its lines of the earlier CSV and commits file, as they were
  local label="$1" side line
  /usr/bin/python3 - "$old_csv" "$csv" "$label" <<'PY' || exit 2
import csv, os, sys
sys.path.insert(0, "scripts")
from compare_modes import CSV_FIELDS
old, new, label = sys.argv[1:]
with open(old, newline="") as f:
    rows = [r for r in csv.DictReader(f) if r["label"] == label]
if not rows:
    sys.exit(f"validate_emulation.sh: --keep-lossy: no row '{label}' in the earlier emulation.csv")
header = not os.path.exists(new)
with open(new, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS, restval="", extrasaction="ignore")
    if header:
        w.writeheader()
    for r in rows:
        w.writerow(dict(r, emu_runs=r.get("emu_runs") or 1))
PY
  for side in sim flow emu; do
    line="$(awk -F, -v l="$label" -v s="$side" '$1 == l && $2 == s' "$old_commits")"
    if [ -z "$line" ]; then
      # A row made before the flow model's side was added has none, and its table cells say so.
      [ "$side" = flow ] && continue
      echo "validate_emulation.sh: --keep-lossy: no $side line for '$label' in emulation-commits.csv" >&2
      exit 2
    fi
    echo "$line" >> "$commits"
  done
}

compare() { # emulation-runs seeds label scenario [override ...]: seeds "" or "1,2,...,N"
  local runs="$1" seeds="$2" label="$3" scenario="$4" side line o k s kept=()
  shift 4
  local sets=() seed_args=(--replace-excursions 2) suffixes=("")
  for o in "$@"; do sets+=(--set "$o"); done
  if [ -n "$seeds" ]; then
    seed_args=(--seeds "$seeds")  # every run kept: no --replace-excursions
    suffixes=()
    for s in ${seeds//,/ }; do suffixes+=("-seed$s"); done
  fi
  # A side is kept when --reuse finds every one of its runs (compare_modes.py's folders: sim,
  # flow, emu, emu-2, ..., each with -seedS before the run number under --seeds).
  if [ ${#reuse[@]} -gt 0 ]; then
    for side in sim flow emu; do
      local all=1
      for s in "${suffixes[@]}"; do
        if [ $side = emu ]; then
          for k in $(seq 1 "$runs"); do
            [ "$k" = 1 ] && o="emu$s" || o="emu$s-$k"
            [ -f "$runs_dir/$label/$o/summary.json" ] || all=0
          done
        else
          [ -f "$runs_dir/$label/$side$s/summary.json" ] || all=0
        fi
      done
      [ $all = 1 ] && kept+=("$side")
    done
  fi
  /usr/bin/python3 scripts/compare_modes.py "$scenario" "${sets[@]}" --label "$label" --csv "$csv" \
    --out "$runs_dir/$label" --flow --emu-runs "$runs" "${seed_args[@]}" "${reuse[@]}" "${bins[@]}" \
    --emu-arg=--trace-tcp
  for side in sim flow emu; do
    if [[ " ${kept[*]} " == *" $side "* ]]; then
      line="$(awk -F, -v l="$label" -v s="$side" '$1 == l && $2 == s' "$old_commits")"
      echo "${line:-$label,$side,unrecorded (reused),unrecorded}" >> "$commits"
    else
      echo "$label,$side,$head_commit,$(date -u +%Y-%m-%dT%H:%MZ)" >> "$commits"
    fi
  done
}

lossy_seed_list="$(seq -s, 1 "$lossy_seeds")"
for i in "${!labels[@]}"; do
  wanted "${labels[$i]}" || continue
  read -ra row_sets <<< "${overrides[$i]}"  # one word each; read does not glob workers[0]
  if [ "${lossy[$i]}" = 1 ]; then
    if [ $keep_lossy = 1 ]; then
      keep_row "${labels[$i]}"
    else
      compare "$lossy_runs" "$lossy_seed_list" "${labels[$i]}" "${scenarios[$i]}" "${row_sets[@]}"
    fi
  else
    compare "$clean_runs" "" "${labels[$i]}" "${scenarios[$i]}" "${row_sets[@]}"
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$meta"
notes=()
[ -f "$earlier_dir/emulation-notes.md" ] && notes=(--notes "$earlier_dir/emulation-notes.md")
/usr/bin/python3 scripts/validation_table.py "$csv" --meta "$meta" --commits "$commits" \
  "${notes[@]}" > "$out/emulation.md"
echo "wrote $csv and $out/emulation.md" >&2
