#!/usr/bin/python3
"""Draws DIR/profile.png from DIR/profile.json (`ltsim profile --out-dir DIR`), with Debian's
matplotlib (docs/theory.md §14).

One plot, gap against length T (log x axis, linear y):
- the largest gap at each profiled length as a certified band: its lower edge is attained by a
  string of that length (markers), its upper edge is certified for every string of it;
- the supremum over every length as a horizontal band [attained, certified];
- the training length n as a vertical line, with ε_train(n) in the legend.
Exit 3 when matplotlib is missing (the caller prints how to install it).
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


def fmt(v):
    return "∞" if v is None or (isinstance(v, float) and math.isinf(v)) else f"{v:.4g}"


def main(directory):
    with open(os.path.join(directory, "profile.json"), encoding="utf-8") as f:
        doc = json.load(f)
    ts = doc["lengths"]
    lo = [v if v is not None else float("nan") for v in doc["gap_lower"]]
    hi = [v if v is not None else float("nan") for v in doc["gap_upper"]]
    fig, ax = plt.subplots(figsize=(7.5, 5.4))
    ax.fill_between(ts, lo, hi, color="tab:blue", alpha=0.25, linewidth=0, step=None,
                    label="largest gap at T: certified band")
    ax.plot(ts, lo, "o", color="tab:blue", markersize=3.5,
            label="attained by a string of length T (lower edge)")
    ax.plot(ts, hi, "-", color="tab:blue", lw=1, label="certified for every string (upper edge)")
    s_lo, s_hi = doc["sup_gap_lower"], doc["sup_gap_upper"]
    if s_lo is not None:
        top = s_hi if s_hi is not None else s_lo
        ax.axhspan(s_lo, top if top > s_lo else s_lo * 1.0005 + 1e-12, color="tab:red",
                   alpha=0.25, linewidth=0)
        ax.axhline(s_lo, color="tab:red", lw=1,
                   label=f"sup over every length ∈ [{fmt(s_lo)}, {fmt(s_hi)}]")
    n = doc.get("train_length")
    if n:
        ax.axvline(n, color="tab:green", ls="--", lw=1.2,
                   label=f"training length n = {n}: ε_train ∈ "
                   f"[{fmt(doc['train_gap_lower'])}, {fmt(doc['train_gap_upper'])}]")
    ax.set_xscale("log")
    ax.set_xlim(max(min(ts), 1) / 1.2, max(ts) * 1.2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("length T (log scale)")
    ax.set_ylabel("max over strings of length T of |f(x) − g(x)|")
    ratio = ""
    if doc.get("ratio_lower") is not None:
        ratio = f"; sup / ε_train ∈ [{fmt(doc['ratio_lower'])}, {fmt(doc['ratio_upper'])}]"
    ax.set_title(f"Length profile (seed {doc['seed']}){ratio}", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    # Below the axes, so that no data point is hidden behind it.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "profile.png"), dpi=120)


if __name__ == "__main__":
    main(sys.argv[1])
