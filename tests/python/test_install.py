"""`pip install` of the package in a fresh virtual environment, as README.md says, then a short
session with the installed copy (load, eval, threshold, simulate, InputError).

Run by CTest as `/usr/bin/python3 test_install.py SOURCE_DIR BUILD_DIR`: the environment is
made with `/usr/bin/python3 -m venv --system-site-packages` (numpy, setuptools, wheel and
pybind11 come from Debian's packages), and pip builds offline (`--no-build-isolation
--no-index`) reusing BUILD_DIR, so the extension module is the one CMake built for the CLI's
libraries. Prints the seconds each step took.
"""

import os
import shutil
import subprocess
import sys
import time

SESSION = r'''
import numpy as np, ltsim, os, sys
root = sys.argv[1]
assert os.path.realpath(ltsim.__file__).startswith(os.path.realpath(sys.prefix)), ltsim.__file__
f = ltsim.load_model(os.path.join(root, "corpus/models/pair/f.json"))
g = ltsim.load_model(os.path.join(root, "corpus/models/pair/g.json"))
print("f:", f)
print("f([0, 1, 1, 0]) =", f.eval(np.array([0, 1, 1, 0])))
r = ltsim.threshold(f, g, eps=0.1, max_length=12)
print("first disagreement:", r.first_disagreement, "witness:", r.witness, "exhaustive:", r.exhaustive)
z = ltsim.simulate(f, "iid:length=1000000,alphabet=3,seed=1", z_length=2000, method="frequency", seed=1)
print("|z| =", len(z), "f(z) =", f.eval(z), "f(x) =", f.eval("iid:length=1000000,alphabet=3,seed=1"))
try:
    f.eval(np.array([0, 5]))
except ltsim.InputError as e:
    assert isinstance(e, ValueError)
    print("InputError:", e)
else:
    raise SystemExit("no InputError")
'''


def main():
    source, build = (os.path.abspath(p) for p in sys.argv[1:3])
    work = os.path.join(build, "python-install-test")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    venv = os.path.join(work, "venv")
    start = time.perf_counter()
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    made = time.perf_counter()
    python = os.path.join(venv, "bin", "python")
    env = dict(os.environ, LTSIM_BUILD_DIR=build, LTSIM_BUILD_JOBS="2")
    env.pop("PYTHONPATH", None)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index",
                    source], check=True, env=env, cwd=work)
    installed = time.perf_counter()
    subprocess.run([python, "-c", SESSION, source], check=True, env=env, cwd=work)
    print(f"venv {made - start:.1f} s, pip install {installed - made:.1f} s, session "
          f"{time.perf_counter() - installed:.1f} s")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
