#!/usr/bin/env bash
# Configures and builds ltsim in Release (build/ by default; BUILD_DIR overrides). Arguments
# are targets to build (default: everything, tests and benchmarks included).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
