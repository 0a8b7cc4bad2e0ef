#!/usr/bin/env bash
# Measures how much link traffic this machine's emulator (hilo-netem) carries before it falls
# behind real time: scripts/compare_modes.py on scenarios/validation/emu-link.textproto with
# 10.9 MB updates (budget 100%) over one link at 100-800 Mbps / 5 ms (short enough that the
# simulator's window cap, 1024 segments, stays above the rate), and on emu-star-uplink with four
# workers at 100 and 200 Mbps behind a 1 Gbps uplink (every packet crosses two links).
# Beyond the ceiling the emulator's lag grows and transfers take longer than the simulator's.
# Writes OUT/emulation-ceiling.{csv,md} and emulation-ceiling-meta.txt (--out DIR; default
# results/runs/emulation-ceiling/tables, ignored by git: `--out results/validation` remakes the
# committed tables); runs under results/runs/emulation-ceiling/.
# Needs root and a build, about 10 minutes. README, "Emulated links", quotes the result.
# Usage: scripts/emulation_ceiling.sh [--out DIR] [--hilo-sim PATH] [--hilo-emu PATH] [--help]
#   (binaries default to $HILO_SIM / $HILO_EMU, else build/sim/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bins=()
out=results/runs/emulation-ceiling/tables
while [ $# -gt 0 ]; do
  case "$1" in
    --hilo-sim|--hilo-emu)
      [ $# -ge 2 ] || { echo "emulation_ceiling.sh: $1 needs a PATH" >&2; exit 2; }
      bins+=("$1" "$2"); shift ;;
    --out)
      [ $# -ge 2 ] || { echo "emulation_ceiling.sh: --out needs a DIR" >&2; exit 2; }
      out="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "emulation_ceiling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
runs=results/runs/emulation-ceiling
mkdir -p "$out" "$runs"
csv="$out/emulation-ceiling.csv"
rm -f "$csv"
meta="$out/emulation-ceiling-meta.txt"
{
  echo "command: scripts/emulation_ceiling.sh --out $out"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- sim scripts scenarios || echo ' (with uncommitted changes)')"
  echo "kernel: $(uname -r)"
  echo "cpus: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$meta"
big=(--set arms[hilo-spar].budget=100% --set workload.steps=10)
for rate in 100Mbps 200Mbps 400Mbps 800Mbps; do
  /usr/bin/python3 scripts/compare_modes.py scenarios/validation/emu-link.textproto "${big[@]}" \
    --set network.worker_link.bandwidth=$rate --set network.worker_link.delay=5ms \
    --label "link-$rate" --csv "$csv" --out "$runs/link-$rate" "${bins[@]}"
done
for rate in 100Mbps 200Mbps; do
  /usr/bin/python3 scripts/compare_modes.py scenarios/validation/emu-star-uplink.textproto \
    "${big[@]}" --set network.learner_uplink.bandwidth=1Gbps \
    --set network.worker_link.bandwidth=$rate --label "star4-$rate" --csv "$csv" \
    --out "$runs/star4-$rate" "${bins[@]}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$meta"
/usr/bin/python3 scripts/validation_table.py "$csv" --meta "$meta" > "$out/emulation-ceiling.md"
echo "wrote $csv and $out/emulation-ceiling.md" >&2
