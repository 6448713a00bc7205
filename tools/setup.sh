#!/usr/bin/env bash
# Installs ltsim's build and test dependencies from Debian's packages (apt-get update once).
set -euo pipefail
packages=(cmake g++ make pkg-config libeigen3-dev libtbb-dev libboost-dev nlohmann-json3-dev
          libcli11-dev libfmt-dev librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
          # libmuparser-dev: a well-kept parser for `--bound` expressions (not a hand-written
          # one); python3-matplotlib: the PNGs of `ltsim sweep --out` (tools/plot_sweep.py).
          # python3-torch, python3-numpy: the PyTorch module ltsim.torch and its differential
          # test (tests/python).
          libmuparser-dev python3-matplotlib python3-torch python3-numpy
          # The Python package `ltsim` (docs/python.md): Debian's pybind11 and the tools that
          # pip-install it offline into a virtual environment; nbclient and ipykernel run the
          # notebooks in the tests.
          python3-dev pybind11-dev python3-pybind11 python3-setuptools python3-wheel python3-pip
          python3-venv python3-nbclient python3-ipykernel
          # Open MPI: `mpirun -n K ltsim …` (docs/distributed.md); the MPI tests run mpirun.
          libopenmpi-dev openmpi-bin
          # clang-14 and libclang-rt-14-dev: the libFuzzer harnesses of tests/fuzz/ (tools/fuzz.sh).
          clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
