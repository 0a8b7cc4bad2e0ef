#!/usr/bin/env bash
# Validates the simulator against emulated links (README, "Emulated links"): runs
# scripts/compare_modes.py on every scenario of scenarios/validation/emu-*.textproto -- the single
# link at 10/50/100 Mbps x 10/40 ms one-way x 0%/1% loss, 0.1% and 2% loss at 40 ms, 300 Mbps, a
# shared uplink, regions (2 and 4 workers per region), relays and a GPU mix with staleness 1 -- and writes results/validation/emulation.csv (a row per scenario and
# arm), emulation.md (the table, with this command, the kernel, the machine's load and the
# emulator's lag, and emulation-notes.md -- why rows miss, written by hand -- below it),
# emulation-commits.csv (the commit and date each side of each row was made at; a side kept by
# --reuse keeps its earlier line) into OUT (--out; default results/runs/validation-emu/tables,
# ignored by git: results/validation/ is written only when --out names it), and the runs under
# results/runs/validation-emu/.
# Each loss-free row's emulation runs three times and its median run is the reference (the kernel's
# TCP varies from run to run by more than a loss-free row's 10% goal: compare_modes.py --emu-runs);
# a lossy row's once, its spread being the loss draw on both sides, which one more emulated run does
# not average out. Needs root (hilo-emu --network ns3) and a build (scripts/build.sh --target
# hilo-sim hilo-emu hilo-node hilo-netem). About 35 minutes (24 for the loss-free rows alone).
usage() {
  cat <<'USAGE'
Usage: scripts/validate_emulation.sh [--reuse] [--emu-runs N] [--lossy-emu-runs N]
                                    [--out DIR] [--hilo-sim PATH] [--hilo-emu PATH] [--help]
  --reuse           keep each mode's earlier results where its summary.json exists (rerun one
                    side only by deleting that side's folder)
  --emu-runs N      emulation runs per loss-free row, the median run the reference (default 3)
  --lossy-emu-runs N  emulation runs per row with random loss (default 1)
  --keep-lossy      rows with random loss keep their lines of the current emulation.csv and
                    emulation-commits.csv (both sides' commit and date with them) instead of
                    running: the loss-free rows are rerun alone
  --out DIR         where emulation.{csv,md}, emulation-meta.txt and emulation-commits.csv go
                    (default results/runs/validation-emu/tables; --out results/validation
                    remakes the committed tables). --reuse and --keep-lossy read the earlier
                    rows from DIR, else from results/validation/
  --hilo-sim PATH   hilo-sim binary (default $HILO_SIM, else build/sim/hilo-sim)
  --hilo-emu PATH   hilo-emu binary (default $HILO_EMU, else build/sim/hilo-emu)
Writes OUT/emulation.{csv,md}; runs go to results/runs/validation-emu/.
Needs root (hilo-emu --network ns3). About 35 minutes.
USAGE
}
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
reuse=()
bins=()
clean_runs=3
lossy_runs=1
keep_lossy=0
out=results/runs/validation-emu/tables
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse) reuse=(--reuse) ;;
    --keep-lossy) keep_lossy=1 ;;
    --emu-runs|--lossy-emu-runs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]?$ ]] || {
        echo "validate_emulation.sh: $1 needs a count 1..99" >&2; exit 2; }
      if [ "$1" = --emu-runs ]; then clean_runs="$2"; else lossy_runs="$2"; fi
      shift ;;
    --hilo-sim|--hilo-emu)
      [ $# -ge 2 ] || { echo "validate_emulation.sh: $1 needs a PATH" >&2; exit 2; }
      bins+=("$1" "$2"); shift ;;
    --out)
      [ $# -ge 2 ] || { echo "validate_emulation.sh: --out needs a DIR" >&2; exit 2; }
      out="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "validate_emulation.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
runs_dir=results/runs/validation-emu
mkdir -p "$out" "$runs_dir"
csv="$out/emulation.csv"
# The earlier rows (--reuse, --keep-lossy) and the hand-written notes: OUT's, else the committed.
earlier_dir="$out"
[ -f "$csv" ] || earlier_dir=results/validation
old_csv="$(mktemp)"
[ -f "$earlier_dir/emulation.csv" ] && cp "$earlier_dir/emulation.csv" "$old_csv"
rm -f "$csv"
# Which commit made each side of each row: label,side,commit,date. A side kept by --reuse keeps
# the line it had; a side run now gets this commit and date.
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
  echo "command: scripts/validate_emulation.sh --out $out ${reuse[*]} --emu-runs $clean_runs --lossy-emu-runs $lossy_runs$([ $keep_lossy = 1 ] && echo ' --keep-lossy')"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- sim scripts scenarios || echo ' (with uncommitted changes)')"
  echo "kernel: $(uname -r)"
  echo "cpus: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ -n "$earlier" ] && echo "$earlier"
} > "$meta"

keep_row() { # label: its lines of the earlier CSV and commits file, as they were
  local label="$1"
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
  for side in sim emu; do
    line="$(awk -F, -v l="$label" -v s="$side" '$1 == l && $2 == s' "$old_commits")"
    [ -n "$line" ] || { echo "validate_emulation.sh: --keep-lossy: no $side line for '$label' in emulation-commits.csv" >&2; exit 2; }
    echo "$line" >> "$commits"
  done
}

compare() { # emulation-runs label scenario [--set ...]
  local runs="$1" label="$2" scenario="$3" side line kept=()
  shift 3
  # A side is kept when --reuse finds every one of its runs (the emulation's emu, emu-2, ...).
  local k all
  [ ${#reuse[@]} -gt 0 ] && [ -f "$runs_dir/$label/sim/summary.json" ] && kept+=(sim)
  all=1
  for k in $(seq 1 "$runs"); do
    [ "$k" = 1 ] && side=emu || side="emu-$k"
    [ -f "$runs_dir/$label/$side/summary.json" ] || all=0
  done
  [ ${#reuse[@]} -gt 0 ] && [ $all = 1 ] && kept+=(emu)
  /usr/bin/python3 scripts/compare_modes.py "$scenario" "$@" --label "$label" --csv "$csv" \
    --out "$runs_dir/$label" --emu-runs "$runs" "${reuse[@]}" "${bins[@]}"
  for side in sim emu; do
    if [[ " ${kept[*]} " == *" $side "* ]]; then
      line="$(awk -F, -v l="$label" -v s="$side" '$1 == l && $2 == s' "$old_commits")"
      echo "${line:-$label,$side,unrecorded (reused),unrecorded}" >> "$commits"
    else
      echo "$label,$side,$head_commit,$(date -u +%Y-%m-%dT%H:%MZ)" >> "$commits"
    fi
  done
}

for rate in 10Mbps 50Mbps 100Mbps; do
  for delay in 10ms 40ms; do
    for loss in 0 0.01; do
      if [ "$loss" != 0 ] && [ $keep_lossy = 1 ]; then
        keep_row "link-$rate-$delay-loss$loss"
        continue
      fi
      n="$clean_runs"; [ "$loss" = 0 ] || n="$lossy_runs"
      compare "$n" "link-$rate-$delay-loss$loss" scenarios/validation/emu-link.textproto \
        --set network.worker_link.bandwidth=$rate --set network.worker_link.delay=$delay \
        --set network.worker_link.loss=$loss
    done
  done
done
# Loss between and beyond the grid's 0% and 1%, a rate past 100 Mbps (where slow start after idle
# rather than bytes bounds an update), and twice the workers behind each region's WAN link.
for loss in 0.001 0.02; do
  for rate in 10Mbps 100Mbps; do
    if [ $keep_lossy = 1 ]; then
      keep_row "link-$rate-40ms-loss$loss"
      continue
    fi
    compare "$lossy_runs" "link-$rate-40ms-loss$loss" scenarios/validation/emu-link.textproto \
      --set network.worker_link.bandwidth=$rate --set network.worker_link.delay=40ms \
      --set network.worker_link.loss=$loss
  done
done
for delay in 10ms 40ms; do
  compare "$clean_runs" "link-300Mbps-$delay-loss0" scenarios/validation/emu-link.textproto \
    --set network.worker_link.bandwidth=300Mbps --set network.worker_link.delay=$delay \
    --set network.worker_link.loss=0
done
for s in star-uplink regions relay gpu-mix; do
  compare "$clean_runs" "$s" "scenarios/validation/emu-$s.textproto"
done
compare "$clean_runs" "regions-8" scenarios/validation/emu-regions.textproto \
  --set workers[0].count=4 --set workers[1].count=4
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$meta"
notes=()
[ -f "$earlier_dir/emulation-notes.md" ] && notes=(--notes "$earlier_dir/emulation-notes.md")
/usr/bin/python3 scripts/validation_table.py "$csv" --meta "$meta" --commits "$commits" \
  "${notes[@]}" > "$out/emulation.md"
echo "wrote $csv and $out/emulation.md" >&2
