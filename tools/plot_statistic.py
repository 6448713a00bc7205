#!/usr/bin/python3
"""Draws DIR/statistic.png from DIR/statistic.json (`ltsim statistic --sweep --out-dir DIR`), with
Debian's matplotlib and the shared rules of tools/plot_common.py (docs/lemma53.md,
docs/statistics.md §4).

One panel per input family ('worst': the worst family per z seed first): per scheme the largest
statistic error found by the attack against n (lower side: the median over z seeds as a marker,
min-max as bars; a point at the floor as an arrow down, never fitted), the transport bound on the
same x and z as a dashed line of the same colour (upper side), and Lemma 5.3's rate n^(-1/3) as a
red dotted line through markov's first point. Log-log. The legend sits in its own cell, over no
data. Exit 3 when matplotlib is missing (the caller prints how to install it).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_common import draw_series, label_log_axis  # noqa: E402

COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink"]


def rate_text(rate):
    if rate.get("exponent") is None:
        return "no rate"
    ci = rate.get("ci")
    return "n^%.2f" % rate["exponent"] + ("" if ci is None else " [%.2f, %.2f]" % tuple(ci))


def main(directory):
    with open(os.path.join(directory, "statistic.json"), encoding="utf-8") as f:
        doc = json.load(f)
    series = doc["series"]
    inputs = []
    for s in series:
        if s["input"] not in inputs:
            inputs.append(s["input"])
    methods = []
    for s in series:
        if s["method"] not in methods:
            methods.append(s["method"])
    color = {m: COLORS[i % len(COLORS)] for i, m in enumerate(methods)}
    cells = len(inputs) + 1
    cols = min(4, cells)
    rows = math.ceil(cells / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 4.0 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, family in zip(flat, inputs):
        for s in (s for s in series if s["input"] == family):
            pts = s["points"]
            ns = [p["n"] for p in pts]
            c = color[s["method"]]
            cens = ["below" if p["censored"] else "none" for p in pts]
            draw_series(ax, ns, [p["median"] for p in pts], [p["min"] for p in pts],
                        [p["max"] for p in pts], cens, c,
                        "%s: %s" % (s["method"], rate_text(s["rate"])))
            up = [(p["n"], p["certified_upper"]) for p in pts if p["certified_upper"]]
            if up:
                ax.plot([u for u, _ in up], [v for _, v in up], "--", color=c, lw=1)
            if s["method"] == "markov" and pts and pts[0]["median"] > 0:
                n0, e0 = pts[0]["n"], pts[0]["median"]
                ax.plot(ns, [e0 * (n / n0) ** doc["paper_rate"] for n in ns], ":", color="tab:red",
                        lw=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        label_log_axis(ax.yaxis, *ax.get_ylim())
        label_log_axis(ax.xaxis, *ax.get_xlim())
        ax.set_title("x: %s" % family, fontsize=9)
        ax.set_xlabel("|z| = n")
        ax.set_ylabel("statistic error (sup-norm)")
        ax.grid(True, which="major", alpha=0.3)
        # Below the panel: the rates are the panel's own, and a legend inside would hide points.
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False, handlelength=1.2, columnspacing=0.8)
    legend_ax = flat[len(inputs)]
    legend_ax.axis("off")
    handles = [plt.Line2D([], [], color=color[m], marker="o", label=m) for m in methods]
    handles += [plt.Line2D([], [], ls="none", label="under each panel: each scheme's fitted rate\n"
                           "n^b [95% CI] on that input family"),
                plt.Line2D([], [], color="black", marker="o", ls="none",
                           label="error found by the attack (lower side):\nmedian over z seeds, "
                           "bars min-max"),
                plt.Line2D([], [], color="black", ls="--",
                           label="transport bound on the same x, z\n(upper side)"),
                plt.Line2D([], [], color="tab:red", ls=":",
                           label="Lemma 5.3's rate n^(-1/3),\nthrough markov's first point")]
    legend_ax.legend(handles=handles, fontsize=8, loc="center", frameon=False)
    for ax in flat[len(inputs) + 1:]:
        ax.axis("off")
    o = doc["options"]
    fig.suptitle("ltsim statistic --sweep: adversarial error against |z| (|x| = %s, L = %g, "
                 "τ = %d, seed %d)" % (f"{o['x_length']:,}", o["lipschitz"], o["locality"],
                                       doc["context"]["seed"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "statistic.png"), dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
