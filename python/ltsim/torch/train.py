"""Trains a limit transformer on one of the paper's tasks at training length n (CPU, seeded).

    /usr/bin/python3 -m ltsim.torch.train simple-task --omega 4 --n 32 --out runs/simple
    /usr/bin/python3 -m ltsim.torch.train modp-task --p 3 --n 32 --out runs/modp
    /usr/bin/python3 -m ltsim.torch.train kgram --alphabet 2 --k 2 --n 32 --out runs/kgram

writes OUT/trained.safetensors (F32, docs/python.md), OUT/trained.json (the same model as an
ltsim model file), OUT/loss.csv and OUT/loss.png (the training loss curve) and OUT/train.json
(options, final loss, seconds). Every batch of strings is drawn from the seed, and torch runs
on one thread, so a run is a pure function of its options.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

from . import files
from .model import Config, LayerConfig, LimitTransformer
from .tasks import Task


def default_config(task: Task) -> Config:
    """The architecture trained for each task (small: seconds on one core)."""
    meta = {"task": task.name, "trained": True}
    if task.name == "simple-task":
        return Config(alphabet=2, width=3, layers=[LayerConfig(heads=1, mlp=16)], outputs=1,
                      name=f"trained simple-task omega={task.omega:g}", meta=meta)
    if task.name == "modp-task":
        return Config(alphabet=2, width=task.p + 2, period=task.p,
                      layers=[LayerConfig(heads=1, mlp=8)], outputs=1,
                      name=f"trained modp-task p={task.p} k={task.residue}", meta=meta)
    s, k = task.alphabet, task.k
    return Config(alphabet=s, width=(k + 1) * s + 2, locality=k,
                  layers=[LayerConfig(heads=k, bias_scaling="log"), LayerConfig(heads=1)],
                  outputs=s, name=f"trained kgram S={s} k={k}", meta=meta, copy_bias_init=2.0)


def default_lr(task: Task) -> float:
    return 0.05 if task.name == "kgram" else 0.02


def train(task: Task, n: int, steps: int = 300, batch: int = 64, lr=None,
          seed: int = 1, log=None):
    """(model, losses): Adam on the mean squared error against the task's target, on strings
    of lengths drawn uniformly from [1, n] (one length a batch), learning rate decayed as a
    cosine to 0. `log(step, loss)` is called every 50 steps."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = np.random.default_rng([seed, n, 0x5EED])
    config = default_config(task)
    config.meta.update(n=n, seed=seed, steps=steps, parameter=task.label())
    model = LimitTransformer(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr or default_lr(task))
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, steps))
    losses = []
    for step in range(steps):
        length = int(rng.integers(1, n + 1))
        x = task.strings(rng, batch, length)
        y = torch.from_numpy(task.target(x)).float()
        loss = ((model(torch.from_numpy(x)) - y) ** 2).sum(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss))
        if log and (step % 50 == 0 or step + 1 == steps):
            log(step, losses[-1])
    return model, losses


def plot_losses(losses, path: str, title: str) -> bool:
    """Training loss against the step (log scale, with a 20-step running mean)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.semilogy(losses, color="0.7", lw=0.8, label="batch loss")
    window = min(20, len(losses))
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    ax.semilogy(np.arange(window - 1, len(losses)), smooth, color="C0", label="20-step mean")
    ax.set_xlabel("step")
    ax.set_ylabel("squared error")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def task_from_args(args) -> Task:
    return Task(args.task, omega=args.omega, p=args.p, residue=args.residue,
                alphabet=args.alphabet, k=args.k)


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", choices=["simple-task", "modp-task", "kgram"])
    parser.add_argument("--omega", type=float, default=4.0, help="SimpleTask ω (default 4)")
    parser.add_argument("--p", type=int, default=3, help="ModPTask period p (default 3)")
    parser.add_argument("--residue", type=int, default=0, help="ModPTask residue k (default 0)")
    parser.add_argument("--alphabet", type=int, default=2, help="k-gram alphabet S (default 2)")
    parser.add_argument("--k", type=int, default=2, help="k-gram context length k (default 2)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ltsim.torch.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_task_arguments(parser)
    parser.add_argument("--n", type=int, default=32, help="training length n (default 32)")
    parser.add_argument("--steps", type=int, default=300, help="Adam steps (default 300)")
    parser.add_argument("--batch", type=int, default=64, help="strings a step (default 64)")
    parser.add_argument("--lr", type=float, default=None,
                        help="learning rate (default 0.05 for kgram, else 0.02)")
    parser.add_argument("--seed", type=int, default=1, help="master seed (default 1, as the CLI)")
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args(argv)
    task = task_from_args(args)
    print(f"train: {task.name} {task.label()} n={args.n} steps={args.steps} seed={args.seed}",
          flush=True)
    start = time.perf_counter()
    model, losses = train(task, args.n, args.steps, args.batch, args.lr, args.seed,
                          log=lambda s, l: print(f"  step {s:5d}  loss {l:.3e}", flush=True))
    seconds = time.perf_counter() - start
    os.makedirs(args.out, exist_ok=True)
    files.save_safetensors(model, os.path.join(args.out, "trained.safetensors"))
    files.save_json(model, os.path.join(args.out, "trained.json"))
    with open(os.path.join(args.out, "loss.csv"), "w") as out:
        out.write("step,loss\n")
        out.writelines(f"{i},{l!r}\n" for i, l in enumerate(losses))
    plotted = plot_losses(losses, os.path.join(args.out, "loss.png"),
                          f"{task.name} {task.label()}, n = {args.n}, seed {args.seed}")
    summary = {"task": task.name, "parameter": task.label(), "n": args.n, "steps": args.steps,
               "batch": args.batch, "lr": args.lr or default_lr(task), "seed": args.seed,
               "final_loss_mean_last_20": float(np.mean(losses[-20:])), "seconds": seconds,
               "construct": task.construct_args()}
    with open(os.path.join(args.out, "train.json"), "w") as out:
        json.dump(summary, out, indent=1)
    print(f"train: {seconds:.1f} s, final loss (mean of last 20 steps) "
          f"{summary['final_loss_mean_last_20']:.3e}; wrote {args.out}/trained.safetensors"
          + (", loss.png" if plotted else " (no matplotlib: no loss.png)"))
    print(f"target: ltsim construct {' '.join(task.construct_args())} --out {args.out}/target.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
