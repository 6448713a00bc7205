"""Shared drawing rules of ltsim's figures (docs/statistics.md, docs/tightness.md §6).

A series is drawn as its median per point with min-max error bars and a band; a censored
point (a bound: at a cap or on a floor) as an arrow from its value (up for 'above', down for
'below'), never joined to the band and never part of a fitted line. The paper's slope is
anchored the same way in every figure: through the series' first uncensored median.
Ticks: one labelled x tick per grid value, no minor labels, so log ticks never overlap.
"""
import math

from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator


def draw_series(ax, xs, meds, mins, maxs, censoring, color, label, marker="o"):
    open_idx = [i for i, c in enumerate(censoring) if c == "none"]
    if open_idx:
        ox = [xs[i] for i in open_idx]
        om = [meds[i] for i in open_idx]
        lo = [mins[i] for i in open_idx]
        hi = [maxs[i] for i in open_idx]
        ax.fill_between(ox, lo, hi, color=color, alpha=0.2, linewidth=0)
        ax.errorbar(ox, om, yerr=[[m - l for m, l in zip(om, lo)], [h - m for m, h in zip(om, hi)]],
                    fmt=marker, color=color, capsize=3, label=label)
    for i, c in enumerate(censoring):
        if c == "none":
            continue
        y = maxs[i] if c == "above" else mins[i]
        end = y * 2.0 if c == "above" else y / 2.0
        ax.annotate("", xy=(xs[i], end), xytext=(xs[i], y),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1.5))
        ax.plot([xs[i]], [y], "_", color=color, markersize=14, mew=2)
    if any(c != "none" for c in censoring):
        ax.plot([], [], "^", color=color, label="censored: a bound (arrow), not fitted")


def fit_line(ax, xs, censoring, meds, slope, color, loglinear, label=None):
    pts = [(x, m) for x, m, c in zip(xs, meds, censoring) if c == "none" and m and m > 0
           and (loglinear or x > 0)]
    if slope is None or not pts:
        return
    lx = [x if loglinear else math.log(x) for x, _ in pts]
    ly = [math.log(m) for _, m in pts]
    a = sum(ly) / len(ly) - slope * sum(lx) / len(lx)
    grid = sorted(x for x in xs if loglinear or x > 0)
    ax.plot(grid, [math.exp(a + slope * (x if loglinear else math.log(x))) for x in grid], "-",
            color=color, lw=1, alpha=0.8, label=label)


def paper_line(ax, xs, meds, censoring, slope, loglinear, label):
    anchor = next(((x, m) for x, m, c in zip(xs, meds, censoring) if c == "none" and m and m > 0),
                  None)
    if slope is None or anchor is None:
        return
    x0, y0 = anchor
    grid = sorted(x for x in xs if loglinear or x > 0)
    ys = [y0 * (math.exp(slope * (x - x0)) if loglinear else (x / x0) ** slope) for x in grid]
    ax.plot(grid, ys, "--", color="tab:red", lw=1, label=label + " (through the first point)")


def tidy(ax, xs, loglinear):
    ax.set_yscale("log")
    if not loglinear:
        ax.set_xscale("log")
    grid = sorted({x for x in xs if loglinear or x > 0})
    ax.xaxis.set_major_locator(FixedLocator(grid))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(["%.3g" % x for x in grid])
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=8))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def _tick_text(v, _=None):
    """Plain numbers from 0.001 to 99,999; powers of ten as 10^k beyond."""
    if v <= 0:
        return ""
    if 1e-3 <= v < 1e5:
        return "%g" % v
    k = math.log10(v)
    return "$10^{%d}$" % round(k) if abs(k - round(k)) < 1e-9 else "%.0e" % v


def _power_text(v, _=None):
    """A decade tick as 10^k (one notation along an axis of many decades)."""
    return "$10^{%d}$" % round(math.log10(v)) if v > 0 else ""


def label_log_axis(axis, lo, hi):
    """Labels a log axis from lo to hi in plain numbers: 1-2-5 ticks when it spans at most three
    decades (so a short axis never shows a single labelled decade), decades as 10^k otherwise."""
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 0
    subs = (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=40))
    axis.set_major_formatter(FuncFormatter(_tick_text if decades <= 3 else _power_text))
    axis.set_minor_formatter(NullFormatter())
