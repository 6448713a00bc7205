#!/usr/bin/python3
"""Draws DIR/threshold.png from DIR/threshold.json (`ltsim threshold --out-dir DIR`), with Debian's
matplotlib (docs/theory.md §11.4).

One plot, the largest gap max_x |f(x) − g(x)| over the strings of each length T against T:
- its certified bracket: the lower edge (gap_lower_per_length) is attained by an evaluated string
  of that length (markers), the upper edge (gap_upper_per_length) is certified for every string
  of it; a length without a certified upper bound shows its lower edge only;
- ε as a horizontal line and the first disagreement T* (or "none up to N") as a vertical one.
The x axis is logarithmic when the lengths span more than a decade. Exit 3 when matplotlib is
missing (the caller prints how to install it).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from plot_common import label_log_axis
except ImportError:
    sys.exit(3)


def main(directory):
    with open(os.path.join(directory, "threshold.json"), encoding="utf-8") as f:
        doc = json.load(f)
    lower = doc["gap_lower_per_length"]
    upper = doc["gap_upper_per_length"]
    nan = float("nan")
    ts = [k + 1 for k in range(len(lower))]
    first = doc.get("min_length") or 1
    keep = [k for k, t in enumerate(ts) if t >= first]
    ts = [ts[k] for k in keep]
    lo = [lower[k] if lower[k] is not None else nan for k in keep]
    hi = [upper[k] if k < len(upper) and upper[k] is not None else nan for k in keep]
    eps = doc["epsilon"]
    fig, ax = plt.subplots(figsize=(7.5, 5.4))
    widths = [h - l for l, h in zip(lo, hi) if not math.isnan(h) and not math.isnan(l)]
    if widths:
        width = max(widths)
        ax.fill_between(ts, lo, hi, color="tab:blue", alpha=0.25, linewidth=0,
                        label="largest gap at T: certified bracket (widest %.2g%s)"
                        % (width, ", exact" if width <= 1e-12 else ""))
        ax.plot(ts, hi, "-", color="tab:blue", lw=1,
                label="certified for every string of length T (upper edge)")
    ax.plot(ts, lo, "o-" if len(ts) <= 60 else "-", color="tab:blue", markersize=3.5, lw=0.6,
            label="attained by a string of length T (lower edge)")
    ax.axhline(eps, color="tab:red", ls="--", lw=1.2, label=f"ε = {eps:g}")
    t_star = doc.get("first_disagreement")
    if t_star is not None:
        ax.axvline(t_star, color="tab:green", lw=1.2,
                   label=f"first disagreement T* = {t_star} (gap {doc['gap']:.3g} > ε)")
    else:
        ax.plot([], [], " ", label=f"no disagreement up to T = {doc['checked_up_to']}")
    if ts and max(ts) / max(min(ts), 1) > 10:
        ax.set_xscale("log")
        label_log_axis(ax.xaxis, max(min(ts), 1), max(ts))
        ax.set_xlabel("length T (log scale)")
    else:
        ax.set_xlabel("length T")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("max over strings of length T of ‖f(x) − g(x)‖∞")
    exact = "exact" if doc.get("exhaustive") else "not exhaustive: random strings beyond T = %d" % (
        doc.get("exhaustive_up_to") or 0)
    ax.set_title(f"ltsim threshold: gap against length ({doc['method']}, {exact}, seed "
                 f"{doc['context']['seed']})", fontsize=10)
    ax.grid(True, alpha=0.3)
    # Below the axes, so that no data point is hidden behind it.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "threshold.png"), dpi=120)


if __name__ == "__main__":
    main(sys.argv[1])
