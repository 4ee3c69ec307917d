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
* ``mlp``: the PyTorch network of arXiv 1705.03098 as the original study used it, with its widths
  and dropout hyperparameters actually used; AdamW with a cosine learning-rate schedule over
  ``epochs``; batches of 64 (≥ 10,000 training rows: 1024), no sample dropped
  (:mod:`modelvar.models.mlp`, which also trains several runs as one batched model). CUDA when
  available, else CPU with deterministic algorithms.

Model-seed: ``seed`` sets SGD's shuffling, XGBoost's subsampling and the MLP's initialisation and
batch order (``perturbation.model_seed`` decides whether it varies per run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from modelvar.models.hparams import defaults, space
from modelvar.models.mlp import MLP_EPOCHS

CLASSIFIERS = ("lr-sgd", "svm-sgd", "xgb", "mlp")


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


def torch_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class MLPModel:
    """The residual MLP (:mod:`modelvar.models.mlp`), one model; a fit job trains the runs of a
    repeat that share its widths together (:func:`modelvar.models.mlp.train`), which gives each
    the same model as this. ``threads`` does not reach torch: the MLP always trains with
    :data:`modelvar.models.mlp.CPU_THREADS` intra-op threads, so that its predictions do not
    depend on the job's thread count."""

    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    epochs: int = MLP_EPOCHS
    model: object = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)
    epoch_seconds: float = field(init=False, default=0.0)

    def fit(self, X, y, n_classes):
        from modelvar.models.mlp import train

        self.n_classes = n_classes
        start = time.perf_counter()
        self.model = train([X], [y], n_classes=n_classes, hparams=[self.hparams],
                           seeds=[self.seed], epochs=self.epochs, device=self.device)
        self.epoch_seconds = (time.perf_counter() - start) / self.epochs
        return self

    def predict_proba(self, X):
        from modelvar.models.mlp import predict_proba

        return predict_proba(self.model, [X], device=self.device)[0]

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
