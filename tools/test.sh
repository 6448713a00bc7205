#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, property, command line) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
build="${BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
