"""Benchmark: the MLP's CPU time per fit against a plain PyTorch loop of the same network
(issue 67, item 4: ≤ 1.1×).

    python benchmarks/bench_mlp_plain.py [--rounds 5] [--epochs 5]

Both sides train seed 004's network (``modelvar.models.mlp``: Linear, BatchNorm, LeakyReLU,
two residual blocks with dropout) on the runs of vehicle's first repeat (the fit job's
preprocessing, 634 training rows, batches of 64), with the default hyperparameters, the same
epochs and batch bounds, and predict the repeat's test rows:

- *modelvar*: ``mlp.train`` + ``mlp.predict_proba`` of one run (the CPU fit path: one model at a
  time, its own generator for weights, batch order and dropout masks);
- *plain*: ``torch.nn`` modules, ``torch.optim.AdamW`` and ``CosineAnnealingLR`` stepped per
  epoch, ``F.dropout`` from the global generator — what a user would write.

One intra-op thread on both sides. Each round times the ten runs on one side, then on the
other (CPU time of this process; alternating which goes first); printed: each round's seconds
per fit and ratio, then the ratio's min and median.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mlp import runs_of_vehicle

from modelvar.models import mlp
from modelvar.models.registry import spec


def plain_network(d: int, w1: int, w2: int, c: int, p: float):
    from torch import nn

    class Residual(nn.Module):
        def __init__(self, w: int):
            super().__init__()
            self.f = nn.Sequential(nn.Linear(w, w), nn.BatchNorm1d(w), nn.LeakyReLU(0.01),
                                   nn.Dropout(p), nn.Linear(w, w), nn.BatchNorm1d(w),
                                   nn.LeakyReLU(0.01), nn.Dropout(p))

        def forward(self, x):
            return x + self.f(x)

    return nn.Sequential(nn.Linear(d, w1, bias=False), nn.BatchNorm1d(w1), nn.LeakyReLU(0.01),
                         Residual(w1), nn.Linear(w1, w2), nn.BatchNorm1d(w2),
                         nn.LeakyReLU(0.01), Residual(w2), nn.Linear(w2, c))


def plain_fit(X, y, Xt, c: int, h: dict, seed: int, epochs: int):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    net = plain_network(X.shape[1], h["width1"], h["width2"], c, h["dropout"])
    opt = torch.optim.AdamW(net.parameters(), lr=h["lr"], weight_decay=h["weight_decay"])
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    Xs, ys = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.int64)
    bounds = mlp.batch_bounds(len(Xs), mlp.batch_size(len(Xs)))
    net.train()
    for _ in range(epochs):
        order = torch.randperm(len(Xs))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            rows = order[lo:hi]
            loss = F.cross_entropy(net(Xs[rows]), ys[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
        schedule.step()
    net.eval()
    with torch.no_grad():
        return torch.softmax(net(torch.as_tensor(Xt)), dim=1).numpy()


def modelvar_fit(X, y, Xt, c: int, h: dict, seed: int, epochs: int):
    models = mlp.train([X], [y], n_classes=c, hparams=[h], seeds=[seed], epochs=epochs)
    return mlp.predict_proba(models, [Xt])[0]


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5,
                        help="per fit (a fit's time is linear in them; the study trains 20)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y, Xt, c = runs_of_vehicle()
    h = spec("mlp").defaults()
    sides = {"modelvar": modelvar_fit, "plain": plain_fit}
    print(f"vehicle: {len(y[0])} training rows, {X[0].shape[1]} columns, {c} classes; widths "
          f"{h['width1']}/{h['width2']}, dropout {h['dropout']}, {args.epochs} epochs, "
          f"{len(X)} fits per side per round, torch {torch.__version__}", flush=True)
    for fit in sides.values():  # untimed: first calls load kernels
        fit(X[0], y[0], Xt[0], c, h, 0, 1)
    ratios = []
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        seconds = {}
        for name in order:
            t0 = time.process_time()
            for j in range(len(X)):
                sides[name](X[j], y[j], Xt[j], c, h, j, args.epochs)
            seconds[name] = (time.process_time() - t0) / len(X)
        ratios.append(seconds["modelvar"] / seconds["plain"])
        print(f"round {r}: modelvar {seconds['modelvar']:.3f} s per fit, plain "
              f"{seconds['plain']:.3f} s: {ratios[-1]:.3f}x", flush=True)
    print(f"modelvar / plain: min {min(ratios):.3f}, median {statistics.median(ratios):.3f} "
          f"(goal ≤ 1.1)")


if __name__ == "__main__":
    main()
