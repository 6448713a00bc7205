#!/usr/bin/env bash
# The second check before sending a change (README "Tests and benchmarks"): an ASan+UBSan
# build (gcc, -O1 with line tables only, Eigen's assertions on) in its own directory, running the unit, property
# and command-line tests and replaying every fuzz corpus and regression file under the
# sanitizers. Property tests run at most LTSIM_SANITIZE_CASES cases each (default 100). The
# Python module is not built here: an instrumented module cannot load into Debian's python3.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build="${SANITIZE_BUILD_DIR:-build-sanitize}"
cases="${LTSIM_SANITIZE_CASES:-100}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths inside this clone are hashed relative to it (and not the working directory), so a
# fresh clone of the same sources elsewhere, as CI makes, reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
start=$(date +%s)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DLTSIM_BUILD_BENCHMARKS=OFF -DLTSIM_PROPERTY_CASES_MAX="$cases" -DLTSIM_BUILD_PYTHON=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"
built=$(date +%s)
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Everything but the MPI tests with leak detection; the tests that start mpirun without it
# (the distributed tests, the dealer check, and README's examples, one of which is an
# mpirun line): Open MPI never frees what MPI_Init allocates, partly in plugins it has
# unloaded by exit, whose frames no suppression can name.
mpi='DistCliTest\.|mpi_dealer|ExamplesTest\.EveryReadmeExampleRuns'
status=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -E "$mpi" || status=1
ASAN_OPTIONS="abort_on_error=1:detect_leaks=0:strict_string_checks=1" \
  ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -R "$mpi" || status=1
echo "sanitize: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
exit "$status"
