"""The four classifiers of seed 004 behind one small interface.

``make_classifier(name, hparams, seed=..., threads=...)`` returns an object with
``fit(X, y, n_classes)``, ``predict_proba(X) -> (n, n_classes)``, ``predict(X) -> (n,)`` on int
class indices, ``hparams`` (the realised hyperparameters) and ``device``. Probability columns
always cover all ``n_classes`` classes of the dataset in its class order, also when a class is
absent from a run's training rows (its column is then 0).

* ``lr-sgd``: ``SGDClassifier(loss="log_loss", learning_rate="adaptive")``.
* ``svm-sgd``: ``SGDClassifier`` with ``loss`` ∈ {hinge, modified_huber}. **Probabilities**:
  modified_huber has sklearn's ``predict_proba``; the hinge loss has none, so the probability
  columns hold the one-hot vector of the predicted class (1 for it, 0 elsewhere) — degenerate,
  uncalibrated "probabilities" whose entropy is 0 and whose log loss is large when wrong.
* ``xgb``: ``XGBClassifier(tree_method="hist", n_estimators=100)``, ``n_jobs`` = the job's
  threads, ``device="cuda"`` when a GPU is visible.
* ``mlp``: the PyTorch network of arXiv 1705.03098 as the original study used it (see
  :class:`ResidualMLP`), with its widths and dropout hyperparameters actually used; AdamW with a
  cosine learning-rate schedule over ``epochs``; int64 targets; batches of 64 (≥ 10,000 training
  rows: 1024); the last training batch is merged into the previous one if it would hold a single
  sample (BatchNorm cannot train on it) — no sample is dropped, and prediction covers every test
  row. CUDA when available, else CPU with deterministic algorithms.

Model-seed: ``seed`` sets SGD's shuffling, XGBoost's subsampling and the MLP's initialisation and
batch order (``perturbation.model_seed`` decides whether it varies per run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from modelvar.models.hparams import defaults, space

CLASSIFIERS = ("lr-sgd", "svm-sgd", "xgb", "mlp")
#: fixed settings that are not hyperparameters of the study
MLP_EPOCHS = 20


def _full_proba(partial: np.ndarray, present: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((len(partial), n_classes))
    out[:, present] = partial
    return out


@dataclass
class SGDModel:
    hparams: dict
    seed: int
    loss: str
    device: str = "cpu"
    model: object = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)

    def fit(self, X, y, n_classes):
        from sklearn.linear_model import SGDClassifier

        self.n_classes = n_classes
        params = {k: v for k, v in self.hparams.items() if k != "loss"}
        params["penalty"] = None if params["penalty"] == "none" else params["penalty"]
        self.model = SGDClassifier(loss=self.loss, learning_rate="adaptive",
                                   random_state=self.seed, **params)
        self.model.fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X).astype(np.int64)

    def predict_proba(self, X):
        if self.loss == "hinge":
            out = np.zeros((len(X), self.n_classes))
            out[np.arange(len(X)), self.predict(X)] = 1.0
            return out
        return _full_proba(self.model.predict_proba(X), self.model.classes_, self.n_classes)


@dataclass
class XGBModel:
    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    model: object = field(init=False, default=None)
    present: np.ndarray = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)

    def fit(self, X, y, n_classes):
        from xgboost import XGBClassifier

        self.n_classes = n_classes
        self.present = np.unique(y)  # xgboost needs labels 0..m-1
        y_local = np.searchsorted(self.present, y)
        params = dict(self.hparams)
        params["reg_lambda"] = params.pop("lambda")
        params["reg_alpha"] = params.pop("alpha")
        params["learning_rate"] = params.pop("eta")
        self.model = XGBClassifier(
            tree_method="hist", n_estimators=100, random_state=self.seed, n_jobs=self.threads,
            device=self.device, **params,
        )
        if len(self.present) == 1:  # a single training class: constant prediction
            self.model = None
            return self
        self.model.fit(X, y_local)
        return self

    def predict_proba(self, X):
        if self.model is None:
            out = np.zeros((len(X), self.n_classes))
            out[:, self.present[0]] = 1.0
            return out
        return _full_proba(self.model.predict_proba(X), self.present, self.n_classes)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1).astype(np.int64)


def _build_mlp(n_in: int, n_out: int, width1: int, width2: int, dropout: float):
    import torch
    from torch import nn

    class Residual(nn.Module):
        def __init__(self, width: int):
            super().__init__()
            self.body = nn.Sequential(
                nn.Linear(width, width), nn.BatchNorm1d(width), nn.LeakyReLU(), nn.Dropout(dropout),
                nn.Linear(width, width), nn.BatchNorm1d(width), nn.LeakyReLU(), nn.Dropout(dropout),
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.body(x)

    return nn.Sequential(
        nn.Linear(n_in, width1, bias=False), nn.BatchNorm1d(width1), nn.LeakyReLU(),
        Residual(width1),
        nn.Linear(width1, width2), nn.BatchNorm1d(width2), nn.LeakyReLU(),
        Residual(width2),
        nn.Linear(width2, n_out),
    )


def torch_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class MLPModel:
    """``ResidualMLP``: Linear(in→w1, no bias) → BN → LeakyReLU → residual block(w1) →
    Linear(w1→w2) → BN → LeakyReLU → residual block(w2) → Linear(w2→C); a residual block is
    x + [Linear → BN → LeakyReLU → Dropout → Linear → BN → LeakyReLU → Dropout]."""

    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    epochs: int = MLP_EPOCHS
    model: object = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)
    epoch_seconds: float = field(init=False, default=0.0)

    def fit(self, X, y, n_classes):
        import torch

        torch.set_num_threads(self.threads)
        if self.device == "cpu":
            torch.use_deterministic_algorithms(True)
        self.n_classes = n_classes
        gen = torch.Generator().manual_seed(self.seed)
        torch.manual_seed(self.seed)
        h = self.hparams
        net = _build_mlp(X.shape[1], n_classes, int(h["width1"]), int(h["width2"]),
                         float(h["dropout"])).to(self.device)
        opt = torch.optim.AdamW(net.parameters(), lr=h["lr"], weight_decay=h["weight_decay"])
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.epochs)
        Xt = torch.as_tensor(X, dtype=torch.float32, device=self.device)
        yt = torch.as_tensor(y, dtype=torch.int64, device=self.device)
        n = len(Xt)
        batch = 1024 if n >= 10_000 else 64
        loss_fn = torch.nn.CrossEntropyLoss()
        net.train()
        start = time.perf_counter()
        for _ in range(self.epochs):
            order = torch.randperm(n, generator=gen).to(self.device)
            bounds = list(range(0, n, batch)) + [n]
            if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
                bounds.pop(-2)  # merge a 1-sample tail into the previous batch
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
                idx = order[lo:hi]
                if len(idx) < 2:
                    continue  # only possible when the whole training set is one sample
                opt.zero_grad()
                loss_fn(net(Xt[idx]), yt[idx]).backward()
                opt.step()
            sched.step()
        self.epoch_seconds = (time.perf_counter() - start) / self.epochs
        self.model = net.eval()
        return self

    def predict_proba(self, X):
        import torch

        with torch.no_grad():
            Xt = torch.as_tensor(X, dtype=torch.float32, device=self.device)
            out = [torch.softmax(self.model(Xt[i:i + 4096]), dim=1)
                   for i in range(0, len(Xt), 4096)]
            proba = torch.cat(out).double().cpu().numpy()
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1).astype(np.int64)


def make_classifier(name: str, hparams: dict | None = None, *, seed: int, threads: int = 1,
                    device: str | None = None, epochs: int | None = None):
    """A classifier with its default hparams updated by ``hparams`` (unknown names refused).

    ``epochs`` (MLP only) overrides :data:`MLP_EPOCHS`."""
    if name not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {name!r}; available: {list(CLASSIFIERS)}")
    if epochs is not None and (name != "mlp" or int(epochs) < 1):
        raise ValueError(f"{name}: epochs must be a positive integer and only applies to mlp")
    realised = {**defaults(name), **(hparams or {})}
    unknown = set(realised) - {h.name for h in space(name)}
    if unknown:
        raise ValueError(f"{name}: unknown hyperparameter(s) {sorted(unknown)}")
    if name in ("lr-sgd", "svm-sgd"):
        loss = "log_loss" if name == "lr-sgd" else realised["loss"]
        return SGDModel(hparams=realised, seed=seed, loss=loss)
    if name == "xgb":
        if device is None:
            device = "cuda" if _cuda_available() else "cpu"
        return XGBModel(hparams=realised, seed=seed, threads=threads, device=device)
    return MLPModel(hparams=realised, seed=seed, threads=threads,
                    device=device or torch_device(), epochs=int(epochs or MLP_EPOCHS))


def _cuda_available() -> bool:
    """A visible NVIDIA device and a CUDA-enabled xgboost (without importing torch)."""
    import os

    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    if not os.path.exists("/dev/nvidiactl"):
        return False
    import xgboost

    return bool(xgboost.build_info().get("USE_CUDA", False))
