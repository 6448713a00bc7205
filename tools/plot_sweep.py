#!/usr/bin/python3
"""Draws DIR/sweep.png from DIR/sweep.json (`ltsim sweep --out-dir DIR`), with Debian's matplotlib.

Left: worst needed length against the fitted regressor, log-log (margin: log-linear in 1/gamma,
the shape of 2^(p/gamma)), with the fitted line and the paper's slope (Thm 4.1) through the first
point; the title names how each point's worst case was found (search or random pairs). Right:
simulation error at the fixed n.
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


def main(directory):
    with open(os.path.join(directory, "sweep.json")) as f:
        doc = json.load(f)
    opts, fit, points = doc["options"], doc["fit"], doc["points"]
    xs = [p["fit_x"] for p in points]
    needed = [p["needed_length"] for p in points]
    semilog = opts["parameter"] == "margin"  # ln n = a + b/gamma
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    draw = left.semilogy if semilog else left.loglog
    draw(xs, needed, "o", label="worst needed length")
    if fit["slope"] is not None:
        if semilog:
            fitted = [math.exp(fit["intercept"] + fit["slope"] * x) for x in xs]
        else:
            fitted = [math.exp(fit["intercept"]) * x ** fit["slope"] for x in xs]
        ci = ""
        if fit["lower"] is not None:
            ci = " [%.2f, %.2f]" % (fit["lower"], fit["upper"])
        draw(xs, fitted, "-", label="fit: slope %.2f%s" % (fit["slope"], ci))
    b = doc["paper_exponent"]
    if semilog:
        paper = [needed[0] * math.exp(b * (x - xs[0])) for x in xs]
    else:
        paper = [needed[0] * (x / xs[0]) ** b for x in xs]
    draw(xs, paper, "--", label="paper slope %.3g (Thm 4.1)" % b)
    left.set_xlabel(doc["fit_x"])
    left.set_ylabel("needed length n (worst of %d, %s)" % (opts["pairs"], opts.get("method", "random")))
    left.legend()
    sims = [p["sim_at_fixed"] for p in points]
    positive = [(p["value"], s) for p, s in zip(points, sims) if s is not None and s > 0]
    if positive:
        right.loglog([v for v, _ in positive], [s for _, s in positive], "o-")
    right.set_xlabel(opts["parameter"])
    right.set_ylabel("max sim at n = %d" % opts["fixed_n"])
    fig.suptitle("ltsim sweep %s (eps = %g, |x| = %d, seed %d)\n%s"
                 % (opts["parameter"], opts["eps"], opts["x_length"], doc["context"]["seed"],
                    doc.get("method", "")), fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "sweep.png"), dpi=100)


if __name__ == "__main__":
    main(sys.argv[1])
