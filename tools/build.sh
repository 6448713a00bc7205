#!/usr/bin/env bash
# Configures and builds ltsim in Release (build/ by default; BUILD_DIR overrides). Arguments
# are targets to build (default: everything, tests and benchmarks included).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
# ccache, when installed, makes rebuilds of other worktrees and branches cheap (optional).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
