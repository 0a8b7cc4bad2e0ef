#!/usr/bin/env bash
# chaos.sh [--hilo-sim PATH] [--hilo-emu PATH] [MINUTES]: a chaos run on real processes. Runs
# scripts/chaos-relay.textproto (4 workers behind 2 relays) under hilo-emu for about MINUTES
# (default 2) while, at random times drawn from SEED, a worker, a relay or the learner is
# SIGKILLed and started again after a random pause, or stopped (SIGSTOP) and continued (SIGCONT)
# a random while later with its connections left open (a hung or descheduled process), or slowed
# (stopped 9/10 of the time: a slow reader), or the disk under the learner's checkpoints fills up
# for a while (as root), or (NETWORK=ns3) a worker's link or a region's WAN goes down for a
# random while, both ways or one way only (a one-way partition). Workers and the learner are the
# scenario's worker_crash (restart_after) and learner_restart faults, outages its link_down faults
# (with their direction; injected into the emulated links), relays hilo-emu's --kill-relay,
# pauses and slow nodes its --pause and --slow, the full disk its --full-disk on a 16 MiB tmpfs
# this script mounts for --checkpoint-dir. The run must end with hilo-emu's exit 0 (no node gave
# up), every live worker at the learner's final hash, 0 versions lost and every node's peak RSS
# (the kernel's, per process) at most MAX_RSS_MIB; prints the kills, pauses, slow nodes, full
# disks and outages, the recoveries and their p50 / max time and the peak RSS per node, and exits
# non-zero otherwise.
#
# Bounded: at most one event per KILL_EVERY_S seconds (default 8) of modelled time, pauses,
# slow windows, full disks and outages of 0.5-3 s, never two things down at once, nothing in the
# last 5 s; hilo-emu stops every process it started on any exit (and a trap stops hilo-emu and
# unmounts the tmpfs). NETWORK=direct (default): loopback only, no link outages; NETWORK=ns3: the
# run's own network namespaces (needs root). Without root there are no full disks.
#
# Environment: SEED (default 1), OUT (results folder; default a temporary one, removed at exit),
# KILL_EVERY_S, NETWORK, MAX_RSS_MIB (default 384: every node of this scenario peaks near 190 MiB
# on the 2-core reference host). The binaries: --hilo-sim PATH and
# --hilo-emu PATH (default $HILO_SIM / $HILO_EMU, else build/sim/; hilo-emu's hilo-node is the one
# next to it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="${HILO_SIM:-$root/build/sim/hilo-sim}"
emu="${HILO_EMU:-$root/build/sim/hilo-emu}"
minutes=2
while [ $# -gt 0 ]; do
  case "$1" in
    --hilo-sim|--hilo-emu)
      [ $# -ge 2 ] || { echo "chaos.sh: $1 needs a PATH" >&2; exit 2; }
      if [ "$1" = --hilo-sim ]; then sim="$2"; else emu="$2"; fi
      shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "chaos.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) minutes="$1" ;;
  esac
  shift
done
seed="${SEED:-1}"
kill_every="${KILL_EVERY_S:-8}"
network="${NETWORK:-direct}"
max_rss_mib="${MAX_RSS_MIB:-384}"
scenario="$root/scripts/chaos-relay.textproto"
python=/usr/bin/python3

if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || [ "$($python -c "print(float('$minutes') > 0)")" != True ]; then
  echo "chaos.sh: MINUTES must be a positive number, got \"$minutes\"" >&2
  exit 2
fi
if ! [[ "$max_rss_mib" =~ ^[1-9][0-9]*$ ]]; then
  echo "chaos.sh: MAX_RSS_MIB must be a positive whole number of MiB, got \"$max_rss_mib\"" >&2
  exit 2
fi
if [ "$network" != direct ] && [ "$network" != ns3 ]; then
  echo "chaos.sh: NETWORK must be direct or ns3, got \"$network\"" >&2
  exit 2
fi
for b in "$sim" "$emu" "$(dirname "$emu")/hilo-node"; do
  if [ ! -x "$b" ]; then
    echo "chaos.sh: $b is missing (build it, or pass --hilo-sim / --hilo-emu)" >&2
    exit 2
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/hilo-chaos-XXXXXX")"
emu_pid=""
ckpt=""
cleanup() {
  if [ -n "$emu_pid" ] && kill -0 "$emu_pid" 2>/dev/null; then
    kill -TERM "$emu_pid" 2>/dev/null || true
    wait "$emu_pid" 2>/dev/null || true
  fi
  if [ -n "$ckpt" ]; then
    umount "$ckpt" 2>/dev/null || umount -l "$ckpt" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
out="${OUT:-$work/out}"
# The learner's checkpoints on a small tmpfs of the run's own, which --full-disk may fill.
disks=0
if [ "$(id -u)" -eq 0 ]; then
  mkdir "$work/ckpt"
  if mount -t tmpfs -o size=16m,nosuid,nodev hilo-chaos-ckpt "$work/ckpt"; then
    ckpt="$work/ckpt"
    disks=1
  fi
fi

# How long a step takes (modelled), from the simulator: steps for about MINUTES of run.
"$sim" run "$scenario" --quiet --out "$work/probe" >/dev/null
steps="$($python - "$work/probe/summary.json" "$minutes" <<'PY'
import json, math, sys
arm = json.load(open(sys.argv[1]))["arms"][0]
step_s = arm["step_time_s_mean"]
print(max(10, math.ceil(float(sys.argv[2]) * 60 / step_s)))
PY
)"

# The events: one window of KILL_EVERY_S each, a random kind, target, time inside it and pause.
# Lines "set FAULT" become --set faults[i]=FAULT, lines "relay R:AT:AFTER" --kill-relay, lines
# "pause NODE:AT:FOR" --pause.
mapfile -t events < <($python - "$seed" "$minutes" "$kill_every" "$network" "$disks" <<'PY'
import random, sys
rng = random.Random(int(sys.argv[1]))
total = float(sys.argv[2]) * 60
every = float(sys.argv[3])
kinds = ["worker", "relay", "learner", "pause", "slow"] + (["link"] if sys.argv[4] == "ns3" else [])
kinds += ["disk"] if sys.argv[5] == "1" else []
nodes = ["learner", "worker:0", "worker:1", "worker:2", "worker:3", "relay:0", "relay:1"]
t, i = 2.0, 0
while t + every <= total - 5:
    at = t + rng.uniform(0, every - 3.5)
    pause = rng.uniform(0.5, 3.0)
    kind = rng.choice(kinds)
    if kind == "worker":
        print(f'set kind: "worker_crash" at: "{at:.3f}s" target: "worker:{rng.randrange(4)}" '
              f'restart_after: "{pause:.3f}s"')
    elif kind == "learner":
        print(f'set kind: "learner_restart" at: "{at:.3f}s" target: "learner" '
              f'restart_after: "{pause:.3f}s"')
    elif kind == "relay":
        print(f"relay {rng.randrange(2)}:{at:.3f}:{pause:.3f}")
    elif kind == "pause":
        print(f"pause {rng.choice(nodes)}:{at:.3f}:{pause:.3f}")
    elif kind == "slow":
        print(f"slow {rng.choice(nodes)}:{at:.3f}:{pause:.3f}")
    elif kind == "disk":
        print(f"disk {at:.3f}:{pause:.3f}")
    else:
        target = rng.choice(["worker:0", "worker:1", "worker:2", "worker:3", "region:eu", "region:us"])
        direction = rng.choice(["both", "down", "up"])
        print(f'set kind: "link_down" at: "{at:.3f}s" target: "{target}" duration: "{pause:.3f}s" '
              f'direction: "{direction}"')
    t += every
PY
)
args=()
faults=0
relays=0
pauses=0
slows=0
full=0
for e in "${events[@]}"; do
  case "$e" in
    set\ *) args+=(--set "faults[$faults]=${e#set }"); faults=$((faults + 1)) ;;
    relay\ *) args+=(--kill-relay "${e#relay }"); relays=$((relays + 1)) ;;
    pause\ *) args+=(--pause "${e#pause }"); pauses=$((pauses + 1)) ;;
    slow\ *) args+=(--slow "${e#slow }"); slows=$((slows + 1)) ;;
    disk\ *) args+=(--full-disk "${e#disk }"); full=$((full + 1)) ;;
  esac
done
[ -n "$ckpt" ] && args+=(--checkpoint-dir "$ckpt")
# The link outages (hilo-emu injects them inside the emulated links and does not log them).
for e in "${events[@]}"; do
  if [[ "$e" == *link_down* ]]; then
    echo "$e" | sed -E 's/.*at: "([^"]*)" target: "([^"]*)" duration: "([^"]*)" direction: "([^"]*)".*/  link_down of \2 at \1 for \3, direction \4/'
  fi
done
echo "chaos.sh: $steps steps (~$minutes min), $faults scenario faults, $relays relay kills," \
  "$pauses pauses, $slows slow nodes and $full full disks$([ -n "$ckpt" ] || echo ' (not root: none)')," \
  "network $network, seed $seed; out $out"

"$emu" run "$scenario" --network "$network" --quiet --set "workload.steps=$steps" \
  "${args[@]}" --out "$out" 2> "$work/emu.stderr" &
emu_pid=$!
set +e
wait "$emu_pid"
code=$?
set -e
emu_pid=""
grep -E "^hilo-emu: (worker_crash|learner_restart|chaos)" "$work/emu.stderr" | sed 's/^/  /' || true
# What the learners said of the checkpoints the full disk refused.
cat "$out"/nodes/*/learner*.stderr 2>/dev/null | grep -E "not written|restored" | sed 's/^/  /' || true
if [ "$code" -ne 0 ]; then
  echo "chaos.sh: hilo-emu exited $code:" >&2
  tail -n 30 "$work/emu.stderr" >&2
  exit 1
fi
$python - "$out/summary.json" "$work/emu.stderr" "$max_rss_mib" <<'PY'
import json, sys
arm = json.load(open(sys.argv[1]))["arms"][0]
log = open(sys.argv[2]).read().splitlines()
count = lambda prefix: sum(1 for line in log if line.startswith(prefix))
r, n = arm["recovery_s"], arm["recovery_count"]
p50 = f"{r['p50']:.3f}" if n else "-"
mx = f"{r['max']:.3f}" if n else "-"
print(f"kills: {count('hilo-emu: worker_crash: killed')} workers, "
      f"{count('hilo-emu: chaos: killed relay')} relays, "
      f"{count('hilo-emu: learner_restart: killed')} learner; pauses "
      f"{count('hilo-emu: chaos: paused')} ({count('hilo-emu: chaos: continued')} continued); "
      f"slow nodes {count('hilo-emu: chaos: slowed')}; full disks "
      f"{count('hilo-emu: chaos: disk full')}; "
      f"scenario faults injected {arm['faults_injected']} (worker and learner kills, link "
      f"outages); recoveries {n}, recovery p50 {p50} s, max {mx} s; "
      f"versions lost {arm['versions_lost']}; "
      f"workers at the final hash {arm['workers_at_final_hash']} of {arm['workers_alive']} alive")
ok = arm["versions_lost"] == 0 and arm["workers_at_final_hash"] == arm["workers_alive"]
# Every node's peak resident memory (the largest of its processes', from the kernel when hilo-emu
# reaped them) within the bound: no peer or fault made a node's memory grow without end.
bound = float(sys.argv[3])
peaks = arm.get("node_peak_rss_mib", {})
print("peak RSS (MiB): " + ", ".join(f"{n} {m:.0f}" for n, m in peaks.items()) +
      f"; bound {bound:.0f}")
over = [n for n, m in peaks.items() if m > bound]
if not peaks:
    print("chaos.sh: summary.json has no node_peak_rss_mib", file=sys.stderr)
    ok = False
if over:
    print(f"chaos.sh: peak RSS above {bound:.0f} MiB: {', '.join(over)}", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY
