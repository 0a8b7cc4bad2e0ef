#!/usr/bin/env bash
# Fuzzes the decoders, the replica, the learner's restart paths, the scenario loader and what a
# peer sends a role (envelopes and trajectory batches)
# (tests/fuzz): builds the libFuzzer targets with clang, ASan and UBSan in build-fuzz/ (or
# $HILO_FUZZ_BUILD_DIR), then runs each for SECONDS (default 60), one after the other, seeded
# from the inputs of the golden frame and payload tests, real local states and checkpoints, every
# scenario file under scenarios/, tests/sim/data/ and tests/scripts/, and the inputs that once
# crashed (tests/fuzz/regressions/TARGET/). Prints executions, exec/s and crashes per target;
# exits 1 when any target crashed.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     e.g. nice -n 10 scripts/fuzz.sh 600 fuzz-frame
#
# Corpora grow under build-fuzz/corpus/TARGET/ (ignored by git) and are reused by later runs;
# a crashing input is written to build-fuzz/crashes/TARGET/ and the run's output to
# build-fuzz/logs/TARGET.log. Reproduce one with `build-fuzz/tests/fuzz/TARGET FILE`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HILO_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${HILO_JOBS:-$(nproc)}"
seconds="${1:-60}"
[ $# -gt 0 ] && shift
all_targets=(fuzz-frame fuzz-compressor-decode fuzz-replica fuzz-restore fuzz-scenario
  fuzz-peer-message fuzz-transport fuzz-learner-session)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "fuzz: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
for t in "${targets[@]}"; do
  if [[ ! " ${all_targets[*]} " =~ " $t " ]]; then
    echo "fuzz: unknown target '$t'; known: ${all_targets[*]}" >&2
    exit 2
  fi
done

# The default build's packages, then clang's libFuzzer, which only this script needs.
"$root/scripts/setup.sh"
fuzz_packages=(clang libfuzzer-14-dev)
missing=()
for p in "${fuzz_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "fuzz: installing ${missing[*]} needs root: apt-get install ${missing[*]}" >&2
      exit 1
    fi
    SUDO=sudo
  fi
  echo "fuzz: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A separate build tree: clang, instrumented, -O1 with assertions on (no NDEBUG).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DHILO_BUILD_FUZZ=ON \
    -DHILO_BUILD_TESTS=OFF -DHILO_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1"
fi
cmake --build "$build" -j "$jobs" --target "${all_targets[@]}" write-fuzz-seeds

# Seeds are rewritten every run from the current code, so they always match the wire format.
seeds="$build/seeds"
rm -rf "$seeds"
"$build/tests/fuzz/write-fuzz-seeds" "$seeds" "$root"
find "$root/scenarios" "$root/tests/sim/data" "$root/tests/scripts" -name '*.textproto' -print0 |
  while IFS= read -r -d '' f; do
    rel="${f#"$root"/}"
    cp "$f" "$seeds/fuzz-scenario/${rel//\//_}"
  done

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/logs"
status=0
printf '%-24s %8s %14s %10s %8s %8s\n' target seconds executions exec/s crashes corpus
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  log="$build/logs/$t.log"
  mkdir -p "$corpus" "$crashes"
  before=$(find "$crashes" -type f | wc -l)
  extra=()
  [ -f "$seeds/$t.dict" ] && extra+=("-dict=$seeds/$t.dict")
  # Inputs that once crashed (tests/fuzz/regressions/) run with the seeds, under the sanitizers.
  replay=()
  [ -d "$root/tests/fuzz/regressions/$t" ] && replay+=("$root/tests/fuzz/regressions/$t")
  rc=0
  "$build/tests/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
    -rss_limit_mb=4096 -artifact_prefix="$crashes/" "${extra[@]}" \
    "$corpus" "$seeds/$t" "${replay[@]}" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  found=$(($(find "$crashes" -type f | wc -l) - before))
  printf '%-24s %8s %14s %10s %8s %8s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" "$found" \
    "$(find "$corpus" -type f | wc -l)"
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    status=1
    echo "  $t stopped with exit code $rc; see $log and $crashes/" >&2
  fi
done
exit $status
