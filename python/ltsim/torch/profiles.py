"""Certified length profiles of trained models against their targets (docs/theory.md §14), for
`python3 -m ltsim.torch.experiment`: per task, training length n and seed, ε_train(n) (the
largest gap over lengths ≤ n), the supremum of the gap over every length, and their ratio, each
a certified bracket computed by `ltsim.profile`; and the figure of the ratio against n.

The gap is ‖g(x) − f(x)‖_∞ with f the model `ltsim construct` writes for the task (the profile
needs a model on both sides, not the exact task function). Two-layer pairs (the k-gram tasks)
have no profile: `certify`, on which the supremum rests, decides one-layer pairs only; their
rows say so.
"""

from __future__ import annotations

import math
import os

import numpy as np

import ltsim

# The profile's grid beyond n (lengths evenly in log up to max_length).
GRID_POINTS = 12


def profile_row(target, trained, n, max_length, threads=0):
    """One model's certified profile numbers (a dict of plain values), or the reason there are
    none. `target`, `trained`: paths of model files."""
    f, g = ltsim.load_model(target), ltsim.load_model(trained)
    if len(f.layers) != 1 or len(g.layers) != 1:
        return {"profile": None,
                "reason": "two-layer pair: certify (the supremum) decides one-layer pairs only"}
    try:
        p = ltsim.profile(f, g, train_length=n, max_length=max(n, min(max_length, 10**6)),
                          points=GRID_POINTS, threads=threads)
    except ltsim.InputError as error:
        return {"profile": None, "reason": str(error)}
    plain = p.to_dict()
    return {"profile": {k: plain[k] for k in (
        "train_gap_lower", "train_gap_upper", "sup_gap_lower", "sup_gap_upper", "sup_status",
        "ratio_lower", "ratio_upper", "certify_runs")}, "reason": None}


def plot_ratio(rows, out):
    """ratio_vs_n.png: per task, each model's certified bracket of sup/ε_train against n (one
    bar a seed, side by side), log axes. Rows without a profile are left out and named in the
    caption. Returns the path, or None without matplotlib or rows."""
    rows = [r for r in rows if r["profile"] is not None]
    if not rows:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    tasks = sorted({r["task_key"] for r in rows})
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ns = sorted({r["n"] for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    for i, key in enumerate(tasks):
        for j, seed in enumerate(seeds):
            pts = sorted((r["n"], r["profile"]["ratio_lower"], r["profile"]["ratio_upper"])
                         for r in rows if r["task_key"] == key and r["seed"] == seed)
            if not pts:
                continue
            shift = 2.0 ** (0.06 * (i * len(seeds) + j - (len(tasks) * len(seeds) - 1) / 2))
            n = np.array([p[0] for p in pts], dtype=float) * shift
            lo = np.array([p[1] if p[1] is not None else np.nan for p in pts], dtype=float)
            hi = np.array([p[2] if p[2] is not None else np.inf for p in pts], dtype=float)
            finite = np.isfinite(hi)
            ax.vlines(n[finite], lo[finite], hi[finite], color=f"C{i}", lw=3)
            # An unbounded ratio (ε_train's lower bound is 0): an arrow up from the lower end.
            for x, y in zip(n[~finite], lo[~finite]):
                ax.annotate("", xy=(x, y * 4), xytext=(x, y),
                            arrowprops={"arrowstyle": "->", "color": f"C{i}"})
            ax.plot(n, lo, "o", color=f"C{i}", ms=4, label=key if j == 0 else None)
    ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    values = [v for r in rows for v in (r["profile"]["ratio_lower"], r["profile"]["ratio_upper"])
              if v is not None and np.isfinite(v) and v > 0]
    if values and max(values) / min(values) > 10:  # a log axis only where the ratios span decades
        ax.set_yscale("log")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("training length n")
    ax.set_ylabel("sup over every length / ε_train(n)")
    ax.set_title("Certified ratio of the worst gap at any length to the training gap\n"
                 "(a bar a seed from its certified lower bound (dot) to its upper bound;\n"
                 "an arrow: no finite upper bound)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    path = os.path.join(out, "ratio_vs_n.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_table(rows):
    print("\ncertified profiles (ltsim.profile; gap against ltsim construct's target):")
    print(f"  {'task':24} {'n':>4} {'seed':>4} {'eps_train':>21} {'sup over every T':>21} "
          f"{'ratio':>19}")

    def bracket(lo, hi, width):
        show = (lambda v: "inf" if v is None or (isinstance(v, float) and math.isinf(v))
                else f"{v:.4g}")
        return f"[{show(lo)}, {show(hi)}]".rjust(width)

    for r in rows:
        p = r["profile"]
        if p is None:
            print(f"  {r['task_key']:24} {r['n']:>4} {r['seed']:>4}  none: {r['reason']}")
            continue
        print(f"  {r['task_key']:24} {r['n']:>4} {r['seed']:>4} "
              f"{bracket(p['train_gap_lower'], p['train_gap_upper'], 21)} "
              f"{bracket(p['sup_gap_lower'], p['sup_gap_upper'], 21)} "
              f"{bracket(p['ratio_lower'], p['ratio_upper'], 19)}")
