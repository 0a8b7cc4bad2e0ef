#!/usr/bin/env bash
# Set up, build, run scenarios/quickstart.textproto and print the arms side by side.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${HILO_BUILD_DIR:-$root/build}"
if [ ! -x "$build/sim/hilo-sim" ]; then
  echo "quickstart: $build/sim/hilo-sim was not built; see the build output above" >&2
  exit 1
fi
cd "$root"
exec "$build/sim/hilo-sim" run scenarios/quickstart.textproto "$@"
