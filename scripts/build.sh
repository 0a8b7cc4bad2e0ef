#!/usr/bin/env bash
# Incremental Release build into build/ (or $HILO_BUILD_DIR). Extra arguments go to cmake --build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HILO_BUILD_DIR:-$root/build}"
jobs="${HILO_JOBS:-$(nproc)}"
# ccache (the compiler launcher when installed): paths relative to the checkout so that clones in
# other folders share the cache, and precompiled headers made cacheable.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j "$jobs" "$@"
