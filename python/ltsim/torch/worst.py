"""A search over strings x of one length with both models held fixed: the worst long string.

    /usr/bin/python3 -m ltsim.torch.worst TARGET.json TRAINED.safetensors --length 1000000 \\
        --out worst.txt

maximises ‖f(x) − g(x)‖_∞ over strings of exactly --length tokens, written as runs (token,
count). For one-layer pairs it starts from `ltsim.profile` (docs/theory.md §14): the exact
threshold's witnesses at lengths up to --length and the string attaining the certified
supremum, each scaled to --length; these also give the certified upper bounds it prints
beside its answer (the largest gap at this length, when --length ≤ 10⁶, and over every
length). Then a seeded hill climb whose every round mutates the best string found so far
into --population candidates (a run's count ×¼…×4, a run inserted, removed or retokenised,
the last runs — what the local bias and the residues see — redrawn, two runs swapped) and
evaluates them all with ltsim's exact streaming evaluator through its Python bindings
(`ltsim.Model.eval` on the runs; any model file ltsim reads, .safetensors included). The
answer is a measurement: the gap on the string it prints, so a lower bound on the worst gap
at that length, not the maximum; the upper bounds are certified.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import ltsim


def run_text(runs):
    return " ".join(f"{t}^{c}" if c > 1 else str(t) for t, c in runs) + "\n"


def fix_length(runs, length):
    """Merges equal neighbours, drops empty runs and scales the counts so they sum to length
    (the largest run absorbs the rounding)."""
    runs = [(t, c) for t, c in runs if c > 0] or [(0, length)]
    total = sum(c for _, c in runs)
    runs = [(t, max(1, int(round(c * length / total)))) for t, c in runs]
    excess = sum(c for _, c in runs) - length
    while excess != 0:
        i = max(range(len(runs)), key=lambda j: runs[j][1])
        t, c = runs[i]
        take = min(excess, c - 1) if excess > 0 else excess
        runs[i] = (t, c - take)
        excess -= take
        if excess > 0 and runs[i][1] == 1:
            runs.pop(i)
            excess -= 1
    merged = []
    for t, c in runs:
        if merged and merged[-1][0] == t:
            merged[-1] = (t, merged[-1][1] + c)
        else:
            merged.append((t, c))
    return merged


def random_runs(rng, alphabet, length, runs):
    tokens = rng.integers(0, alphabet, size=runs)
    counts = rng.exponential(size=runs) + 1e-3
    return fix_length(list(zip(tokens.tolist(), (counts / counts.sum() * length).tolist())), length)


def mutate(rng, runs, alphabet, length):
    runs = list(runs)
    kind = rng.integers(0, 6)
    i = int(rng.integers(0, len(runs)))
    if kind == 0:  # a run's count ×¼ … ×4
        t, c = runs[i]
        runs[i] = (t, max(1, int(c * 2.0 ** rng.integers(-2, 3))))
    elif kind == 1:  # insert a run
        runs.insert(i, (int(rng.integers(0, alphabet)), int(rng.integers(1, max(2, length // 16)))))
    elif kind == 2 and len(runs) > 1:  # remove a run
        runs.pop(i)
    elif kind == 3:  # retokenise a run
        runs[i] = (int(rng.integers(0, alphabet)), runs[i][1])
    elif kind == 4:  # new last tokens (what the local bias and the residues see)
        runs = runs + [(int(rng.integers(0, alphabet)), 1) for _ in range(int(rng.integers(1, 9)))]
    elif len(runs) > 1:  # swap two runs
        j = int(rng.integers(0, len(runs)))
        runs[i], runs[j] = runs[j], runs[i]
    return fix_length(runs, length)


def evaluate(models, candidates):
    """Both models on every candidate (runs), exactly: the gaps ‖f(x) − g(x)‖_∞ and the
    outputs, one [candidates, k] array a model."""
    outputs = []
    for model in models:
        outputs.append(np.array([model.eval((np.array([t for t, _ in runs]),
                                             np.array([c for _, c in runs], dtype=np.uint64)))
                                 for runs in candidates]))
    return np.abs(outputs[0] - outputs[1]).max(axis=1), outputs


def runs_of(pair):
    """Runs (tokens, counts) as the bindings return them, as a list of (token, count)."""
    tokens, counts = pair
    return [(int(t), int(c)) for t, c in zip(tokens.tolist(), counts.tolist())]


def certified_seeds(models, length, threads):
    """ltsim.profile on the pair up to min(length, 10⁶): the strings it evaluated (each length's
    worst, the supremum's witness) scaled to `length`, and its certified bounds. Returns
    (seeds, bounds) where bounds is None with a reason when the pair has no profile (two
    layers, ln T bias scaling)."""
    grid_end = min(length, 10**6)
    try:
        p = ltsim.profile(models[0], models[1], train_length=0, max_length=grid_end,
                          points=min(8, grid_end), threads=threads)
    except ltsim.InputError as error:
        return [], {"reason": str(error)}
    seeds = [fix_length(runs_of(w), length) for w in p.witness_runs if w is not None]
    if p.sup_witness_runs is not None:
        seeds.append(fix_length(runs_of(p.sup_witness_runs), length))
    bounds = {"sup_gap_lower": p.sup_gap_lower, "sup_gap_upper": p.sup_gap_upper,
              "sup_status": p.sup_status}
    if grid_end == length:
        bounds["length_gap_lower"] = float(p.gap_lower[-1])
        bounds["length_gap_upper"] = float(p.gap_upper[-1])
    return seeds, bounds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ltsim.torch.worst", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("f", help="model f (e.g. the target)")
    parser.add_argument("g", help="model g (e.g. the trained .safetensors)")
    parser.add_argument("--length", type=float, default=1e6, help="|x| (default 10^6)")
    parser.add_argument("--rounds", type=int, default=30, help="hill-climb rounds (default 30)")
    parser.add_argument("--population", type=int, default=16, help="candidates a round")
    parser.add_argument("--seed", type=int, default=1, help="master seed (default 1, as the CLI)")
    parser.add_argument("--out", help="write the worst string as run-length text here")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--no-certify", action="store_true",
                        help="random starts only: no ltsim.profile seeds and no certified bounds")
    parser.add_argument("--threads", type=int, default=0,
                        help="ltsim.profile's threads (0: every core; results do not depend on it)")
    args = parser.parse_args(argv)
    length = int(args.length)
    rng = np.random.default_rng([args.seed, 0x3057])
    try:
        models = [ltsim.load_model(args.f), ltsim.load_model(args.g)]
    except ltsim.InputError as error:
        raise SystemExit(f"worst: {error}")
    alphabet = min(models[0].alphabet, models[1].alphabet)
    if not args.json:
        print(f"worst: seed {args.seed}, |x| = {length}, {args.rounds} rounds × "
              f"{args.population} candidates", flush=True)
    seeds, bounds = ([], {"reason": "--no-certify"}) if args.no_certify else \
        certified_seeds(models, length, args.threads)
    if not args.json and "reason" not in bounds:
        print(f"  ltsim.profile: {len(seeds)} certified-search strings as starts", flush=True)
    candidates = seeds + [random_runs(rng, alphabet, length, int(rng.integers(1, 64)))
                          for _ in range(max(0, args.population - len(seeds)))]
    gaps, outs = evaluate(models, candidates)
    best_i = int(np.argmax(gaps))
    best, best_gap = candidates[best_i], float(gaps[best_i])
    best_out = [outs[0][best_i], outs[1][best_i]]
    trajectory = [best_gap]
    for r in range(args.rounds):
        candidates = [mutate(rng, best, alphabet, length) for _ in range(args.population)]
        gaps, outs = evaluate(models, candidates)
        i = int(np.argmax(gaps))
        if gaps[i] > best_gap:
            best, best_gap = candidates[i], float(gaps[i])
            best_out = [outs[0][i], outs[1][i]]
        trajectory.append(best_gap)
        if not args.json and (r % 10 == 9 or r + 1 == args.rounds):
            print(f"  round {r + 1}: worst gap so far {best_gap:.6g} ({len(best)} runs)",
                  flush=True)
    if args.out:
        with open(args.out, "w") as out:
            out.write(f"# worst string found: gap {best_gap!r}, seed {args.seed}\n")
            out.write(run_text(best))
    result = {"seed": args.seed, "length": length, "gap": best_gap,
              "f_x": best_out[0].tolist(), "g_x": best_out[1].tolist(), "runs": best,
              "trajectory": trajectory, "what": "measured gap on this string (a lower bound on "
              "the worst gap at this length)",
              "starts_from_certified_search": len(seeds),
              "certified": bounds}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"worst: ‖f(x) − g(x)‖_∞ = {best_gap:.6g} on a string of {length} tokens in "
              f"{len(best)} runs (a lower bound on the worst gap at this length)"
              + (f", written to {args.out}" if args.out else ""))
        if "reason" in bounds:
            print(f"  no certified upper bound: {bounds['reason']}")
        else:
            if "length_gap_upper" in bounds:
                print(f"  certified: the worst gap at length {length} is at most "
                      f"{bounds['length_gap_upper']:.6g} (ltsim.profile)")
            print(f"  certified: the gap at every length is at most {bounds['sup_gap_upper']:.6g}"
                  f" (ltsim.profile; a string attains {bounds['sup_gap_lower']:.6g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
