#!/usr/bin/env bash
# chaos.sh [MINUTES]: a chaos run on real processes. Runs scripts/chaos-relay.textproto (4 workers
# behind 2 relays) under `hilo-emu --network direct` (loopback only) for about MINUTES (default 2)
# while workers are SIGKILLed at random times and started again after a random pause (scenario
# worker_crash faults with restart_after, drawn from SEED). The run must end with every live
# worker at the learner's final hash and 0 versions lost; prints the kills, the recoveries and
# their p50 / max time, and exits non-zero otherwise.
#
# Bounded: at most one kill per KILL_EVERY_S seconds (default 8) of modelled time, pauses of
# 0.5-3 s, never two workers down at once, nothing in the last 5 s; hilo-emu stops every process
# it started on any exit (and a trap stops hilo-emu). What is not injected yet: relay and learner
# kills, link outages (they need hilo-emu support for relay restarts, learner restarts and
# emulated link faults).
#
# Environment: SEED (default 1), OUT (results folder; default a temporary one, removed at exit),
# HILO_BIN (folder of hilo-sim and hilo-emu; default build/sim), KILL_EVERY_S.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minutes="${1:-2}"
seed="${SEED:-1}"
kill_every="${KILL_EVERY_S:-8}"
bin="${HILO_BIN:-$root/build/sim}"
scenario="$root/scripts/chaos-relay.textproto"
python=/usr/bin/python3

if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || [ "$($python -c "print(float('$minutes') > 0)")" != True ]; then
  echo "chaos.sh: MINUTES must be a positive number, got \"$minutes\"" >&2
  exit 2
fi
for b in hilo-sim hilo-emu hilo-node; do
  if [ ! -x "$bin/$b" ]; then
    echo "chaos.sh: $bin/$b is missing (build it, or set HILO_BIN)" >&2
    exit 2
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/hilo-chaos-XXXXXX")"
emu_pid=""
cleanup() {
  if [ -n "$emu_pid" ] && kill -0 "$emu_pid" 2>/dev/null; then
    kill -TERM "$emu_pid" 2>/dev/null || true
    wait "$emu_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
out="${OUT:-$work/out}"

# How long a step takes (modelled), from the simulator: steps for about MINUTES of run.
"$bin/hilo-sim" run "$scenario" --quiet --out "$work/probe" >/dev/null
steps="$($python - "$work/probe/summary.json" "$minutes" <<'PY'
import json, math, sys
arm = json.load(open(sys.argv[1]))["arms"][0]
step_s = arm["step_time_s_mean"]
print(max(10, math.ceil(float(sys.argv[2]) * 60 / step_s)))
PY
)"

# The kills: one window of KILL_EVERY_S each, a random worker and time inside it, a random pause.
mapfile -t sets < <($python - "$seed" "$minutes" "$kill_every" <<'PY'
import random, sys
rng = random.Random(int(sys.argv[1]))
total = float(sys.argv[2]) * 60
every = float(sys.argv[3])
t, i = 2.0, 0
while t + every <= total - 5:
    at = t + rng.uniform(0, every - 3.5)
    pause = rng.uniform(0.5, 3.0)
    worker = rng.randrange(4)
    print(f'faults[{i}]=kind: "worker_crash" at: "{at:.3f}s" target: "worker:{worker}" '
          f'restart_after: "{pause:.3f}s"')
    t += every
    i += 1
PY
)
args=()
for s in "${sets[@]}"; do args+=(--set "$s"); done
echo "chaos.sh: $steps steps (~$minutes min), ${#sets[@]} worker kills, seed $seed; out $out"

"$bin/hilo-emu" run "$scenario" --network direct --quiet --set "workload.steps=$steps" \
  "${args[@]}" --out "$out" 2> "$work/emu.stderr" &
emu_pid=$!
set +e
wait "$emu_pid"
code=$?
set -e
emu_pid=""
grep -E "^hilo-emu: worker_crash" "$work/emu.stderr" | sed 's/^/  /' || true
if [ "$code" -ne 0 ]; then
  echo "chaos.sh: hilo-emu exited $code:" >&2
  tail -n 30 "$work/emu.stderr" >&2
  exit 1
fi
$python - "$out/summary.json" <<'PY'
import json, sys
arm = json.load(open(sys.argv[1]))["arms"][0]
r = arm["recovery_s"]
print(f"kills {arm['faults_injected']}, recoveries {r['n']}, recovery p50 {r['p50']:.3f} s, "
      f"max {r['max']:.3f} s; versions lost {arm['versions_lost']}; "
      f"workers at the final hash {arm['workers_at_final_hash']} of {arm['workers_alive']} alive")
ok = arm["versions_lost"] == 0 and arm["workers_at_final_hash"] == arm["workers_alive"]
sys.exit(0 if ok else 1)
PY
