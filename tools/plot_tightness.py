#!/usr/bin/python3
"""Draws one figure per row of DIR/tightness.json (`ltsim tightness --out-dir DIR`), with Debian's
matplotlib: DIR/tightness_<name>.png and .svg (name: the parameter; n_<scheme> for the Lemma 5.3
rows), and DIR/tightness.png (every row, small).

Each figure: the lower side (certified T* of the family members) and the upper side (the
construction's certified length) as bands from the smallest to the largest member with error
bars and the median as a marker; censored points (T* > N: the exact search stopped at N) as
upward arrows at the cap, never joined to the band; each side's fitted line; the frequency
simulator's needed length on found x as crosses (neither bound); and the paper's slope.
Anchor (the same in every figure, docs/tightness.md §6): the paper's line passes through the
lower side's first uncensored median; when the lower side has none, through the upper side's
first point. Log-log, except margin: log-linear in 1/gamma (ln N = a + b/gamma). Theorem 5.2
rows are log-linear (k: in (k+1)^2, ticks labelled by k; positional-margin: in 1/gamma_pos); a
side without points (5.2's upper side: no certified two-layer length) is named in the legend as
"none"; the markov simulator's needed length on found x is drawn as a grey band like a side
(censored points as arrows); when the lower side and the upper side have no uncensored point the
paper's line passes through the simulator's first uncensored median, and a paper line that
leaves the data's range is cut at the top of the axes (it stays a straight line). Theorem 4.2
rows: the average T* with the paper's slope and no upper side (eps rows log-log, alpha0
log-linear in 1/alpha0), and for the eps rows a second panel with the later expected gap against
eps beside slopes 1 and 1/2 (the paper's eps^(1/2)). Lemma 5.3
rows plot the statistic error against n: the adversarial error (lower side), the transport bound
on the same inputs (upper side), points censored at the floor as downward arrows.
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
    from matplotlib.ticker import (FixedLocator, FormatStrFormatter, LogLocator, NullFormatter,
                                   NullLocator)
except ImportError:
    sys.exit(3)

LOWER, UPPER, SIM, PAPER = "tab:blue", "tab:orange", "tab:gray", "tab:red"


def interval(ci):
    return "no CI" if ci is None else "[%.2f, %.2f]" % (ci[0], ci[1])


def side(ax, points, color, label, exponent, intercept_from, loglinear):
    xs = [p["regressor"] for p in points]
    open_pts = [p for p in points if not p["censored"]]
    capped = [p for p in points if p["censored"]]
    if open_pts:
        ox = [p["regressor"] for p in open_pts]
        med = [p["median"] for p in open_pts]
        lo = [p["min"] for p in open_pts]
        hi = [p["max"] for p in open_pts]
        ax.fill_between(ox, lo, hi, color=color, alpha=0.25, linewidth=0)
        ax.errorbar(ox, med, yerr=[[m - l for m, l in zip(med, lo)], [h - m for m, h in zip(med, hi)]],
                    fmt="o", color=color, capsize=3, label=label)
    for p in capped:
        # A censored point: at a cap the quantity is at least the cap (an arrow up from it); at
        # a floor (5.3: error <= 1e-12) at most the floor (an arrow down from it).
        below = p.get("censoring") == "below"
        y = p["min"] if below else p["max"]
        ax.annotate("", xy=(p["regressor"], y * (0.5 if below else 2.0)), xytext=(p["regressor"], y),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1.5))
        ax.plot([p["regressor"]], [y], "_", color=color, markersize=14, mew=2)
    if capped:
        below = any(p.get("censoring") == "below" for p in capped)
        ax.plot([], [], "v" if below else "^", color=color,
                label="%s: censored (%s, not fitted)" % (label.split(":")[0],
                                                         "≤ floor" if below else "≥ cap"))
    if exponent is not None and open_pts:
        # The fitted line through the geometric mean of the fitted medians.
        ox = [p["regressor"] for p in open_pts]
        ox = [x for x in ox if loglinear or x > 0]
        lx = [x if loglinear else math.log(x) for x in ox]
        ly = [math.log(p["median"]) for p in open_pts]
        a = sum(ly) / len(ly) - exponent * sum(lx) / len(lx)
        grid = sorted(xs)
        fit = [math.exp(a + exponent * (x if loglinear else math.log(x))) for x in grid]
        ax.plot(grid, fit, "-", color=color, lw=1, alpha=0.8)


def figure(row, path_stem, ax=None):
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
    t52 = row.get("theorem") == "5.2"
    loglinear = row["parameter"] in ("margin", "k", "positional-margin")
    rate = row.get("quantity") == "statistic error"
    lower, upper = row["lower"], row["upper"]
    if t52:
        return figure52(row, path_stem, ax, own)
    if row.get("theorem") == "4.2":
        return figure42(row, path_stem, ax, own)
    side(ax, lower["points"], LOWER,
         "lower side: %s, slope %s %s" % ("adversarial error found" if rate else "T* (exact)",
                                          fmt(lower["exponent"]), interval(lower["ci"])),
         lower["exponent"], None, loglinear)
    side(ax, upper["points"], UPPER,
         "upper side: %s, slope %s %s" % ("transport bound, same x and z" if rate
                                          else "certified length",
                                          fmt(upper["exponent"]), interval(upper["ci"])),
         upper["exponent"], None, loglinear)
    sim = [(p, q) for p, q in zip(row["simulator"]["points"], lower["points"]) if p["needed"] > 0]
    if sim:
        ax.plot([q["regressor"] for _, q in sim], [p["needed"] for p, _ in sim], "x", color=SIM,
                label="simulator on found x (neither bound)")
    anchor = next((p for p in lower["points"] if not p["censored"]), None) or upper["points"][0]
    b = row["paper"]
    if b is not None:
        xs = sorted(p["regressor"] for p in lower["points"])
        x0, y0 = anchor["regressor"], anchor["median"]
        ys = [y0 * (math.exp(b * (x - x0)) if loglinear else (x / x0) ** b) for x in xs]
        ax.plot(xs, ys, "--", color=PAPER, lw=1,
                label="paper slope %.3g (through the lower side's first point)" % b)
    ax.set_yscale("log")
    if not loglinear:
        ax.set_xscale("log")
    # One labelled tick per grid value, no minor labels: log ticks never overlap.
    xs = sorted({p["regressor"] for p in lower["points"]})
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(["%d" % x if x >= 1000 and float(x).is_integer() else "%.3g" % x for x in xs])
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=8))
    ax.yaxis.set_minor_formatter(NullFormatter())
    low, high = ax.get_ylim()
    if high < 10 * low:
        # Less than a decade (the locality row): label the 1-2-5 ticks instead of the decades.
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.set_xlabel(row["regressor"] + (" (log-linear: ln N = a + b/gamma)" if loglinear else ""))
    ax.set_ylabel(row.get("quantity", "length"))
    what = "Lemma 5.3, scheme %s" % row["scheme"] if rate else "Theorem %s" % row["theorem"]
    ax.set_title("%s, parameter %s: %s\n%s" % (what, row["parameter"], row["verdict"],
                                               wrap(row["class"], 70)),
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower left" if rate else "best")
    ax.grid(True, which="major", alpha=0.3)
    if own:
        fig.tight_layout()
        fig.savefig(path_stem + ".png", dpi=130)
        fig.savefig(path_stem + ".svg")
        plt.close(fig)


def figure52(row, path_stem, ax, own):
    """Theorem 5.2: lower side, upper side (or its absence), the simulator as a band, the paper."""
    lower, upper, sim = row["lower"], row["upper"], row["simulator"]
    loglinear = row["parameter"] != "eps"
    side(ax, lower["points"], LOWER,
         "lower side: T* (exact), slope %s %s" % (fmt(lower["exponent"]), interval(lower["ci"])),
         lower["exponent"], None, loglinear)
    if upper["points"]:
        side(ax, upper["points"], UPPER,
             "upper side: certified length (two-layer-length), slope %s %s"
             % (fmt(upper["exponent"]), interval(upper["ci"])),
             upper["exponent"], None, loglinear)
    else:
        ax.plot([], [], " ", label="upper side: none (no certified two-layer length)")
    if sim.get("points"):
        method = (sim.get("source") or "simulator").split()[0]
        side(ax, sim["points"], SIM,
             "simulator on found x (%s, neither bound), slope %s %s"
             % (method, fmt(sim.get("exponent")), interval(sim.get("ci"))),
             sim.get("exponent"), None, loglinear)
    everything = lower["points"] + upper["points"] + sim.get("points", [])
    values = [v for p in everything for v in (p["min"], p["max"]) if v and 0 < v < 1e290]
    anchor = (next((p for p in lower["points"] if not p["censored"]), None)
              or next((p for p in upper["points"] if not p["censored"]), None)
              or next((p for p in sim.get("points", []) if not p["censored"]), None))
    b = row["paper"]
    xs = sorted({p["regressor"] for p in everything})
    if b is not None and anchor is not None:
        x0, y0 = anchor["regressor"], anchor["median"]
        # In logs, clipped far above the axes (which stop at the data): a steep line leaves at
        # the top instead of overflowing.
        top = math.log(max(values) * 1e3) if values else 700.0
        if loglinear:
            ys = [math.exp(min(math.log(y0) + b * (x - x0), top)) for x in xs]
        else:
            ys = [math.exp(min(math.log(y0) + b * math.log(x / x0), top)) for x in xs]
        which = ("lower side's" if anchor in lower["points"] else
                 "upper side's" if anchor in upper["points"] else "simulator's")
        ax.plot(xs, ys, "--", color=PAPER, lw=1,
                label="paper slope %.3g (through the %s first point)" % (b, which))
    ax.set_yscale("log")
    if values:
        # The data's range, with room for the arrows; a steeper paper line leaves at the top.
        ax.set_ylim(min(values) / 4, max(values) * 8)
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    by_regressor = {p["regressor"]: p["value"] for p in everything}
    if not loglinear:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_locator(NullLocator())
    if row["parameter"] == "k":
        ax.set_xticklabels(["k=%d" % by_regressor[x] for x in xs])
        ax.set_xlabel("(k+1)^2, ticks labelled by k (log-linear: ln N = a + b (k+1)^2)")
    elif row["parameter"] == "eps":
        ax.set_xticklabels(["%.3g" % x for x in xs])
        ax.set_xlabel("1/eps (log-log: ln N = a + b ln(1/eps))")
    elif row["parameter"] == "attention-norm":
        ax.set_xticklabels(["%.3g" % x for x in xs])
        ax.set_xlabel("||M_1|| (log-linear: ln N = a + b ||M_1||)")
    else:
        ax.set_xticklabels(["%.3g" % x for x in xs])
        ax.set_xlabel("1/gamma_pos (log-linear: ln N = a + b/gamma_pos)")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=8))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("length")
    ax.set_title("Theorem 5.2, parameter %s: %s\n%s" % (row["parameter"], row["verdict"],
                                                       wrap(row["class"], 70)), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="major", alpha=0.3)
    if own:
        fig = ax.figure
        fig.tight_layout()
        fig.savefig(path_stem + ".png", dpi=130)
        fig.savefig(path_stem + ".svg")
        plt.close(fig)


def figure42(row, path_stem, ax, own):
    """Theorem 4.2: the average T* (lower side) with the paper's slope, no upper side; for the
    eps rows (own figure only) a second panel with the later expected gap against eps, beside
    lines of slope 1 (eps) and 1/2 (the paper's eps^(1/2)) through its first point."""
    lower = row["lower"]
    loglinear = row["parameter"] == "alpha0"
    conclusion = row.get("conclusion") or {}
    second = own and row["parameter"] == "eps" and conclusion.get("points")
    if second:
        plt.close(ax.figure)
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.6))
    side(ax, lower["points"], LOWER,
         "lower side: average T* (exact), slope %s %s" % (fmt(lower["exponent"]),
                                                          interval(lower["ci"])),
         lower["exponent"], None, loglinear)
    ax.plot([], [], " ", label="upper side: none (no certified average-case length)")
    anchor = next((p for p in lower["points"] if not p["censored"]), None)
    b = row["paper"]
    xs = sorted(p["regressor"] for p in lower["points"])
    values = [v for p in lower["points"] for v in (p["min"], p["max"]) if v and v > 0]
    if b is not None and anchor is not None:
        x0, y0 = anchor["regressor"], anchor["median"]
        top = math.log(max(values) * 1e3) if values else 700.0
        ys = [math.exp(min(math.log(y0) + b * ((x - x0) if loglinear else math.log(x / x0)), top))
              for x in xs]
        ax.plot(xs, ys, "--", color=PAPER, lw=1,
                label="paper slope %.3g (through the lower side's first point)" % b)
    ax.set_yscale("log")
    if values:
        ax.set_ylim(min(values) / 2, max(values) * 8)
    if not loglinear:
        ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(["%.3g" % x for x in xs])
    ax.set_xlabel(row["regressor"] + (" (log-linear: ln T* = a + b/alpha0)" if loglinear
                                      else " (log-log)"))
    ax.set_ylabel("average first disagreement T*")
    ax.set_title("Theorem 4.2, %s: %s\n%s" % (row["name"], row["verdict"], wrap(row["class"], 70)),
                 fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="major", alpha=0.3)
    if second:
        # A censored (capped) member's later gap is only a lower bound, >= the largest E_T
        # computed and > eps (its T* lies beyond the cap): open triangles at the larger of the
        # two, kept out of the medians (a point whose members are all censored has no median).
        eps, meds, bounds = [], [], []
        for p in conclusion["points"]:
            gaps = sorted(m["later_gap"] for m in p["members"] if not m.get("censored"))
            bounds += [(p["value"], max(m["later_gap"], p["value"]))
                       for m in p["members"] if m.get("censored")]
            if gaps:
                eps.append(p["value"])
                meds.append(gaps[len(gaps) // 2])
                ax2.plot([p["value"]] * len(gaps), gaps, ".", color=LOWER, alpha=0.5)
        ax2.plot(eps, meds, "o-", color=LOWER,
                 label="later expected gap (median of uncensored members), slope %s %s"
                 % (fmt(conclusion.get("exponent")), interval(conclusion.get("ci"))))
        if bounds:
            ax2.plot([b[0] for b in bounds], [b[1] for b in bounds], "^", mfc="none",
                     color=LOWER, label="capped member: later gap >= this (a bound)")
        if not eps:
            eps, meds = [b[0] for b in bounds], [b[1] for b in bounds]
        e0, g0 = eps[0], meds[0]
        ax2.plot(eps, [g0 * (e / e0) for e in eps], ":", color=SIM, label="slope 1 (O(eps))")
        ax2.plot(eps, [g0 * (e / e0) ** 0.5 for e in eps], "--", color=PAPER,
                 label="paper's O(eps^(1/2)), slope 1/2")
        ax2.plot(eps, eps, "-", color="black", lw=0.8, label="eps")
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("eps")
        ax2.set_ylabel("largest E||f - g|| after T* (measured)")
        ax2.set_title("the conclusion's form (these pairs' limit is kappa·%s)"
                      % ("eps^(1/2)" if "sqrt" in row["name"] else "eps"), fontsize=9)
        ax2.legend(fontsize=7, loc="best")
        ax2.grid(True, which="major", alpha=0.3)
    if own:
        fig = ax.figure
        fig.tight_layout()
        fig.savefig(path_stem + ".png", dpi=130)
        fig.savefig(path_stem + ".svg")
        plt.close(fig)


def fmt(value):
    return "n/a" if value is None else "%.2f" % value


def wrap(text, width):
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width:
            lines.append(line)
            line = w
        else:
            line = (line + " " + w).strip()
    lines.append(line)
    return "\n".join(lines)


def main(directory):
    with open(os.path.join(directory, "tightness.json")) as f:
        doc = json.load(f)
    rows = doc["rows"]
    for row in rows:
        figure(row, os.path.join(directory, "tightness_%s" % row.get("name", row["parameter"])))
    columns = min(3, len(rows))
    lines = (len(rows) + columns - 1) // columns
    fig, axes = plt.subplots(lines, columns, figsize=(6.4 * columns, 4.8 * lines), squeeze=False)
    for k, row in enumerate(rows):
        figure(row, None, axes[k // columns][k % columns])
    for k in range(len(rows), lines * columns):
        axes[k // columns][k % columns].axis("off")
    fig.suptitle("ltsim tightness (seed %d)" % doc["context"]["seed"])
    fig.tight_layout(rect=(0, 0, 1, 0.97))  # room for the suptitle above the first row's titles
    fig.savefig(os.path.join(directory, "tightness.png"), dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1])
