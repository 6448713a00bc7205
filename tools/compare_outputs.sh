#!/usr/bin/env bash
# Records the outputs of a fixed set of command-line runs on the test corpus, so that a change
# meant to keep every output can be checked byte for byte against the binary before it.
#
#   tools/compare_outputs.sh record BINARY DIR   # stdout, stderr and exit code of each run
#   tools/compare_outputs.sh compare DIR_A DIR_B # diff -r; exit 1 on any difference
#
# The runs: `threshold` on the corpus pair, every family member of corpus/families, a
# two-layer pair (the k-gram model against itself with one weight changed), --no-prune,
# --threads 1 and 2, bad input, and small `refute` and default `tightness` runs. Progress
# goes to stderr with elapsed seconds, so every run is --quiet or has its stderr dropped where
# it shows timings (marked below); no JSON key of these runs holds a timing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == compare ]]; then
  diff -r "$2" "$3" && echo "identical: $2 $3"
  exit
fi
[[ "${1:-}" == record && $# -eq 3 ]] || {
  sed -n '5,6p' "$0" >&2
  exit 2
}
bin=$(realpath "$2")
out=$3
mkdir -p "$out"
# The two-layer pair: corpus/models/kgram_S2_k1.json with its second layer's first bias changed,
# at one fixed path (the table prints it).
changed=${TMPDIR:-/tmp}/ltsim-compare-kgram-changed.json
/usr/bin/python3 - "$changed" <<'EOF'
import json, sys
m = json.load(open("corpus/models/kgram_S2_k1.json"))
m["layers"][1]["heads"][0]["bias"][0] += 0.5
json.dump(m, open(sys.argv[1], "w"), indent=1)
EOF

n=0
# run NAME KEEP_STDERR ARGS…: NAME.out, NAME.err (or nothing), NAME.rc.
run() {
  local name=$1 keep=$2
  shift 2
  n=$((n + 1))
  local stem
  stem="$out/$(printf %02d $n)_$name"
  printf '%s\n' "$*" >"$stem.cmd"
  local rc=0
  if [[ $keep == keep ]]; then
    nice "$bin" "$@" >"$stem.out" 2>"$stem.err" || rc=$?
  else
    nice "$bin" "$@" >"$stem.out" 2>/dev/null || rc=$?
  fi
  echo "$rc" >"$stem.rc"
  echo "$(printf %02d $n) $name: exit $rc" >&2
}

p=corpus/models/pair
run pair_json keep threshold $p/f.json $p/g.json --eps 0.05 --max-length 12 --json --quiet
run pair_table keep threshold $p/f.json $p/g.json --eps 0.05 --max-length 12 --quiet
run pair_json_long keep threshold $p/f.json $p/g.json --eps 0.01 --max-length 400 --json --quiet
run pair_no_prune keep threshold $p/f.json $p/g.json --eps 0.05 --max-length 12 --no-prune --json \
  --quiet
for member in corpus/families/*/; do
  member=${member%/}
  name=$(basename "$member")
  run "family_${name}_json" keep threshold "$member/f.json" "$member/g.json" --eps 0.05 \
    --max-length 400 --json --quiet
  run "family_${name}_table" keep threshold "$member/f.json" "$member/g.json" --eps 0.05 \
    --max-length 400 --quiet
done
b=corpus/families/bump_s2.71_period2
for threads in 1 2; do
  run "bump_threads$threads" keep threshold $b/f.json $b/g.json --eps 0.05 --max-length 40 \
    --threads $threads --json --quiet
  run "nested_threads$threads" keep threshold corpus/families/nested_S2_a0.87/f.json \
    corpus/families/nested_S2_a0.87/g.json --eps 0.05 --max-length 300 --threads $threads \
    --json --quiet
done
run bump_no_prune keep threshold $b/f.json $b/g.json --eps 0.05 --max-length 40 --no-prune --json \
  --quiet
k=corpus/models/kgram_S2_k1.json
run two_layer_same keep threshold $k $k --eps 0.01 --max-length 17 --seed 5 --samples 20 --json \
  --quiet
run two_layer_changed keep threshold $k "$changed" --eps 0.01 --max-length 20 \
  --seed 3 --samples 30 --json --quiet
run two_layer_changed_table keep threshold $k "$changed" --eps 0.2 --max-length 30 \
  --seed 3 --samples 30 --quiet
run two_layer_threads2 keep threshold $k "$changed" --eps 0.2 --max-length 30 \
  --seed 3 --samples 30 --threads 2 --json --quiet
run budget keep threshold corpus/families/nested_S2_a0.87/f.json \
  corpus/families/nested_S2_a0.87/g.json --eps 0.05 --max-length 300 --max-evaluations 1000 \
  --json --quiet
run bad_length keep threshold $p/f.json $p/g.json --eps 0.05 --max-length 0
run bad_no_prune keep threshold $p/f.json $p/g.json --eps 0.1 --max-length 5000 --no-prune
run bad_alphabet keep threshold $p/f.json $b/f.json --eps 0.1 --max-length 5
# Small runs of the commands that call the threshold (their stderr shows timings).
run refute_json drop refute --bound thm4.1-length --eps 0.05 --max-lipschitz 8 --alphabet 2 \
  --period 1 --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 2000 --budget 60 \
  --iterations 9 --threads 2 --json
run refute_table drop refute --bound L/eps --eps 0.05 --max-lipschitz 8 --alphabet 2 --period 2 \
  --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 2000 --budget 60 --iterations 9 \
  --threads 1
run tightness_json drop tightness --json
run tightness_table drop tightness
