#!/usr/bin/env bash
# Incremental Release build into build/ (or $HILO_BUILD_DIR). Extra arguments go to cmake --build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HILO_BUILD_DIR:-$root/build}"
jobs="${HILO_JOBS:-$(nproc)}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j "$jobs" "$@"
