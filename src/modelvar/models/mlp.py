"""The MLP of seed 004, trained as k independent models at once ("batched runs").

**Network** (arXiv 1705.03098 as the original study used it)::

    Linear(d → w1, no bias) → BN → LeakyReLU → R(w1) → Linear(w1 → w2) → BN → LeakyReLU → R(w2)
      → Linear(w2 → C)
    R(w)(x) = x + [Linear → BN → LeakyReLU → Dropout → Linear → BN → LeakyReLU → Dropout](x)

BatchNorm (momentum 0.1, ε = 1e-5) normalises with the batch's statistics while training and
with running statistics for prediction; LeakyReLU's slope is 0.01. **Training**: cross-entropy,
AdamW (β = (0.9, 0.999), ε = 1e-8, decoupled weight decay on every parameter), the learning rate
on a cosine schedule over the epochs, lr_e = lr·(1 + cos(π e / E))/2 for epoch e of E; batches of
64 rows (1,024 from 10,000 training rows), the last merged into the previous one if it would
hold a single row (BatchNorm cannot train on it). Initialisation as ``torch.nn.Linear``
(weights and biases uniform in ±1/√fan_in), BatchNorm γ = 1, β = 0.

**k models at once.** Parameters are stacked along a leading model axis, every layer is a
batched matmul (``torch.baddbmm``) and every statistic is taken per model, so the k models never
mix: model j's loss depends only on its own parameters and rows, and one backward pass gives each
its own gradient. Each model keeps what a run owns: its training rows (same count for all k),
hyperparameters (lr, weight decay, dropout per model; the widths must agree — runs with other
widths train in another group), and one ``torch.Generator`` seeded with the run's model seed,
from which it draws — in this order — its initial weights, then per epoch its batch order and per
batch its dropout masks. On a GPU the masks come instead from a generator on the GPU, one per
model, seeded by one draw from the model's generator right after its weights: drawn on the CPU
and copied over, the masks held the GPU back (the CPU's Bernoulli draws took much of each step:
docs/measurements/design-choices.md). A model therefore trains
the same whether alone or with others (on the CPU bit for bit; on a GPU from the same draws, but
the device's kernels for k stacked models sum in other orders than for one): the
test (``tests/test_mlp.py``) compares batched with one-at-a-time training (and k = 1 with
``torch.nn`` modules and ``torch.optim.AdamW``). On a GPU one small network leaves the device
mostly idle (the original study ran 10 processes per GPU); stacked, a repeat's runs share it.
Which runs share a stack is fixed by the design and the data's shape alone (:func:`stack_size`),
never by how jobs are sized, since on a GPU a run's predictions depend on its stack.

**Determinism on the CPU.** Training and prediction use deterministic algorithms
(``torch.use_deterministic_algorithms``) and exactly :data:`CPU_THREADS` intra-op thread,
whatever the job's ``threads`` or ``OMP_NUM_THREADS``: torch splits a reduction (a matmul's
inner products, a batch mean) across its threads by the tensor's shape, so with two threads a
model trained alone and the same model stacked with others summed in other orders and differed
by up to 1e-3 in probability (seen on a 2-core AMD EPYC). With one thread every model of a
stack runs the same kernel on its own slice, so a run's predictions do not depend on the thread
count nor on which runs it was stacked with (``tests/test_mlp.py`` checks both at 1 and 2
threads). What one thread cannot fix — another CPU's vector kernels, another torch — is
recorded per run (``docs/decisions.md``, "Determinism").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

#: fixed settings that are not hyperparameters of the study
MLP_EPOCHS = 20
BN_MOMENTUM, BN_EPS, LEAKY_SLOPE = 0.1, 1e-5, 0.01
BETAS, ADAM_EPS = (0.9, 0.999), 1e-8
#: the most training values (models × rows × features) stacked in one group (:func:`stack_size`)
MAX_STACKED_VALUES = 250_000_000
#: intra-op threads of training and prediction (module docstring: determinism)
CPU_THREADS = 1


#: from this many training rows on, batches of 1,024 rows (else 64)
LARGE_BATCH_ROWS = 10_000


def batch_size(n_train: int) -> int:
    return 1024 if n_train >= LARGE_BATCH_ROWS else 64


def batch_bounds(n: int, size: int) -> list[int]:
    bounds = list(range(0, n, size)) + [n]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        bounds.pop(-2)  # merge a 1-sample tail into the previous batch
    return bounds


# (name, fan_in, fan_out, bias, kind): the linear layers; BatchNorm layers follow the first
def _layers(d: int, w1: int, w2: int, c: int) -> list[tuple[str, int, int, bool]]:
    return [("in", d, w1, False), ("r1a", w1, w1, True), ("r1b", w1, w1, True),
            ("mid", w1, w2, True), ("r2a", w2, w2, True), ("r2b", w2, w2, True),
            ("out", w2, c, True)]


_BN = {"in": "w1", "r1a": "w1", "r1b": "w1", "mid": "w2", "r2a": "w2", "r2b": "w2"}


@dataclass
class Models:
    """k stacked models: parameters (requires grad), BatchNorm running statistics, Adam state."""

    params: dict
    running: dict
    widths: tuple[int, int]
    n_classes: int


def init_models(generators: Sequence, d: int, n_classes: int, w1: int, w2: int,
                device: str = "cpu", dtype=None) -> Models:
    """Initial parameters of k models, each from its own generator (module docstring), in
    ``dtype`` (default float32)."""
    import torch

    dtype = dtype or torch.float32
    per_model = []
    for gen in generators:
        p = {}
        for name, fan_in, fan_out, bias in _layers(d, w1, w2, n_classes):
            bound = 1.0 / math.sqrt(fan_in)
            # as torch.nn.Linear: weight (out, in) drawn first, then the bias; stored as (in, out)
            p[f"{name}.w"] = ((torch.rand(fan_out, fan_in, generator=gen) * 2 - 1) * bound).T
            if bias:
                p[f"{name}.b"] = (torch.rand(fan_out, generator=gen) * 2 - 1) * bound
        per_model.append(p)
    params = {key: torch.stack([p[key] for p in per_model]).contiguous().to(device, dtype)
              for key in per_model[0]}
    k = len(generators)
    running = {}
    for name, width in _BN.items():
        size = w1 if width == "w1" else w2
        params[f"{name}.gamma"] = torch.ones(k, size, device=device, dtype=dtype)
        params[f"{name}.beta"] = torch.zeros(k, size, device=device, dtype=dtype)
        running[f"{name}.mean"] = torch.zeros(k, size, device=device, dtype=dtype)
        running[f"{name}.var"] = torch.ones(k, size, device=device, dtype=dtype)
    for value in params.values():
        value.requires_grad_(True)
    return Models(params, running, (w1, w2), n_classes)


def _linear(x, p, name):
    import torch

    w = p[f"{name}.w"]
    if f"{name}.b" in p:
        return torch.baddbmm(p[f"{name}.b"].unsqueeze(1), x, w)
    return torch.bmm(x, w)


@functools.cache
def _contiguous_gradient_op():
    import torch

    class ContiguousGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, value):
            return value.view_as(value)

        @staticmethod
        def backward(ctx, grad):
            return grad.contiguous()

    return ContiguousGradient.apply


def _contiguous_gradient(x):
    """``x`` itself, whose gradient is made C-contiguous on the way back: the gradient of the
    stacked activations (k, B, W) returns from the side-by-side (B, k·W) layout transposed, and
    a layer's bias gradient (a sum over B) sums a transposed gradient in another order than one
    model's own, a rounding that Adam turns into another model (a bias before BatchNorm has a
    true gradient of 0: its gradient is all rounding)."""
    return _contiguous_gradient_op()(x)


def _batch_norm(x, models: Models, name: str, training: bool):
    """BatchNorm of every model's units at once: the k models' (B, W) activations side by side
    as one (B, k·W) batch, whose k·W channels ``F.batch_norm`` normalises one by one (a
    channel's statistics sum over its own B rows only, in the same order whatever k), with
    each model's running statistics and γ, β as views of the stacked (k, W) tensors."""
    import torch.nn.functional as F

    k, b, w = x.shape
    p, r = models.params, models.running
    flat = _contiguous_gradient(x).transpose(0, 1).reshape(b, k * w)
    out = F.batch_norm(flat, r[f"{name}.mean"].view(-1), r[f"{name}.var"].view(-1),
                       p[f"{name}.gamma"].view(-1), p[f"{name}.beta"].view(-1),
                       training=training, momentum=BN_MOMENTUM, eps=BN_EPS)
    return out.view(b, k, w).transpose(0, 1).contiguous()


def forward(models: Models, x, masks: dict | None = None):
    """Logits (k, B, C) of inputs x (k, B, d); ``masks`` (training): the dropout masks, scaled,
    of the four dropout layers (``None`` entries: no dropout)."""
    import torch.nn.functional as F

    training = masks is not None
    p = models.params

    def block(h, name):
        return F.leaky_relu(_batch_norm(_linear(h, p, name), models, name, training), LEAKY_SLOPE)

    def drop(h, key):
        mask = masks.get(key) if training else None
        return h if mask is None else h * mask

    h = block(x, "in")
    h = h + drop(block(drop(block(h, "r1a"), "r1a"), "r1b"), "r1b")
    h = block(h, "mid")
    h = h + drop(block(drop(block(h, "r2a"), "r2a"), "r2b"), "r2b")
    return _linear(h, p, "out")


def masks_on_device(device: str) -> bool:
    """Whether dropout masks are drawn on the training device from per-model generators there
    (on a GPU; module docstring) rather than on the CPU from the models' own generators."""
    return device != "cpu"


def mask_generators(generators, device: str) -> list:
    """Per model, a generator on ``device`` for its dropout masks, seeded by one 63-bit draw
    from the model's own generator right after its initial weights (module docstring)."""
    import torch

    return [torch.Generator(device=device).manual_seed(
        int(torch.randint(0, 2**63 - 1, (1,), generator=gen))) for gen in generators]


def _dropout_masks(generators, dropout: np.ndarray, batch: int, widths, device,
                   dtype) -> dict:
    """Per model, from its generator (on the CPU, or on the device: :func:`masks_on_device`),
    the four dropout masks of one training step (inverted dropout: kept units scaled by
    1/(1 − p)); ``None`` where no model drops anything."""
    import torch

    w1, w2 = widths
    out = {}
    for key, width in (("r1a", w1), ("r1b", w1), ("r2a", w2), ("r2b", w2)):
        if not (dropout > 0).any():
            out[key] = None
            continue
        rows = []
        for gen, p in zip(generators, dropout, strict=True):
            if p > 0:
                keep = torch.bernoulli(torch.full((batch, width), 1.0 - p, device=gen.device),
                                       generator=gen)
                rows.append(keep / (1.0 - p))
            else:
                rows.append(torch.ones(batch, width, device=gen.device))
        out[key] = torch.stack(rows).to(device, dtype)
    return out


def _deterministic(torch) -> None:
    """``torch.use_deterministic_algorithms(True)`` without its import of the compiler
    (``torch._inductor``, whose config it also sets: a start-up cost in every MLP job, for a
    compiler we never use)."""
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # another torch: the public function
        torch.use_deterministic_algorithms(True)
    else:
        setter(True, warn_only=False)


@contextmanager
def _fixed_threads(torch):
    """Run the block with :data:`CPU_THREADS` intra-op threads, then restore the process's
    setting (module docstring: determinism). Also on a GPU: the batch orders are drawn on the
    CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(CPU_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(X: Sequence[np.ndarray], y: Sequence[np.ndarray], *, n_classes: int,
          hparams: Sequence[dict], seeds: Sequence[int], epochs: int = MLP_EPOCHS,
          device: str = "cpu", dtype=None) -> Models:
    """Train k models (module docstring) on their own rows ``X[j]`` (n, d), ``y[j]`` (n,) with
    their own ``hparams[j]`` and model ``seeds[j]``; every X[j] has the same shape and every
    model the same widths. ``dtype``: float32 (default) or float64 (for checks)."""
    import torch

    with _fixed_threads(torch):
        return _train(X, y, n_classes=n_classes, hparams=hparams, seeds=seeds, epochs=epochs,
                      device=device, dtype=dtype)


def _train(X, y, *, n_classes, hparams, seeds, epochs, device, dtype) -> Models:
    import torch
    import torch.nn.functional as F

    dtype = dtype or torch.float32
    k = len(X)
    shapes = {np.shape(x) for x in X}
    widths = {(int(h["width1"]), int(h["width2"])) for h in hparams}
    if len(shapes) != 1 or len(widths) != 1 or not (len(y) == len(hparams) == len(seeds) == k):
        raise ValueError(f"batched MLP models need equal training shapes and widths, got "
                         f"{sorted(shapes)} and {sorted(widths)}")
    (n, d), = shapes
    (w1, w2), = widths
    if device == "cpu":
        _deterministic(torch)
    generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
    models = init_models(generators, d, n_classes, w1, w2, device, dtype)
    masks_from = mask_generators(generators, device) if masks_on_device(device) else generators
    Xt = torch.as_tensor(np.stack(X), dtype=dtype, device=device)
    yt = torch.as_tensor(np.stack(y), dtype=torch.int64, device=device)
    lr0 = torch.tensor([float(h["lr"]) for h in hparams], device=device, dtype=dtype)
    wd = torch.tensor([float(h["weight_decay"]) for h in hparams], device=device, dtype=dtype)
    dropout = np.array([float(h["dropout"]) for h in hparams])
    state = {key: (torch.zeros_like(v), torch.zeros_like(v)) for key, v in models.params.items()}
    bounds = batch_bounds(n, batch_size(n))
    rows = torch.arange(k, device=device).unsqueeze(1)
    step = 0
    for epoch in range(epochs):
        lr = lr0 * (1 + math.cos(math.pi * epoch / epochs)) / 2
        orders = torch.stack([torch.randperm(n, generator=g) for g in generators]).to(device)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi - lo < 2:
                continue  # only possible when the whole training set is one sample
            idx = orders[:, lo:hi]
            masks = _dropout_masks(masks_from, dropout, hi - lo, (w1, w2), device, dtype)
            logits = forward(models, Xt[rows, idx], masks)
            loss = F.cross_entropy(logits.reshape(-1, n_classes), yt[rows, idx].reshape(-1),
                                   reduction="none").reshape(k, -1).mean(dim=1).sum()
            grads = torch.autograd.grad(loss, list(models.params.values()))
            step += 1
            _adamw_step(models.params, grads, state, lr, wd, step)
    return models


def _adamw_step(params: dict, grads, state: dict, lr, wd, step: int) -> None:
    """One AdamW step for every model at once (lr, wd: one value per model)."""
    import torch

    b1, b2 = BETAS
    c1, c2 = 1 - b1 ** step, 1 - b2 ** step
    decay, step_size = 1 - lr * wd, lr / c1
    with torch.no_grad():
        for (key, p), g in zip(params.items(), grads, strict=True):
            shape = (-1,) + (1,) * (p.dim() - 1)
            m, v = state[key]
            p.mul_(decay.view(shape))
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = v.sqrt().div_(math.sqrt(c2)).add_(ADAM_EPS)
            p.sub_(denom.reciprocal_().mul_(m).mul_(step_size.view(shape)))


def predict_proba(models: Models, X: Sequence[np.ndarray], device: str = "cpu",
                  chunk: int = 4096) -> np.ndarray:
    """(k, n, C) class probabilities of each model for its own test rows ``X[j]`` (all of one
    shape), float64, rows summing to 1."""
    import torch

    dtype = models.params["in.w"].dtype
    Xt = torch.as_tensor(np.stack(X), dtype=dtype, device=device)
    with torch.no_grad(), _fixed_threads(torch):
        parts = [torch.softmax(forward(models, Xt[:, i:i + chunk]), dim=2)
                 for i in range(0, Xt.shape[1], chunk)]
        proba = torch.cat(parts, dim=1).double().cpu().numpy()
    return proba / proba.sum(axis=2, keepdims=True)


def stack_size(n_pool: int, d: int, runs: int) -> int:
    """How many runs of one cell and repeat train as one batched model on a GPU: all the
    config's ``runs``, or as many as :data:`MAX_STACKED_VALUES` training values allow at the
    dataset's whole training pool of ``n_pool`` rows × ``d`` encoded columns (no cell trains
    on more). A function of the data's shape and the config alone: which runs share a stack
    never depends on how the plan sizes jobs (``jobs.target_minutes``, ``jobs.gpu_speedup``,
    the cost model), since on a GPU a run's predictions depend on its stack."""
    return max(1, min(runs, MAX_STACKED_VALUES // max(n_pool * d, 1)))


def stacks(runs: int, size: int) -> list[range]:
    """The stacks of one cell and repeat: runs ``[0, size)``, ``[size, 2 · size)``, …"""
    return [range(start, min(start + size, runs)) for start in range(0, runs, size)]


def groups_of(hparams: Sequence[dict], n_rows: Sequence[int]) -> list[list[int]]:
    """Indices of a stack's runs that can train together: equal widths and training rows
    (runs of a stack with other widths, under a hyperparameter perturbation, train apart)."""
    by_key: dict[tuple, list[int]] = {}
    for j, (h, n) in enumerate(zip(hparams, n_rows, strict=True)):
        by_key.setdefault((int(h["width1"]), int(h["width2"]), n), []).append(j)
    return list(by_key.values())
