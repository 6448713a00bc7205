#!/usr/bin/python3
"""Draws DIR/experiment.png from DIR/experiment.json (`ltsim experiment paper --out-dir DIR`).

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
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot_common as pc

    with open(os.path.join(directory, "experiment.json")) as f:
        doc = json.load(f)
    trends = doc["trends"]
    fig, axes = plt.subplots(1, max(1, len(trends)), figsize=(4.6 * max(1, len(trends)), 4.4),
                             squeeze=False)
    for ax, t in zip(axes[0], trends):
        rows = [r for r in doc["rows"] if r["task"] == t["task"] and r["parameter"] == t["parameter"]]
        xs = [r["value"] for r in rows]
        censoring = [r["censoring"] for r in rows]
        meds = [r["median"] for r in rows]
        pc.draw_series(ax, xs, meds, [r["min"] for r in rows], [r["max"] for r in rows], censoring,
                       "tab:blue", "simulator on found x (median, min-max)")
        ci = "" if t["ci"] is None else " [%.2f, %.2f]" % tuple(t["ci"])
        pc.fit_line(ax, xs, censoring, meds, t["slope"], "tab:blue", False,
                    "fit: slope %s%s" % ("n/a" if t["slope"] is None else "%.2f" % t["slope"], ci))
        pc.tidy(ax, xs, False)
        ax.set_xlabel(t["parameter"])
        ax.set_ylabel("needed length n")
        ax.set_title("%s, parameter %s: %s" % (t["task"], t["parameter"], t["trend"]), fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
    opts = doc["options"]
    fig.suptitle("ltsim experiment paper (eps = %g, kgram eps = %g, |x| = %d, seed %d)"
                 % (opts["eps"], opts["kgram_eps"], opts["x_length"], doc["context"]["seed"]))
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "experiment.png"), dpi=100)
    fig.savefig(os.path.join(directory, "experiment.svg"))


if __name__ == "__main__":
    main(sys.argv[1])
