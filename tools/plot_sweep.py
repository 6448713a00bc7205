#!/usr/bin/python3
"""Draws DIR/sweep.png and DIR/sweep.svg from DIR/sweep.json (`ltsim sweep --out-dir DIR`), with
Debian's matplotlib and the shared rules of tools/plot_common.py (docs/statistics.md §5).

Left, one plot with the three quantities, each labelled:
- simulator on found x: the needed length of each pair, its median as a marker with min-max
  error bars and a band; a censored point (some pair at the cap |x|, or at the grid's floor) as
  an arrow from the cap (up) or the floor (down), never joined to the band nor fitted; a point
  outside the hardmax regime (|x| < 4·T_hard) as a hollow grey marker, not fitted;
- upper side: the construction's certified length of each pair, drawn the same way;
- paper: Thm 4.1's slope as a dashed line, anchored as in every figure (tools/plot_common.py):
  through the simulator's first uncensored median, or the upper side's first point when the
  simulator has none.
Each measured series carries its fitted line and exponent with its 95% interval in the legend.
Log-log; margin log-linear in 1/gamma (ln n = a + b/gamma). Right: the simulation error at the
fixed n. Exit 3 when matplotlib is missing (the caller prints how to install it).
"""
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator
except ImportError:
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_common import draw_series, fit_line, label_log_axis, paper_line, tidy  # noqa: E402

SIM, UPPER, OUTSIDE = "tab:blue", "tab:orange", "tab:gray"
SIM_KEY, UPPER_KEY, PAPER_KEY = "simulator on found x", "upper side", "paper"


def interval(ci):
    return "no CI" if ci is None else "[%.2f, %.2f]" % (ci[0], ci[1])


def slope_text(fit):
    if fit.get("exponent") is None:
        return "no exponent"
    return "slope %.2f %s" % (fit["exponent"], interval(fit["ci"]))


def greek(name):
    """A parameter's name as the docs write it: eps → ε, gamma → γ (1/eps → 1/ε)."""
    return name.replace("gamma", "γ").replace("eps", "ε")


def cap(point):
    """The bound a point censored above stands for: no n < |x| met ε on its capped pairs, so its
    worst needed length is at least the largest |x| among them."""
    capped = [q["x_length"] for q in point.get("pairs", []) if not q.get("reached", True)]
    return max(capped) if capped else None


def series(points, key):
    """Per point (x, median, min, max, censoring), in regime and with a positive regressor. A
    point censored above is drawn at its cap |x| (cap()), where its bound is."""
    rows = []
    for p in points:
        q = p[key]
        censoring = q.get("censoring", "none")
        high = q["max"]
        if censoring == "above" and key == SIM_KEY and cap(p) is not None:
            high = cap(p)
        rows.append((p["fit_x"], q["median"], q["min"], high, censoring))
    return rows


def draw(ax, points, key, color, label, fit, loglinear, keep):
    rows = [r for r, k in zip(series(points, key), keep) if k]
    if not rows:
        return [], [], []
    xs, meds, mins, maxs, cens = (list(c) for c in zip(*rows))
    before = set(ax.get_lines())
    draw_series(ax, xs, meds, mins, maxs, cens, color, "%s: %s" % (label, slope_text(fit)))
    # plot_common's legend entry for censored points: name the series and the arrow's direction.
    kinds = {c for c in cens if c != "none"}
    for line in set(ax.get_lines()) - before:
        if line.get_label().startswith("censored"):
            line.set_marker("v" if kinds == {"below"} else "^")
            line.set_label("%s censored (%s): a bound, not fitted" % (
                label.split(" (")[0], " and ".join(
                    sorted({"above": "≥ |x|: no n < |x| met ε, arrow up from |x|",
                            "below": "at the floor, arrow down"}[k] for k in kinds))))
    fit_line(ax, xs, cens, meds, fit.get("exponent"), color, loglinear)
    for x, high, c in zip(xs, maxs, cens):
        if c == "above" and key == SIM_KEY:
            ax.annotate("≥ |x| = %s" % f"{int(high):,}", (x, high), textcoords="offset points",
                        xytext=(6, -4), fontsize=7, color=color)
    return xs, meds, cens


def show_arrows(ax, points, keep):
    """Widens the y range so that every censored point's arrow (to twice the cap, or half the
    floor, as tools/plot_common.py draws it) lies inside the axes."""
    ends = []
    for p, k in zip(points, keep):
        q = p[SIM_KEY]
        if k and q.get("censoring") == "above":
            ends.append(2.0 * (cap(p) or q["max"]))
        elif k and q.get("censoring") == "below":
            ends.append(0.5 * q["min"])
    if ends:
        low, high = ax.get_ylim()
        ax.set_ylim(min(low, 0.7 * min(ends)), max(high, 1.4 * max(ends)))


def main(directory):
    with open(os.path.join(directory, "sweep.json")) as f:
        doc = json.load(f)
    opts, points = doc["options"], doc["points"]
    loglinear = opts["parameter"] == "margin"  # ln n = a + b/gamma
    sim_fit, upper_fit = doc[SIM_KEY], doc[UPPER_KEY]
    inside = [p["hardmax_regime"] and (p["fit_x"] or 0) > 0 for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.8), gridspec_kw={"width_ratios": [3, 2]})

    sx, smed, scens = draw(left, points, SIM_KEY, SIM,
                           "simulator on found x (needed n, %d pairs)" % opts["pairs"], sim_fit,
                           loglinear, inside)
    ux, umed, ucens = draw(left, points, UPPER_KEY, UPPER,
                           "upper side (certified length)", upper_fit, loglinear, inside)
    outside = [p for p, k in zip(points, inside) if not k and (p["fit_x"] or 0) > 0]
    if outside:
        left.errorbar([p["fit_x"] for p in outside], [p[SIM_KEY]["median"] for p in outside],
                      yerr=[[p[SIM_KEY]["median"] - p[SIM_KEY]["min"] for p in outside],
                            [p[SIM_KEY]["max"] - p[SIM_KEY]["median"] for p in outside]],
                      fmt="o", mfc="none", color=OUTSIDE, capsize=3,
                      label="simulator, x outside the hardmax regime (|x| < 4 T_hard): not fitted")
    # The paper's slope: through the simulator's first uncensored median, else the upper side's.
    b = doc[PAPER_KEY]["exponent"]
    label = "paper slope %.3g (Thm 4.1)" % b
    if any(c == "none" for c in scens):
        paper_line(left, sx, smed, scens, b, loglinear, label)
    elif ux:
        paper_line(left, ux, umed, ucens, b, loglinear, label)
    tidy(left, [p["fit_x"] for p in points if loglinear or (p["fit_x"] or 0) > 0], loglinear)
    show_arrows(left, points, inside)
    label_log_axis(left.yaxis, *left.get_ylim())
    left.set_xlabel(greek(doc["fit_x"]) + (" (log-linear: ln n = a + b/γ)" if loglinear else ""))
    left.set_ylabel("length (median, min-max over the pairs)")
    # Below the axes: the bands fill the plot, a legend inside would hide a point.
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    # Short: the reason is in sweep.json and in the printed table.
    trend = {"rises": "rises (95% interval excludes 0)",
             "not shown": "no trend shown (95% interval includes 0)"}.get(
                 sim_fit.get("trend", ""), sim_fit.get("trend", ""))
    left.set_title("needed length against %s: %s" % (greek(opts["parameter"]), trend), fontsize=9)

    # Not fitted: a linear y axis shows a zero error too.
    sims = [(p["value"], p["sim_at_fixed"]) for p in points if p["sim_at_fixed"] is not None]
    if sims:
        right.plot([v for v, _ in sims], [s for _, s in sims], "o-", color=SIM)
        right.set_xscale("log")
        grid = sorted({v for v, _ in sims})
        right.xaxis.set_major_locator(FixedLocator(grid))
        right.xaxis.set_minor_locator(NullLocator())
        right.set_xticklabels(["%.3g" % v for v in grid])
        right.set_ylim(bottom=0)
        right.grid(True, alpha=0.3)
    right.set_xlabel(greek(opts["parameter"]))
    right.set_ylabel("max sim over the pairs at n = %d" % opts["fixed_n"])
    right.set_title("simulation error at a fixed n", fontsize=9)

    fixed = "" if opts["parameter"] == "eps" else "ε = %g, " % opts["eps"]
    if opts["parameter"] == "margin":
        fixed += "p = %d bits, " % opts["precision_bits"]
    fig.suptitle("ltsim sweep over %s (%s|x| = %s, seed %d, %s)"
                 % (greek(opts["parameter"]), fixed, f"{opts['x_length']:,}", doc["context"]["seed"],
                    opts.get("method", "random")), fontsize=10)
    fig.tight_layout()
    # bbox "tight": the legend below the left plot is wider than it and stays whole.
    fig.savefig(os.path.join(directory, "sweep.png"), dpi=110, bbox_inches="tight")
    fig.savefig(os.path.join(directory, "sweep.svg"), bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1])
