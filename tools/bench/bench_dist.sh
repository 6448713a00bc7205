#!/usr/bin/env bash
# Scaling of ltsim over MPI ranks × oneTBB threads on this machine (docs/distributed.md §6):
# fuzz cases/s and threshold statistics/s, best of R runs of a fixed workload, plain binary vs
# `mpirun -n K`. A multi-process run cannot live inside one Google Benchmark process, so this
# script times whole runs; each configuration writes its files, which are checked to be the
# same bytes as the plain run's (a scaling number is only reported for a correct run).
#
#   tools/bench/bench_dist.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
ltsim=$(realpath "$build/tools/ltsim/ltsim")
command -v mpirun > /dev/null || { echo "bench_dist: mpirun not found (apt-get install openmpi-bin)"; exit 2; }
"$ltsim" --version | grep -q "MPI: built in" || { echo "bench_dist: $ltsim has no MPI"; exit 2; }
# This machine: shared memory between ranks, loopback for mpirun, root allowed, no binding.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cases=${LTSIM_BENCH_CASES:-1500}
fuzz_args="fuzz --seed 7 --cases $cases --layers 1,2 --max-length 3000"
"$ltsim" construct modp-task --p 2 --k 1 --out "$work/f.json" > /dev/null
"$ltsim" construct modp-task --p 3 --k 1 --out "$work/g.json" > /dev/null
# ε = 1 is never exceeded (outputs in [0, 1]): every length up to N is enumerated.
threshold_args="threshold $work/f.json $work/g.json --eps 1 --max-length ${LTSIM_BENCH_LENGTH:-26} --json"

# best_time LAUNCH ARGS…: the smallest wall time of $runs runs, in seconds.
best_time() {
  local best=""
  for _ in $(seq 1 "$runs"); do
    local start end
    start=$(date +%s.%N)
    "$@" > "$work/out" 2> "$work/err" || [ $? -eq 1 ] || { cat "$work/err"; exit 1; }
    end=$(date +%s.%N)
    best=$(python3 -c "print(min(float('${best:-1e9}'), $end - $start))")
  done
  echo "$best"
}

launch() {  # launch RANKS: the prefix (RANKS = plain: no mpirun)
  if [ "$1" = plain ]; then echo ""; else echo "mpirun --oversubscribe --bind-to none -n $1"; fi
}

echo "ltsim bench_dist: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), best of $runs runs"
echo "fuzz: $cases cases (one and two layers), threshold: every statistic up to T = ${LTSIM_BENCH_LENGTH:-26}"
printf "%-8s %-8s %12s %12s %16s %16s\n" ranks threads "fuzz s" "cases/s" "threshold s" "statistics/s"
statistics=$("$ltsim" $threshold_args | python3 -c "import json,sys; print(json.load(sys.stdin)['evaluations'])")
"$ltsim" $threshold_args > "$work/threshold.reference"
for ranks in plain 1 2 4; do
  for threads in 1 2; do
    rm -rf "$work/fuzz"
    prefix=$(launch "$ranks")
    fuzz_time=$(best_time bash -c "rm -rf '$work/fuzz'; $prefix '$ltsim' $fuzz_args --threads $threads --out-dir '$work/fuzz'")
    [ -d "$work/reference" ] || cp -r "$work/fuzz" "$work/reference"
    cmp -s "$work/fuzz/cases.jsonl" "$work/reference/cases.jsonl" || { echo "cases.jsonl differs at $ranks × $threads"; exit 1; }
    threshold_time=$(best_time $prefix "$ltsim" $threshold_args)
    cmp -s "$work/out" "$work/threshold.reference" || { echo "threshold output differs at $ranks × $threads"; exit 1; }
    printf "%-8s %-8s %12.2f %12.1f %16.2f %16.0f\n" "$ranks" "$threads" "$fuzz_time" \
      "$(python3 -c "print($cases / $fuzz_time)")" "$threshold_time" \
      "$(python3 -c "print($statistics / $threshold_time)")"
  done
done
# The fixed cost of the MPI path at K = 1: mpirun's start-up and MPI_Init on a trivial command.
plain=$(best_time "$ltsim" --version)
one=$(best_time mpirun -n 1 "$ltsim" --version)
echo "start-up: plain $(printf %.3f "$plain") s, mpirun -n 1 $(printf %.3f "$one") s"
