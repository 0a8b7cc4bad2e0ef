#!/usr/bin/env bash
# Set up, build, run scenarios/quickstart.textproto and print the arms side by side.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${HILO_BUILD_DIR:-$root/build}"
if [ ! -x "$build/sim/hilo-sim" ]; then
  echo "quickstart: the simulator (hilo-sim) is not available yet in this version;" >&2
  echo "the HiLo library and its tests are: run scripts/test.sh." >&2
  exit 1
fi
cd "$root"
exec "$build/sim/hilo-sim" run scenarios/quickstart.textproto "$@"
