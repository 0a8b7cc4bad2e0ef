#!/usr/bin/env bash
# Set up, build what it runs (the hilo-sim target and the libraries under it, not the tests or
# benchmarks: scripts/test.sh builds those), run scenarios/quickstart.textproto and print the arms
# side by side. Extra arguments go to `hilo-sim run` (e.g. --out DIR, --set PATH=VALUE).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target hilo-sim
build="${HILO_BUILD_DIR:-$root/build}"
if [ ! -x "$build/sim/hilo-sim" ]; then
  echo "quickstart: $build/sim/hilo-sim was not built; see the build output above" >&2
  exit 1
fi
cd "$root"
exec "$build/sim/hilo-sim" run scenarios/quickstart.textproto "$@"
