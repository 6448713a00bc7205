#!/usr/bin/env python3
"""Random one-layer pairs at D* = 6 whose gap comes within 0.5% of eps: the threshold's hard case.

A measurement, not a test (docs/theory.md §11.7). For each (S, period, mode) of the table and
seeds 11-13, f has random weights (Python's random.Random(seed), N(0, 1) embeddings, positions,
query-key, readout and MLP input, N(0, 0.25) values and MLP output, two heads, four MLP units),
g perturbs f's values and MLP by N(0, 0.05^2); eps is 1.005 times the largest gap that
`ltsim threshold` finds up to T = 200. Prints T*, the checked length, cells and seconds per pair.
Usage: tools/bench/threshold_stress.py [--ltsim build/tools/ltsim/ltsim] [--length 10000]
       [--timeout 120]
"""
import argparse
import copy
import json
import os
import random
import subprocess
import tempfile
import time

CONFIGS = [(2, 3, "softmax"), (3, 2, "softmax"), (6, 1, "softmax"),
           (2, 3, "finite"), (3, 2, "finite"), (6, 1, "finite")]


def random_model(rng, alphabet, period, attention, width=6, heads=2, units=4):
    def mat(rows, cols, sd):
        return [[rng.gauss(0, sd) for _ in range(cols)] for _ in range(rows)]
    layer = {"attention": attention, "bias_scaling": "none",
             "heads": [{"qk": mat(width, width, 1.0), "ov": mat(width, width, 0.5), "bias": [0.0]}
                       for _ in range(heads)],
             "mlp": {"in": mat(units, width, 1.0),
                     "in_bias": [rng.gauss(0, 0.5) for _ in range(units)],
                     "out": mat(width, units, 0.5)}}
    if attention == "finite":
        layer["precision_bits"] = 8
    return {"format": "ltsim-model", "version": 1, "name": "stress", "alphabet": alphabet,
            "width": width, "period": period, "locality": 0, "tie_tolerance": 1e-9,
            "embedding": mat(alphabet, width, 1.0), "positional": mat(period, width, 1.0),
            "layers": [layer], "readout": {"weight": mat(1, width, 1.0), "bias": [0.0]}}


def perturbed(rng, model, sd):
    g = copy.deepcopy(model)

    def move(a):
        return [move(x) for x in a] if isinstance(a, list) else a + rng.gauss(0, sd)
    layer = g["layers"][0]
    layer["mlp"]["in"] = move(layer["mlp"]["in"])
    layer["mlp"]["out"] = move(layer["mlp"]["out"])
    for head in layer["heads"]:
        head["ov"] = move(head["ov"])
    return g


def threshold(ltsim, f, g, eps, length, timeout):
    start = time.monotonic()
    out = subprocess.run([ltsim, "threshold", f, g, "--eps", repr(eps), "--max-length",
                          str(length), "--threads", "1", "--json"],
                         capture_output=True, text=True, timeout=timeout, check=False)
    return json.loads(out.stdout), time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ltsim", default="build/tools/ltsim/ltsim")
    parser.add_argument("--length", type=int, default=10000)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    print(f"{'S':>2} {'P':>2} {'mode':8} {'seed':>4} {'eps':>8} {'T*':>6} {'up to':>6} "
          f"{'cells':>9} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for alphabet, period, mode in CONFIGS:
            for seed in (11, 12, 13):
                rng = random.Random(seed)
                f = random_model(rng, alphabet, period, mode)
                g = perturbed(rng, f, 0.05)
                paths = [os.path.join(tmp, n) for n in ("f.json", "g.json")]
                for path, m in zip(paths, (f, g)):
                    with open(path, "w", encoding="utf-8") as out:
                        json.dump(m, out)
                probe, _ = threshold(args.ltsim, *paths, 1e9, 200, args.timeout)
                eps = 1.005 * max(x for x in probe["max_gap_per_length"] if x is not None)
                try:
                    r, seconds = threshold(args.ltsim, *paths, eps, args.length, args.timeout)
                    t_star = r["first_disagreement"]
                    row = (f"{'none' if t_star is None else t_star:>6} {r['checked_up_to']:>6} "
                           f"{r['cells']:>9} {seconds:8.2f}")
                except subprocess.TimeoutExpired:
                    row = f"{'':>6} {'':>6} {'':>9} > {args.timeout:.0f}"
                print(f"{alphabet:>2} {period:>2} {mode:8} {seed:>4} {eps:8.4g} {row}", flush=True)


if __name__ == "__main__":
    main()
