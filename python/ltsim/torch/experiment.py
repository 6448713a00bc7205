"""The paper's Section 6 experiment on trained models, evaluated exactly by ltsim.

    /usr/bin/python3 -m ltsim.torch.experiment --out runs/exp

For each task and complexity parameter (SimpleTask ω; ModPTask p; k-gram S with k = 2 and k
with S = 2) and each training length n and seed: train (ltsim.torch.train), export to
safetensors, and measure the test loss E‖g(x) − f*(x)‖² against the task's target f* (the
model `ltsim construct` writes) with ltsim's exact evaluator (`ltsim.Model.eval`, the Python
bindings) at test lengths 2^j from n up to
--max-length (default 2^17 > 10^5), on --samples seeded strings a length (the same strings for
every n and seed). Then PyTorch's forward and ltsim's are timed on one model per task at the
largest length PyTorch finishes within --torch-budget seconds.

For every one-layer model it also computes the certified length profile against the task's
constructed model (ltsim.profile, docs/theory.md §14; up to --profile-length): ε_train(n), the
supremum of the gap over every length and their ratio, each a certified bracket
(ltsim.torch.profiles).

Writes OUT/experiment.json (its "profiles" part holds the profiles), OUT/experiment.csv (task,
parameter, n, test length, loss mean, std, min, max over seeds), OUT/loss_vs_length.png,
OUT/plateau_vs_n.png, OUT/training.png, OUT/ratio_vs_n.png (the certified ratio against n) and
prints the tables and the findings (docs/python.md "Experiment").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import time

import numpy as np

import ltsim

from . import profiles
from .tasks import Task

# A difference of plateaus smaller than this many seed standard deviations is not a trend.
SPREAD_FACTOR = 1.0
PLATEAU_SLOPE = 0.1


def parse_list(text, kind):
    return [kind(v) for v in text.split(",") if v]


def series_of(args):
    """[(series, parameter name, [(value, Task)])] of the experiment."""
    return [
        ("simple-task", "omega", [(w, Task("simple-task", omega=w)) for w in args.omegas]),
        ("modp-task", "p", [(p, Task("modp-task", p=p)) for p in args.primes]),
        ("kgram-S", "S (k = 2)", [(s, Task("kgram", alphabet=s, k=2)) for s in args.alphabets]),
        ("kgram-k", f"k (S = {args.kgram_alphabet})",
         [(k, Task("kgram", alphabet=args.kgram_alphabet, k=k)) for k in args.ks]),
    ]


def stream_seed(master, *names):
    """A seed that is a pure function of the master seed and the item's names."""
    text = "/".join(str(n) for n in names)
    h = 1469598103934665603
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) % (1 << 64)
    return [master, h]


def _train_job(job):
    import torch
    from . import files
    from .train import train
    torch.set_num_threads(1)
    task, n, seed, steps, path = job
    start = time.perf_counter()
    model, losses = train(task, n, steps=steps, seed=seed)
    files.save_safetensors(model, path)
    return path, losses, time.perf_counter() - start


def _eval_job(job):
    """A model (a path or an ltsim.Model) on every string file of a listing: [strings, k]."""
    model, listing = job
    if not isinstance(model, ltsim.Model):
        model = ltsim.load_model(model)
    with open(listing) as lines:
        return model.eval_many([line.strip() for line in lines if line.strip()])


def write_strings(task, key, lengths, samples, master, directory):
    """Test strings as .u8 files and one listing file of their paths: `samples` seeded
    strings of the largest length, and their prefixes at every other length (so the loss
    curve follows the same strings as T grows). Returns (listing, [(length, index)] in listing
    order, exact targets in the same order)."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(stream_seed(master, "test", key))
    longest = task.strings(rng, samples, max(lengths))
    paths, order, exact = [], [], []
    for length in lengths:
        x = longest[:, :length]
        exact.append(task.target(x))
        for i in range(samples):
            path = os.path.join(directory, f"L{length}_{i}.u8")
            x[i].astype(np.uint8).tofile(path)
            paths.append(path)
            order.append((length, i))
    listing = os.path.join(directory, "batch.txt")
    with open(listing, "w") as out:
        out.write("\n".join(paths) + "\n")
    return listing, order, np.concatenate(exact)


def time_forward(path, task, budget, max_log2, directory):
    """PyTorch's forward (float32, no grad, one string) at T = 2^10, 2^11, … while a forward
    takes ≤ budget seconds (stopping early when the next doubling would exceed it, at the
    growth rate last measured), and ltsim's wall time (ltsim.load_model and Model.eval on a
    .u8 file, model read and string file included) at the largest such T and at 10^6."""
    import torch
    from . import files
    torch.set_num_threads(1)
    model = files.load(path, torch.float32)
    rng = np.random.default_rng(7)
    best, previous = None, None
    with torch.no_grad():
        for log2 in range(10, max_log2 + 1):
            length = 1 << log2
            x = torch.from_numpy(task.strings(rng, 1, length)) if task.name != "kgram" else \
                torch.randint(0, task.alphabet, (1, length), generator=torch.Generator().manual_seed(7))
            start = time.perf_counter()
            model(x)
            seconds = time.perf_counter() - start
            if seconds > budget:
                break
            best = (length, seconds, x[0].numpy())
            growth = seconds / previous if previous else 2.0
            previous = seconds
            if seconds * max(growth, 2.0) > budget:
                break
    def ltsim_time(x):
        file = os.path.join(directory, "timing.u8")
        x.astype(np.uint8).tofile(file)
        start = time.perf_counter()
        ltsim.load_model(path).eval(file)
        return time.perf_counter() - start
    length, torch_seconds, x = best
    big = np.random.default_rng(8).integers(0, task.symbols, size=10 ** 6)
    return {"model": os.path.basename(path), "length": length, "torch_seconds": torch_seconds,
            "ltsim_seconds": ltsim_time(x), "ltsim_seconds_at_1e6": ltsim_time(big),
            "torch_budget": budget}


def trend(values, spreads):
    """'rises', 'falls' (every step in one direction by more than the larger seed spread of
    its two points), 'flat/inconclusive' otherwise, with the steps."""
    if len(values) < 2:
        return "n/a (one point)"
    steps = np.diff(values)
    margins = [SPREAD_FACTOR * max(a, b) for a, b in zip(spreads, spreads[1:])]
    if all(s > m for s, m in zip(steps, margins)):
        return "rises"
    if all(-s > m for s, m in zip(steps, margins)):
        return "falls"
    if all(s >= 0 for s in steps):
        return "rises (within spread)"
    if all(s <= 0 for s in steps):
        return "falls (within spread)"
    return "mixed"


def findings(rows, series, ns, lengths_top):
    """The paper's qualitative findings, checked on the plateaus (loss at the two largest test
    lengths): (1) the loss has reached a plateau, (2) it falls with n, (3) it rises with the
    complexity parameter."""
    out = []
    index = {(r["series"], r["value"], r["n"], r["test_length"]): r for r in rows}
    top, below = lengths_top
    plateau = {}
    for name, _, items in series:
        for value, _ in items:
            for n in ns:
                a, b = index.get((name, value, n, top)), index.get((name, value, n, below))
                if a and b:
                    plateau[(name, value, n)] = (a["loss_mean"], a["loss_std"], b["loss_mean"])
    # Plateau: the fitted slope of log10(loss) against log10(T) over T ≥ 2^10 is at most
    # PLATEAU_SLOPE in size (the loss changes by less than 26% a decade of T).
    slopes = {}
    for (name, value, n) in plateau:
        pts = sorted((r["test_length"], r["loss_mean"]) for r in rows if r["series"] == name
                     and r["value"] == value and r["n"] == n and r["test_length"] >= 1024)
        if len(pts) >= 3 and all(m > 0 for _, m in pts):
            L, m = map(np.array, zip(*pts))
            slopes[f"{name} {value} n={n}"] = float(np.polyfit(np.log10(L), np.log10(m), 1)[0])
    flat = [abs(v) <= PLATEAU_SLOPE for v in slopes.values()]
    out.append({"finding": "the loss reaches a plateau as the test length grows",
                "check": f"|slope of log10 loss vs log10 T over 2^10 ≤ T ≤ {top}| ≤ {PLATEAU_SLOPE}",
                "holds_for": f"{sum(flat)} of {len(flat)} (task, parameter, n)",
                "slopes": slopes})
    for name, pname, items in series:
        for value, _ in items:
            vals = [plateau[(name, value, n)] for n in ns if (name, value, n) in plateau]
            out.append({"finding": f"{name} {pname}={value}: plateau vs n {ns}",
                        "verdict": trend([v[0] for v in vals], [v[1] for v in vals]),
                        "plateaus": [v[0] for v in vals], "spread": [v[1] for v in vals]})
        for n in ns:
            vals = [plateau[(name, v, n)] for v, _ in items if (name, v, n) in plateau]
            out.append({"finding": f"{name} n={n}: plateau vs {pname} {[v for v, _ in items]}",
                        "verdict": trend([v[0] for v in vals], [v[1] for v in vals]),
                        "plateaus": [v[0] for v in vals], "spread": [v[1] for v in vals]})
    return out


def plot(rows, series, ns, out, curves):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("experiment: no matplotlib, no figures")
        return
    width = max(len(items) for _, _, items in series)
    fig, axes = plt.subplots(len(series), width, figsize=(3.3 * width, 2.6 * len(series)),
                             squeeze=False)
    for r, (name, pname, items) in enumerate(series):
        for c in range(width):
            ax = axes[r][c]
            if c >= len(items):
                ax.axis("off")
                continue
            value = items[c][0]
            for i, n in enumerate(ns):
                pts = sorted((x["test_length"], x["loss_mean"], x["loss_min"], x["loss_max"])
                             for x in rows if x["series"] == name and x["value"] == value and x["n"] == n)
                if not pts:
                    continue
                L, m, lo, hi = map(np.array, zip(*pts))
                ax.errorbar(L, m, yerr=[m - lo, hi - m], marker="o", ms=3, lw=1, capsize=2,
                            color=f"C{i}", label=f"n = {n}")
                ax.axvline(n, color=f"C{i}", lw=0.5, ls=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{name}: {pname.split()[0]} = {value}", fontsize=9)
            ax.set_xlabel("test length T", fontsize=8)
            ax.set_ylabel("test loss (mean, min–max over seeds)", fontsize=7)
            ax.tick_params(labelsize=7)
            if c == 0:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "loss_vs_length.png"), dpi=100)
    plt.close(fig)

    top = max(x["test_length"] for x in rows)
    fig, axes = plt.subplots(1, len(series), figsize=(3.4 * len(series), 3), squeeze=False)
    for c, (name, pname, items) in enumerate(series):
        ax = axes[0][c]
        for i, (value, _) in enumerate(items):
            pts = sorted((x["n"], x["loss_mean"], x["loss_min"], x["loss_max"]) for x in rows
                         if x["series"] == name and x["value"] == value and x["test_length"] == top)
            if not pts:
                continue
            n, m, lo, hi = map(np.array, zip(*pts))
            ax.errorbar(n, m, yerr=[m - lo, hi - m], marker="o", ms=3, capsize=2, color=f"C{i}",
                        label=f"{pname.split()[0]} = {value}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{name}: plateau (T = {top})", fontsize=9)
        ax.set_xlabel("training length n", fontsize=8)
        ax.set_ylabel("test loss at T (min–max over seeds)", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "plateau_vs_n.png"), dpi=100)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(series), figsize=(3.4 * len(series), 2.8), squeeze=False)
    for c, (name, pname, items) in enumerate(series):
        ax = axes[0][c]
        for i, (value, _) in enumerate(items):
            for n in ns:
                losses = curves.get((name, value, n))
                if losses is None:
                    continue
                window = min(20, len(losses))
                smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
                ax.semilogy(smooth, color=f"C{i}", lw=0.8, alpha=0.4 + 0.6 * (n == max(ns)),
                            label=f"{pname.split()[0]} = {value}" if n == max(ns) else None)
        ax.set_title(f"{name}: training loss (seed 0; n = {max(ns)} dark)", fontsize=8)
        ax.set_xlabel("training step", fontsize=8)
        ax.set_ylabel("training loss (mean of the last 20 steps)", fontsize=7)
        ax.tick_params(which="both", labelsize=7)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "training.png"), dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ltsim.torch.experiment", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=["exact", "construct"], default="exact",
                        help="f* of the loss: the exact task function (default) or ltsim construct's model")
    parser.add_argument("--out", default="runs/experiment", help="output directory")
    parser.add_argument("--omegas", type=lambda s: parse_list(s, float), default=[1.0, 4.0, 8.0])
    parser.add_argument("--primes", type=lambda s: parse_list(s, int), default=[2, 3, 5])
    parser.add_argument("--alphabets", type=lambda s: parse_list(s, int), default=[2, 3, 4],
                        help="k-gram S values (k = 2)")
    parser.add_argument("--ks", type=lambda s: parse_list(s, int), default=[1, 2, 3],
                        help="k-gram k values (S = --kgram-alphabet)")
    parser.add_argument("--kgram-alphabet", type=int, default=2)
    parser.add_argument("--ns", type=lambda s: parse_list(s, int), default=[8, 16, 32],
                        help="training lengths n")
    parser.add_argument("--seeds", type=int, default=2, help="training seeds per point")
    parser.add_argument("--steps", type=int, default=250, help="Adam steps per model")
    parser.add_argument("--samples", type=int, default=16, help="test strings per length")
    parser.add_argument("--max-length", type=int, default=1 << 17, help="largest test length")
    parser.add_argument("--torch-budget", type=float, default=60.0,
                        help="seconds a timed PyTorch forward may take (0 = no timing)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=1, help="master seed (default 1, as the CLI)")
    parser.add_argument("--profile-length", type=int, default=1 << 17,
                        help="certified profiles (ltsim.profile) of the one-layer models up to "
                             "this length, figure ratio_vs_n.png (0 = none)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"experiment: master seed {args.seed}, n = {args.ns}, {args.seeds} seeds, "
          f"{args.steps} steps, {args.samples} strings a length up to {args.max_length}", flush=True)
    out = os.path.abspath(args.out)
    models_dir, strings_dir = os.path.join(out, "models"), os.path.join(out, "strings")
    os.makedirs(models_dir, exist_ok=True)
    series = series_of(args)
    tasks = {}
    for _, _, items in series:
        for _, task in items:
            tasks[task.name + "_" + task.label()] = task
    jobs = []
    for key, task in tasks.items():
        for n in args.ns:
            for s in range(args.seeds):
                seed = stream_seed(args.seed, key, n, s)[1] % (1 << 31)
                jobs.append((task, n, seed, args.steps,
                             os.path.join(models_dir, f"{key}_n{n}_seed{s}.safetensors")))
    context = multiprocessing.get_context("fork")
    curves = {}
    with context.Pool(args.jobs) as pool:
        trained = {}
        for i, (path, losses, seconds) in enumerate(pool.imap(_train_job, jobs)):
            trained[path] = (losses, seconds)
            print(f"  trained {i + 1}/{len(jobs)} {os.path.basename(path)}: {seconds:.1f} s, "
                  f"final loss {np.mean(losses[-20:]):.3e}  [{time.perf_counter() - start:.0f} s]",
                  flush=True)
        lengths = [1 << j for j in range(3, 64) if (1 << j) <= args.max_length]
        if lengths[-1] != args.max_length:
            lengths.append(args.max_length)
        listings, targets = {}, {}
        for key, task in tasks.items():
            listing, order, exact = write_strings(task, key, lengths, args.samples, args.seed,
                                                  os.path.join(strings_dir, key))
            target = os.path.join(models_dir, f"{key}_target.json")
            task.target_model().save(target)
            listings[key] = (listing, order)
            targets[key] = (_eval_job((target, listing)), exact)
        outputs = pool.map(_eval_job, [(job[4], listings[job[4].split("/")[-1].rsplit(
            "_n", 1)[0]][0]) for job in jobs])
    print(f"  evaluated {len(jobs)} models on {len(lengths)} lengths × {args.samples} strings "
          f"[{time.perf_counter() - start:.0f} s]", flush=True)
    per_model = {}
    for job, got in zip(jobs, outputs):
        task, n, _, _, path = job
        key = os.path.basename(path).rsplit("_n", 1)[0]
        constructed, exact = targets[key]
        _, order = listings[key]
        reference, other = (exact, constructed) if args.target == "exact" else (constructed, exact)
        err = ((got - reference) ** 2).sum(axis=1)
        err_constructed = ((got - other) ** 2).sum(axis=1)
        for length in lengths:
            if length < n:
                continue
            sel = [i for i, (L, _) in enumerate(order) if L == length]
            per_model.setdefault((key, n, length), []).append(
                (float(err[sel].mean()), float(err_constructed[sel].mean())))
        if path.endswith("seed0.safetensors"):
            curves[(key, n)] = trained[path][0]
    # The constructed target's own error against the exact one, per task: largest over the
    # test strings, and at the largest test length.
    target_error = {}
    for key in tasks:
        _, order = listings[key]
        gap = np.abs(targets[key][0] - targets[key][1]).max(axis=1)
        top = [i for i, (L, _) in enumerate(order) if L == lengths[-1]]
        target_error[key] = {"max": float(gap.max()), "max_at_largest_length": float(gap[top].max())}
    rows = []
    for name, pname, items in series:
        for value, task in items:
            key = task.name + "_" + task.label()
            for n in args.ns:
                for length in lengths:
                    pairs = per_model.get((key, n, length))
                    if not pairs:
                        continue
                    losses = [a for a, _ in pairs]
                    constructed = [b for _, b in pairs]
                    rows.append({"series": name, "task": task.name, "parameter": pname,
                                 "value": value, "n": n, "test_length": length,
                                 "loss_mean": float(np.mean(losses)),
                                 "loss_std": float(np.std(losses)),
                                 "loss_min": float(np.min(losses)),
                                 "loss_max": float(np.max(losses)), "seeds": len(losses),
                                 "losses": losses,
                                 "loss_vs_other_target_mean": float(np.mean(constructed))})
    curves_by_series = {}
    for name, _, items in series:
        for value, task in items:
            key = task.name + "_" + task.label()
            for n in args.ns:
                if (key, n) in curves:
                    curves_by_series[(name, value, n)] = curves[(key, n)]
    timing = []
    if args.torch_budget > 0:
        for name, _, items in series[:3]:
            value, task = items[-1]
            key = task.name + "_" + task.label()
            path = os.path.join(models_dir, f"{key}_n{max(args.ns)}_seed0.safetensors")
            # One-layer models are linear in T in this forward (the last layer is read out at
            # position T only); two-layer ones are quadratic in their first layer.
            max_log2 = 24 if task.name != "kgram" else 20
            t = time_forward(path, task, args.torch_budget, max_log2, strings_dir)
            t["task"] = key
            timing.append(t)
            print(f"  timing {key}: PyTorch {t['torch_seconds']:.2f} s vs ltsim "
                  f"{t['ltsim_seconds']:.3f} s at T = {t['length']}; ltsim at 10^6: "
                  f"{t['ltsim_seconds_at_1e6']:.3f} s", flush=True)
    found = findings(rows, series, args.ns, (lengths[-1], lengths[-2]))
    doc = {"context": {"command": "python3 -m ltsim.torch.experiment", "seed": args.seed,
                       "options": {k: v for k, v in vars(args).items()},
                       "loss": "mean over test strings of ‖g(x) − f*(x)‖², f* the exact task target "
                               "(--target exact) or ltsim construct's model (--target construct); loss_vs_other_target_mean: the other one",
                       "measurement": "on particular seeded strings; spread over training seeds",
                       "seconds": None},
           "target_max_error_vs_exact": target_error, "rows": rows, "findings": found,
           "timing": timing,
           "training_seconds": {os.path.basename(p): s for p, (_, s) in trained.items()}}
    with open(os.path.join(out, "experiment.csv"), "w") as csv:
        csv.write("task,parameter,value,n,test_length,loss_mean,loss_std,loss_min,loss_max,seeds\n")
        for r in rows:
            csv.write(f"{r['task']},{r['parameter']},{r['value']},{r['n']},{r['test_length']},"
                      f"{r['loss_mean']!r},{r['loss_std']!r},{r['loss_min']!r},{r['loss_max']!r},"
                      f"{r['seeds']}\n")
    plot(rows, series, args.ns, out, curves_by_series)
    profile_rows = []
    if args.profile_length > 0:
        # Certified profiles (docs/theory.md §14) of every one-layer model against the model
        # `ltsim construct` writes for its task; two-layer rows say why they have none.
        for task, n, _, _, path in jobs:
            key = os.path.basename(path).rsplit("_n", 1)[0]
            row = {"task_key": key, "task": task.name, "n": n,
                   "seed": int(os.path.basename(path).rsplit("seed", 1)[1].split(".")[0]),
                   "model": os.path.basename(path)}
            row.update(profiles.profile_row(os.path.join(models_dir, f"{key}_target.json"), path,
                                            n, args.profile_length, threads=args.jobs))
            profile_rows.append(row)
        print(f"  profiled {sum(r['profile'] is not None for r in profile_rows)} one-layer "
              f"models [{time.perf_counter() - start:.0f} s]", flush=True)
        profiles.plot_ratio(profile_rows, out)
    doc["profiles"] = {"what": "certified brackets from ltsim.profile: eps_train(n) = the largest "
                               "gap over lengths <= n, the supremum over every length, their "
                               "ratio; gap = max |g(x) - f(x)| against ltsim construct's target",
                       "max_length": args.profile_length, "rows": profile_rows}
    shutil.rmtree(strings_dir, ignore_errors=True)
    print(f"\n{'series':12} {'param':>6} {'n':>4} " + " ".join(f"{'T=' + str(L):>10}" for L in lengths[::2]))
    for name, _, items in series:
        for value, task in items:
            for n in args.ns:
                cells = []
                for L in lengths[::2]:
                    r = next((x for x in rows if x["series"] == name and x["value"] == value
                              and x["n"] == n and x["test_length"] == L), None)
                    cells.append(f"{r['loss_mean']:10.2e}" if r else f"{'':>10}")
                print(f"{name:12} {value:>6g} {n:>4} " + " ".join(cells))
    if profile_rows:
        profiles.print_table(profile_rows)
    print("\nfindings (plateau = loss at the largest test length; spread = std over seeds):")
    for f in found:
        print(f"  {f['finding']}: {f.get('verdict', f.get('holds_for'))}")
    doc["context"]["seconds"] = time.perf_counter() - start
    with open(os.path.join(out, "experiment.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nexperiment: {doc['context']['seconds']:.0f} s; wrote {out}/experiment.json, "
          "experiment.csv, loss_vs_length.png, plateau_vs_n.png, training.png"
          + (", ratio_vs_n.png" if any(r["profile"] for r in profile_rows) else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
