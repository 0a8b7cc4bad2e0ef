#!/usr/bin/env bash
# The TCP trace of validation rows, laid over each other (issue 39): each row of the emulation
# table's link grid (scenarios/validation/emu-link.textproto with the row's bandwidth, delay and
# loss; workload.steps=STEPS to keep the traces small) run by hilo-sim under the packet and the
# flow model with --trace-tcp and, with --emu (root: --network ns3), by hilo-emu; the learner's
# sending end towards worker-0 of each is kept as DIR/ROW/{packet,flow,emulation}.csv and drawn
# by scripts/plot_tcp_trace.py into DIR/ROW/overlay.{png,pdf}.
#
# Usage: scripts/tcp_trace_overlay.sh [--out DIR] [--steps N] [--emu] [--hilo-sim PATH]
#                                     [--hilo-emu PATH] [ROW ...]
#   ROW   RATE-DELAY-lossLOSS as in results/validation/emulation.csv (without "link-"); default
#         100Mbps-40ms-loss0
#   DIR   default results/validation/tcp-trace
# Binaries default to $HILO_SIM / $HILO_EMU, else build/sim/. Runs go to results/runs/tcp-trace/
# (ignored by git). Exit 2 on bad arguments or a missing binary.
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/validation/tcp-trace
steps=5
emu=0
rows=()
hilo_sim="${HILO_SIM:-build/sim/hilo-sim}"
hilo_emu="${HILO_EMU:-build/sim/hilo-emu}"
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--steps|--hilo-sim|--hilo-emu)
      [ $# -ge 2 ] || { echo "tcp_trace_overlay.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --out) out="$2" ;; --steps) steps="$2" ;;
        --hilo-sim) hilo_sim="$2" ;; --hilo-emu) hilo_emu="$2" ;;
      esac
      shift 2 ;;
    --emu) emu=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tcp_trace_overlay.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) rows+=("$1"); shift ;;
  esac
done
[ ${#rows[@]} -gt 0 ] || rows=(100Mbps-40ms-loss0)
[ -x "$hilo_sim" ] || { echo "tcp_trace_overlay.sh: no hilo-sim at $hilo_sim" >&2; exit 2; }
if [ $emu = 1 ] && [ ! -x "$hilo_emu" ]; then
  echo "tcp_trace_overlay.sh: no hilo-emu at $hilo_emu" >&2
  exit 2
fi
runs=results/runs/tcp-trace
# The learner's end towards worker-0: the header and its rows.
keep() { awk -F, 'NR == 1 || ($3 == "learner" && $4 == "worker-0")' "$1" > "$2"; }
for row in "${rows[@]}"; do
  if ! [[ "$row" =~ ^([0-9.]+[KMG]?bps)-([0-9.]+ms)-loss([0-9.]+)$ ]]; then
    echo "tcp_trace_overlay.sh: row $row is not RATE-DELAY-lossLOSS" >&2
    exit 2
  fi
  set_args=(--set "network.worker_link.bandwidth=${BASH_REMATCH[1]}"
            --set "network.worker_link.delay=${BASH_REMATCH[2]}"
            --set "network.worker_link.loss=${BASH_REMATCH[3]}"
            --set "workload.steps=$steps")
  sc=scenarios/validation/emu-link.textproto
  mkdir -p "$out/$row"
  files=() labels=()
  for model in packet flow; do
    "$hilo_sim" run "$sc" "${set_args[@]}" --set network.model=$model --quiet --trace-tcp \
      --out "$runs/$row/$model" > /dev/null
    keep "$runs/$row/$model/tcp-trace.csv" "$out/$row/$model.csv"
    files+=("$out/$row/$model.csv") labels+=("$model")
  done
  if [ $emu = 1 ]; then
    "$hilo_emu" run "$sc" "${set_args[@]}" --network ns3 --quiet --trace-tcp \
      --out "$runs/$row/emulation" > /dev/null
    keep "$runs/$row/emulation/tcp-trace.csv" "$out/$row/emulation.csv"
    cp "$runs/$row/emulation/nodes/hilo-spar/learner.tcp-trace.csv.hystart.csv" \
      "$out/$row/emulation-learner-hystart.csv"
    files+=("$out/$row/emulation.csv") labels+=("emulation")
  fi
  /usr/bin/python3 scripts/plot_tcp_trace.py "${files[@]}" \
    --labels "$(IFS=,; echo "${labels[*]}")" --out "$out/$row/overlay"
done
