"""What a fit costs: seconds per fit as a function of the data's shape, per classifier.

Model (per classifier, fitted by least squares in log space)::

    seconds = exp(b0) · n_train^b1 · d^b2 · C^b3 · epochs^b4 · (1 + a · s)

with n_train the training rows of the run, d the columns of the encoded design matrix (numeric
features + one-hot levels), C the classes, and epochs the MLP's training length (1 for the others);
s is the share of the encoded columns that a data perturbation fills with continuous noise (0
without one, and for ``sig`` levels, which round), a a per-classifier constant (xgb's trees grow
with the distinct values a feature takes: ≈ 3× slower on vehicle's noisy integer features).
The shipped constants (``cost_model.json`` next to this module) were measured on one core of our
2-core build machine by ``benchmarks/calibrate_cost_model.py``: synthetic data over a grid of n,
d and C (for the range of the study's datasets) and the embedded real datasets (whose fits can
cost other than synthetic ones of their shape: xgb's trees stop early on anneal's one-hot
columns), weighted equally; the MLP's constants are for the CPU — ``gpu_speedup`` (config
``jobs.gpu_speedup``, default 1: no speed-up assumed, an upper bound) divides them for GPU jobs.

Recalibrate from any finished run: :func:`calibrate` fits the same model to the runs tables'
``fit_seconds`` (``modelvar plan --calibrate RESULTS --out my-cost.json``, then
``jobs.cost_model: my-cost.json``), so the plan of the next, larger study uses the cluster's own
timings.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).with_name("cost_model.json")
FEATURES = ("log_n", "log_d", "log_c", "log_epochs")


@dataclass(frozen=True)
class FitCost:
    """Coefficients of one classifier: intercept and the exponents of n, d, C, epochs."""

    intercept: float
    exponents: tuple[float, float, float, float]

    def seconds(self, n_train: float, d: float, n_classes: float, epochs: float = 1.0) -> float:
        logs = (math.log(max(n_train, 1)), math.log(max(d, 1)), math.log(max(n_classes, 2)),
                math.log(max(epochs, 1)))
        return math.exp(self.intercept + sum(b * x for b, x in zip(self.exponents, logs,
                                                                    strict=True)))


@dataclass
class CostModel:
    classifiers: dict[str, FitCost]
    source: str
    #: classifier → a: a fit on training rows with continuous noise added to the numeric
    #: features costs 1 + a · (numeric share of the encoded columns) times a clean one
    data_noise: dict[str, float] = field(default_factory=dict)

    def seconds(self, classifier: str, n_train: float, d: float, n_classes: float,
                epochs: float = 1.0, noisy_share: float = 0.0) -> float:
        """Seconds of one fit; ``noisy_share``: the share of the encoded columns that carry
        continuous data noise (0 without a data perturbation that adds noise)."""
        if classifier not in self.classifiers:
            raise ValueError(f"the cost model has no constants for {classifier!r} "
                             f"({self.source}); recalibrate it")
        base = self.classifiers[classifier].seconds(n_train, d, n_classes, epochs)
        return base * (1.0 + self.data_noise.get(classifier, 0.0) * noisy_share)

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "classifiers": {
            clf: {"intercept": c.intercept, "exponents": list(c.exponents)}
            for clf, c in self.classifiers.items()}, "data_noise": self.data_noise},
            indent=1) + "\n"


def load(path: str | Path | None = None) -> CostModel:
    """The cost model in ``path`` (a calibration of your own), or the shipped one."""
    path = Path(path) if path else SHIPPED
    body = json.loads(path.read_text())
    return CostModel({clf: FitCost(c["intercept"], tuple(c["exponents"]))
                      for clf, c in body["classifiers"].items()}, body.get("source", str(path)),
                     dict(body.get("data_noise", {})))


def fit(samples: dict[str, np.ndarray], *, source: str,
        weights: dict[str, np.ndarray] | None = None) -> CostModel:
    """Least squares in log space, per classifier: ``samples[clf]`` is an (m × 5) array of
    (n_train, d, C, epochs, seconds), ``weights[clf]`` optional weights of its rows. Exponents
    of a factor that does not vary in the samples are 0 (nothing can be learnt about them)."""
    out = {}
    for clf, rows in samples.items():
        rows = np.asarray(rows, dtype=float)
        X = np.log(np.maximum(rows[:, :4], [1, 1, 2, 1]))
        y = np.log(np.maximum(rows[:, 4], 1e-6))
        varies = X.std(axis=0) > 1e-9
        design = np.column_stack([np.ones(len(X)), X[:, varies]])
        w = np.sqrt(np.asarray(weights[clf], dtype=float)) if weights and clf in weights \
            else np.ones(len(X))
        coef, *_ = np.linalg.lstsq(design * w[:, None], y * w, rcond=None)
        exps = np.zeros(4)
        exps[varies] = coef[1:]
        out[clf] = FitCost(float(coef[0]), tuple(float(e) for e in exps))
    return CostModel(out, source)


def calibrate(runs, shapes: dict[str, dict], *, source: str) -> CostModel:
    """A cost model from runs tables (``runs``: a DataFrame with ``dataset``, ``classifier``,
    ``n_train``, ``fit_seconds``; ``shapes[dataset]`` = ``{"d": …, "n_classes": …,
    "epochs": …}``), e.g. the aggregated runs of a finished study. ``epochs`` count for the
    classifiers that train for epochs (their spec's ``epochs``), 1 for the others."""
    from modelvar.models.registry import spec

    samples: dict[str, list] = {}
    for row in runs[["dataset", "classifier", "n_train", "fit_seconds"]].itertuples():
        shape = shapes[row.dataset]
        epochs = shape.get("epochs", 1) if spec(row.classifier).epochs is not None else 1
        samples.setdefault(row.classifier, []).append(
            (row.n_train, shape["d"], shape["n_classes"], epochs, row.fit_seconds))
    return fit({k: np.array(v) for k, v in samples.items()}, source=source)
