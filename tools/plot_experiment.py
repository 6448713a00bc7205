#!/usr/bin/python3
"""Draws DIR/experiment.png from DIR/experiment.json (`ltsim experiment paper --out DIR`).

One panel per series (ω, p, S, k): needed length against the parameter, log-log, with the
fitted line (Debian's matplotlib, Agg). Exit 3 when matplotlib is missing.
"""
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)


def main(directory):
    with open(os.path.join(directory, "experiment.json")) as f:
        doc = json.load(f)
    trends = doc["trends"]
    fig, axes = plt.subplots(1, max(1, len(trends)), figsize=(4.2 * max(1, len(trends)), 4),
                             squeeze=False)
    for ax, t in zip(axes[0], trends):
        xs, ys = t["values"], t["needed_lengths"]
        ax.loglog(xs, ys, "o", label="needed length")
        if t["slope"] is not None:
            fitted = [math.exp(t["intercept"]) * x ** t["slope"] for x in xs]
            ax.loglog(xs, fitted, "-", label="fit: slope %.2f" % t["slope"])
        ax.set_xlabel(t["parameter"])
        ax.set_ylabel("needed length n")
        ax.set_title("%s: rises %s" % (t["task"], "yes" if t["rises"] else "no"))
        ax.legend()
    opts = doc["options"]
    fig.suptitle("ltsim experiment paper (eps = %g, kgram eps = %g, |x| = %d, seed %d)"
                 % (opts["eps"], opts["kgram_eps"], opts["x_length"], doc["context"]["seed"]))
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "experiment.png"), dpi=100)


if __name__ == "__main__":
    main(sys.argv[1])
