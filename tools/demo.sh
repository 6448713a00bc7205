#!/usr/bin/env bash
# The main job on the bundled default: the sandwich of the bundled pair on the bundled 10^6-token x;
# its last line is the conclusion in words (what the 1,999-token z certifies about x).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh ltsim
build="${BUILD_DIR:-build}"
"$build/tools/ltsim/ltsim" sandwich corpus/models/pair/f.json corpus/models/pair/g.json \
  corpus/strings/default.txt --method frequency --z-length 2000 "$@"
