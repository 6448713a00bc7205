#!/usr/bin/env python3
"""Prints tests/slow_tests.cmake: the tests whose average time exceeds a threshold.

CTest keeps each test's average time over past runs in
BUILD/Testing/Temporary/CTestCostData.txt (lines `name runs seconds`). After a whole run
(`ctest --test-dir build -j2`), regenerate the list with

    tools/slow_tests.py build > tests/slow_tests.cmake          # threshold 1 s
    tools/slow_tests.py build 2 > tests/slow_tests.cmake      # another threshold

Tests labelled `slow` where they are defined (MPI, Python, notebooks) are left out.
Usage: tools/slow_tests.py BUILD_DIR [SECONDS]
"""
import pathlib
import re
import sys

if len(sys.argv) not in (2, 3):
    sys.exit(__doc__.strip().splitlines()[-1])
cost = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "CTestCostData.txt"
threshold = float(sys.argv[2]) if len(sys.argv) == 3 else 1.0
labelled_where_defined = re.compile(r"^(mpi_dealer_n|python_|notebook_)")
slow = []
for line in cost.read_text().splitlines():
    if line.startswith("---"):  # the failed tests of the last run follow
        break
    name, _runs, seconds = line.rsplit(maxsplit=2)  # parametrised names hold spaces
    if float(seconds) > threshold and not labelled_where_defined.match(name):
        slow.append(name)
print(f"""# Tests slower than {threshold:g} s on average at ctest -j2 (tools/slow_tests.py writes this
# file from CTest's timings; docs/design.md §8). They carry the label `slow`, so that
# `ctest -LE slow` is the quick inner loop; plain `ctest` (and CI) runs every test. Run by
# CTest after the tests are defined (tests/CMakeLists.txt); names of tests that do not exist
# in a build are ignored.
set(ltsim_slow_tests""")
for name in sorted(slow):
    print(f'    "{name}"')
print(""")
set_tests_properties(${ltsim_slow_tests} PROPERTIES LABELS slow)""")
