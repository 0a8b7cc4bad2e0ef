#!/usr/bin/env bash
# Set up, build, and run the whole CTest suite. This is what CI runs (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${HILO_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${HILO_TEST_JOBS:-2}" "$@"
