#!/usr/bin/env bash
# Runs each libFuzzer harness (tests/fuzz/) for SECONDS (default 180) and prints its
# executions and findings. Not a test: a measurement, like tools/bench/. Needs clang 14 and
# libclang-rt-14-dev (tools/setup.sh). Usage: tools/fuzz.sh [SECONDS] [HARNESS ...]
# FUZZ_SANITIZE picks the sanitizers (default address,undefined; "none" for speed only).
# Findings land in build-fuzz/findings/HARNESS/; a crash found becomes a regression file in
# tests/fuzz/regressions/HARNESS/, which the test suite replays.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-180}"
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(model safetensors strings witness search_witness point_witness raw_witness campaign eval shard)
build="${FUZZ_BUILD_DIR:-build-fuzz}"
sanitize="${FUZZ_SANITIZE:-address,undefined}"
flags="-g -fsanitize=fuzzer-no-link"
[ "$sanitize" != none ] && flags="$flags -fsanitize=$sanitize -fno-sanitize-recover=undefined"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths inside this clone are hashed relative to it (and not the working directory), so a
# fresh clone of the same sources elsewhere, as CI makes, reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$flags" -DLTSIM_LIBFUZZER=ON -DLTSIM_BUILD_BENCHMARKS=OFF -DLTSIM_BUILD_PYTHON=OFF \
  -DLTSIM_BUILD_TESTS=ON >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
printf '%-16s %8s %14s %10s %9s\n' harness seconds executions exec/s findings
for h in "${harnesses[@]}"; do
  work="$build/fuzz-corpus/$h"
  findings="$build/findings/$h"
  mkdir -p "$work" "$findings"
  log="$build/fuzz-$h.log"
  set +e
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$h" \
    >"$log" 2>&1
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  found=$(find "$findings" -type f | wc -l)
  printf '%-16s %8s %14s %10s %9s\n' "$h" "$seconds" "$execs" "$((execs / seconds))" "$found"
done
