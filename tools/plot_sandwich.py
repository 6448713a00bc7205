#!/usr/bin/python3
"""Draws DIR/sandwich.png from DIR/sandwich.json (`ltsim sandwich --out-dir DIR`), with Debian's
matplotlib.

The sandwich |f(x) − g(x)| ≤ |f(x) − f(z)| + |f(z) − g(z)| + |g(z) − g(x)| as bars: the three
measured terms stacked (sim_f, gap_z, sim_g), beside it the measured |f(x) − g(x)|, and, where
the method claims one, the certified bound gap_z + B_f + B_g (one layer: B = L·η) stacked the
same way. Each bar is labelled with its value. Exit 3 when matplotlib is missing.
"""
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError:
    sys.exit(3)

SIM_F, GAP, SIM_G, GAP_X = "tab:blue", "tab:gray", "tab:orange", "tab:green"


def main(directory):
    with open(os.path.join(directory, "sandwich.json"), encoding="utf-8") as f:
        doc = json.load(f)
    c = doc["constants"]
    sim_f, gap_z, sim_g, gap_x = doc["sim_f"], doc["gap_z"], doc["sim_g"], doc["gap_x"]
    b_f, b_g = c.get("certified_sim_f"), c.get("certified_sim_g")
    certified = b_f is not None and b_g is not None
    two_layer = "two_layer_bound_f" in doc
    bound_name = "B" if two_layer else "L·η"
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    bars = [("measured terms\n(on x and z)", [(sim_f, SIM_F, "sim_f = |f(x) − f(z)|"),
                                               (gap_z, GAP, "gap_z = |f(z) − g(z)|"),
                                               (sim_g, SIM_G, "sim_g = |g(z) − g(x)|")]),
            ("measured on x", [(gap_x, GAP_X, "|f(x) − g(x)|")])]
    if certified:
        bars.append(("certified from z\n(no look at x's outputs)",
                     [(b_f, SIM_F, None), (gap_z, GAP, None), (b_g, SIM_G, None)]))
    for i, (_, parts) in enumerate(bars):
        bottom = 0.0
        for value, color, label in parts:
            hatch = "//" if i == 2 and color != GAP else None
            ax.bar(i, value, bottom=bottom, color=color, alpha=0.35 if hatch else 0.8,
                   hatch=hatch, edgecolor=color, width=0.6, label=label)
            bottom += value
        ax.text(i, bottom, f"{bottom:.4g}", ha="center", va="bottom", fontsize=9)
    if certified:
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(facecolor="white", hatch="//", edgecolor="gray"))
        labels.append(f"certified bound on sim (hatched): {bound_name}_f = {b_f:.3g}, "
                      f"{bound_name}_g = {b_g:.3g}")
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([name for name, _ in bars], fontsize=9)
    ax.set_xlim(-0.6, len(bars) - 0.4)
    top = max(sum(v for v, _, _ in parts) for _, parts in bars)
    ax.set_ylim(0, top * 1.15 if top > 0 else 1)
    ax.set_ylabel("‖·‖∞ (output units)")
    ax.set_title(f"ltsim sandwich: |x| = {doc['x_length']:,}, |z| = {doc['z_length']:,}, "
                 f"method {doc['method']}, seed {doc['context']['seed']}", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    # Below the axes, so that no bar is hidden behind it.
    if not certified:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "sandwich.png"), dpi=120)


if __name__ == "__main__":
    main(sys.argv[1])
