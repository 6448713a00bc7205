"""Executes the notebooks of notebooks/ with nbclient (python3-nbclient, python3-ipykernel), so
that they cannot rot, and checks the repository holds them with their outputs stripped.

Run by CTest as `/usr/bin/python3 run_notebooks.py SOURCE_DIR LTSIM_BINARY [NAME ...]` with
PYTHONPATH=<build>/python (the kernel inherits it); `--stripped` only checks the stripping and
`--strip` strips the notebooks in place (`/usr/bin/python3 tests/python/run_notebooks.py . - --strip`).
Prints each notebook's wall time.
"""

import os
import sys
import time

import nbformat


def stripped(path):
    """The problems that keep `path` from being stripped: outputs or execution counts."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i}: has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i}: has an execution count")
    return problems


def strip(path):
    """Removes every output and execution count of `path`, in place."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.write(nb, path)


def main():
    args = sys.argv[1:]
    only_strip = "--stripped" in args or "--strip" in args
    if "--strip" in args:
        folder = os.path.join(os.path.abspath(args[0]), "notebooks")
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".ipynb")):
            strip(os.path.join(folder, name))
    args = [a for a in args if a not in ("--stripped", "--strip")]
    source = os.path.abspath(args[0])
    folder = os.path.join(source, "notebooks")
    names = args[2:] or sorted(n[:-6] for n in os.listdir(folder) if n.endswith(".ipynb"))
    failed = False
    for name in names:
        path = os.path.join(folder, name + ".ipynb")
        problems = stripped(path)
        for problem in problems:
            print(f"{path}: {problem} (strip it: /usr/bin/python3 "
                  f"tests/python/run_notebooks.py . - --strip)")
        failed |= bool(problems)
        if only_strip:
            continue
        from nbclient import NotebookClient
        os.environ["LTSIM"] = os.path.abspath(args[1])
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": folder}}).execute()
        print(f"{name}.ipynb: executed in {time.perf_counter() - start:.1f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
