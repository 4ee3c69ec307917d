"""Classifiers behind one small interface.

``make_classifier(name, hparams, seed)`` returns an object with ``fit(X, y, n_classes)``,
``predict_proba(X) -> (n, n_classes)`` and ``predict(X) -> (n,)`` on int class indices, plus
``hparams`` (the realised hyperparameters). Probability columns always cover all ``n_classes``
classes of the dataset in its class order, also when a class is absent from a run's training rows
(its column is then 0).

Implemented: ``lr-sgd`` (``SGDClassifier(loss="log_loss", learning_rate="adaptive")`` with the
original study's defaults: alpha 1e-4, l1_ratio 0.15, eta0 1e-3, penalty l2, average False).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.linear_model import SGDClassifier

LR_SGD_DEFAULTS = {
    "alpha": 1e-4,
    "l1_ratio": 0.15,
    "eta0": 1e-3,
    "penalty": "l2",
    "average": False,
}

DEFAULTS = {"lr-sgd": LR_SGD_DEFAULTS}
CLASSIFIERS = tuple(DEFAULTS)


@dataclass
class SGDModel:
    loss: str
    hparams: dict
    seed: int
    model: SGDClassifier = field(init=False)
    n_classes: int = field(init=False, default=0)

    def fit(self, X: np.ndarray, y: np.ndarray, n_classes: int) -> SGDModel:
        self.n_classes = n_classes
        self.model = SGDClassifier(
            loss=self.loss, learning_rate="adaptive", random_state=self.seed, **self.hparams
        )
        self.model.fit(X, y)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros((len(X), self.n_classes))
        out[:, self.model.classes_] = self.model.predict_proba(X)
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(X).astype(np.int64)


def make_classifier(name: str, hparams: dict | None = None, *, seed: int):
    if name not in DEFAULTS:
        raise ValueError(f"unknown classifier {name!r}; available: {list(CLASSIFIERS)}")
    realised = {**DEFAULTS[name], **(hparams or {})}
    unknown = set(realised) - set(DEFAULTS[name])
    if unknown:
        raise ValueError(f"{name}: unknown hyperparameter(s) {sorted(unknown)}")
    if name == "lr-sgd":
        return SGDModel(loss="log_loss", hparams=realised, seed=seed)
    raise AssertionError(name)  # pragma: no cover - DEFAULTS and this function list the same names
