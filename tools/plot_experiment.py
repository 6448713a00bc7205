#!/usr/bin/python3
"""Draws DIR/experiment.png from DIR/experiment.json (`ltsim experiment paper --out-dir DIR`).

One panel per series (ω, p, S, k): needed length against the parameter, log-log: every sample
as a dot, the median with min-max bars, a censored point as an arrow (a bound, not fitted), and
the fitted line ln n = a + b ln(value) that `ltsim experiment` fitted on the log-mean of each
value's samples, with its 95% interval (Debian's matplotlib, Agg). Exit 3 when matplotlib is
missing.
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


SYMBOL = {"omega": "ω", "p": "p", "S": "S", "k": "k"}
TREND = {"rises": "rises with {} (95% interval above 0)",
         "not shown": "no trend shown (95% interval includes 0)",
         "degenerate": "no trend: too few uncensored points"}


def main(directory):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot_common as pc

    with open(os.path.join(directory, "experiment.json")) as f:
        doc = json.load(f)
    trends = doc["trends"]
    fig, axes = plt.subplots(1, max(1, len(trends)), figsize=(4.4 * max(1, len(trends)), 5.2),
                             squeeze=False)
    for ax, t in zip(axes[0], trends):
        rows = [r for r in doc["rows"] if r["task"] == t["task"] and r["parameter"] == t["parameter"]]
        xs = [r["value"] for r in rows]
        censoring = [r["censoring"] for r in rows]
        meds = [r["median"] for r in rows]
        symbol = SYMBOL.get(t["parameter"], t["parameter"])
        # Every sample (one per x or z seed), the quantity the fit is made of.
        sx = [r["value"] for r in rows for s in r["samples"] if s["censoring"] == "none"]
        sy = [s["needed_length"] for r in rows for s in r["samples"] if s["censoring"] == "none"]
        ax.plot(sx, sy, ".", color="black", alpha=0.7, markersize=4, zorder=5, label="each sample")
        pc.draw_series(ax, xs, meds, [r["min"] for r in rows], [r["max"] for r in rows], censoring,
                       "tab:blue", "median (bars: min-max)")
        if t["slope"] is not None and t.get("intercept") is not None:
            ci = "" if t["ci"] is None else " [%.2f, %.2f]" % tuple(t["ci"])
            # ln n = a + b ln(value), fitted on the log-mean of each value's samples.
            grid = sorted(x for x in xs if x > 0)
            ax.plot(grid, [math.exp(t["intercept"] + t["slope"] * math.log(x)) for x in grid], "-",
                    color="tab:blue", lw=1, alpha=0.8,
                    label="fit on the samples (log-mean per %s): slope %.2f%s"
                    % (symbol, t["slope"], ci))
        pc.tidy(ax, xs, False)
        ax.set_xticklabels(["%g" % x for x in sorted({x for x in xs if x > 0})])
        pc.label_log_axis(ax.yaxis, *ax.get_ylim())
        ax.set_xlabel(symbol)
        ax.set_ylabel("needed length n (simulator on found x)")
        trend = TREND.get(t["trend"], t["trend"]).replace("{}", symbol)
        ax.set_title("%s, %s: %s" % (t["task"], symbol, trend), fontsize=9)
        # Below the axes, so that no point is hidden behind it.
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    opts = doc["options"]
    fig.suptitle("ltsim experiment paper: ε = %g (k-gram ε = %g), |x| = %s, seed %d"
                 % (opts["eps"], opts["kgram_eps"], f"{opts['x_length']:,}",
                    doc["context"]["seed"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "experiment.png"), dpi=100)
    fig.savefig(os.path.join(directory, "experiment.svg"))


if __name__ == "__main__":
    main(sys.argv[1])
