"""What a fit costs: CPU seconds per fit as a function of the data's shape, per classifier.

Model (per classifier and per *regime* of it, fitted by least squares in log space)::

    seconds = (t0 + exp(b0) · n_train^b1 · (d_w + d0)^b2 · C^b3 · epochs^b4) · (1 + a · s)
              · (d0 + d_w − (1 − φ) · f · d) / (d0 + d_w)
    d_w = d · (1 − h + ρ · h)

* n_train: the training rows of the run; d: the columns of the encoded design matrix (numeric
  features + one-hot levels); C: the binary problems of the fit (the classes, but 1 for two
  classes: scikit-learn's SGD and xgboost fit one binary model there); epochs: the MLP's
  training length (1 for the others).
* d0: a row's own cost in columns' worth (a row's set-up beside each column's multiply-add),
  fitted ≥ 0 per regime where the samples have at least :data:`MIN_COLUMN_SIZES` column counts,
  else 0.
* h: the share of d that are one-hot levels; ρ: what a one-hot column costs against a numeric
  one, fitted per regime where the samples mix both kinds, else 1.
* t0: a fixed cost per fit (set-up, prediction of a small test set), fitted where the samples
  allow (:data:`MIN_SAMPLES_PER_CONSTANT`).
* s: the share of the encoded columns a data perturbation fills with continuous noise (0
  without one, and for ``sig`` levels, which round); a: a per-classifier constant (xgb's trees
  grow with the distinct values a feature takes).
* f: the share of the encoded columns that are *few-valued* numeric features (at most 16
  distinct values, :func:`modelvar.data.schema.count_few_valued`; 0 where a data perturbation
  adds noise); φ: what a few-valued column costs against a continuous one beside the row's own
  cost d0 (:func:`few_valued_factor`; 1 where not measured). The calibration times fits with
  every column cut to 8 values against continuous ones and solves for φ with the regime's d0
  (:func:`column_weight_of_ratio`).

**Regimes.** A classifier whose fit changes from some number of classes, training rows or
encoded columns on declares those thresholds (``ClassifierSpec.cost_regimes``): the SGD
classifiers' joint pass over the rows from ``MANY_CLASSES`` classes on
(:mod:`modelvar.models.ovr_sgd`), the MLP's larger batches from 10,000 training rows on, xgb's
growing time per column from about 1,000 columns on. Each range (and each combination of
ranges) gets its own constants, fitted to the samples in it.

The shipped constants (``cost_model.json`` next to this module) are one core's, fitted by
``benchmarks/calibrate_cost_model.py`` to synthetic data over a grid of n, d and C and to the
embedded real datasets, weighted equally, and checked on held-out shapes (``make
bench-cost-model``). What was measured for each term: docs/measurements/cost-model.md. A GPU
job's fits are divided by the GPU's speed-up (config ``jobs.gpu_speedup``, or
``classifier_settings.NAME.gpu_speedup``; default 1: no speed-up assumed, an upper bound).

Recalibrate from any finished run: :func:`calibrate` fits the same model to the runs tables'
CPU seconds (``modelvar plan --calibrate RESULTS --out my-cost.json``, then
``jobs.cost_model: my-cost.json``), so the plan of the next, larger study uses the cluster's own
timings.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).with_name("cost_model.json")
#: the axes of a classifier's regimes: (column of a sample row, lowest value); in FitCost's
#: order of min_classes, min_rows, min_columns
REGIME_AXES = {"classes": (2, 2), "rows": (0, 0), "columns": (1, 0)}
#: samples per free constant below which the fixed cost t0 is not fitted (it is 0)
MIN_SAMPLES_PER_CONSTANT = 3
#: a job's time limit over its estimate where probe fits measured the data (issue 55: the probed
#: estimates of the realistic benchmark's fits were within 0.72–1.17x of measured) or where
#: nothing measured a worse miss
LIMIT_FACTOR = 2.0
#: distinct column counts below which the column offset d0 is not fitted (it is 0): with
#: fewer, an offset and the exponent of d trade off against each other
MIN_COLUMN_SIZES = 4


@dataclass(frozen=True)
class FitCost:
    """Constants of one classifier (in one regime): the fixed seconds ``overhead`` (t0), the
    power law's ``intercept`` (b0), the exponents of n, d, C, epochs, ``onehot_weight`` (ρ:
    a one-hot column's cost against a numeric one's) and ``column_offset`` (d0: a row's own
    cost in columns' worth); the regime covers C ≥ ``min_classes``, n_train ≥ ``min_rows`` and
    d ≥ ``min_columns`` (up to the next regime's)."""

    intercept: float
    exponents: tuple[float, float, float, float]
    overhead: float = 0.0
    min_classes: int = 2
    min_rows: int = 0
    min_columns: int = 0
    onehot_weight: float = 1.0
    #: C counts binary problems (1 for two classes; :func:`fit` sets it); False: the classes,
    #: from 2, as older constants were (a JSON without ``classes_feature``)
    binary_as_one: bool = False
    column_offset: float = 0.0

    def weighted_columns(self, d: float, onehot_share: float = 0.0) -> float:
        """d_w = d · (1 − h + ρ · h): the encoded columns, a one-hot level counted as ρ."""
        return max(d, 1) * (1.0 - onehot_share + self.onehot_weight * onehot_share)

    def seconds(self, n_train: float, d: float, n_classes: float, epochs: float = 1.0,
                onehot_share: float = 0.0) -> float:
        d_w = self.weighted_columns(d, onehot_share)
        logs = (math.log(max(n_train, 1)), math.log(max(d_w + self.column_offset, 1e-9)),
                log_problems(n_classes, self.binary_as_one), math.log(max(epochs, 1)))
        return self.overhead + math.exp(self.intercept + sum(
            b * x for b, x in zip(self.exponents, logs, strict=True)))

    def as_dict(self) -> dict:
        return {"min_classes": self.min_classes, "min_rows": self.min_rows,
                "min_columns": self.min_columns, "overhead": self.overhead,
                "intercept": self.intercept, "exponents": list(self.exponents),
                "onehot_weight": self.onehot_weight, "column_offset": self.column_offset,
                "classes_feature": "problems" if self.binary_as_one else "classes"}

    @classmethod
    def from_dict(cls, body: dict) -> FitCost:
        feature = body.get("classes_feature", "classes")
        if feature not in ("problems", "classes"):
            raise ValueError(f"classes_feature must be 'problems' or 'classes', got {feature!r}")
        offset = float(body.get("column_offset", 0.0))
        if not offset >= 0:
            raise ValueError(f"column_offset must be a number >= 0, got {offset!r}")
        return cls(float(body["intercept"]), tuple(float(e) for e in body["exponents"]),
                   float(body.get("overhead", 0.0)), int(body.get("min_classes", 2)),
                   int(body.get("min_rows", 0)), int(body.get("min_columns", 0)),
                   float(body.get("onehot_weight", 1.0)), feature == "problems", offset)


def log_problems(n_classes, binary_as_one: bool = True):
    """log C of the model: C the binary problems of a one-vs-rest fit (``binary_as_one``: 1 for
    two classes, whose fit is one binary model; else the classes) and at least 2 classes
    otherwise. Takes a number or an array."""
    if np.ndim(n_classes) == 0:  # the plan's path: thousands of calls per workflow load
        return 0.0 if binary_as_one and n_classes <= 2 else math.log(max(n_classes, 2))
    logs = np.log(np.maximum(n_classes, 2))
    return np.where(np.asarray(n_classes) <= 2, 0.0, logs) if binary_as_one else logs


@dataclass
class CostModel:
    #: classifier → its regimes, by ascending (``min_classes``, ``min_rows``, ``min_columns``);
    #: the first covers the smallest fits
    classifiers: dict[str, tuple[FitCost, ...]]
    source: str
    #: classifier → a: a fit on training rows with continuous noise added to the numeric
    #: features costs 1 + a · (numeric share of the encoded columns) times a clean one
    data_noise: dict[str, float] = field(default_factory=dict)
    #: classifier → φ: a fit whose encoded columns are all few-valued numeric features costs φ
    #: times one on continuous values (1 for a classifier without an entry)
    few_valued: dict[str, float] = field(default_factory=dict)
    #: classifier → the worst miss of its estimates from the shape alone: measured / estimated
    #: seconds of a fit on realistic data the model never saw (noisy, overlapping classes;
    #: benchmarks/bench_cost_realistic.py); a job's time limit covers it (:meth:`miss_bound`)
    misses: dict[str, float] = field(default_factory=dict)

    def miss_bound(self, classifier: str) -> float:
        """How far a fit may run past the shape's estimate: the measured worst miss, at least
        :data:`LIMIT_FACTOR` (the factor of an estimate from probe fits on the data)."""
        return max(LIMIT_FACTOR, float(self.misses.get(classifier, LIMIT_FACTOR)))

    def regime(self, classifier: str, n_train: float, n_classes: float,
               d: float = 0) -> FitCost:
        """The constants that cover a fit of ``n_train`` rows, ``n_classes`` classes and ``d``
        encoded columns (the regimes are a grid over the three: the last one in ascending
        order that covers the fit has the highest threshold it reaches on every axis)."""
        if classifier not in self.classifiers:
            raise ValueError(f"the cost model has no constants for {classifier!r} "
                             f"({self.source}); recalibrate it")
        regimes = self.classifiers[classifier]
        covering = [r for r in regimes if r.min_classes <= n_classes and r.min_rows <= n_train
                    and r.min_columns <= d]
        return covering[-1] if covering else regimes[0]

    def seconds(self, classifier: str, n_train: float, d: float, n_classes: float,
                epochs: float = 1.0, noisy_share: float = 0.0,
                onehot_share: float = 0.0, few_valued_share: float = 0.0) -> float:
        """Seconds of one fit; ``noisy_share``: the share of the encoded columns that carry
        continuous data noise (0 without a data perturbation that adds noise);
        ``onehot_share``: the share that are one-hot levels of categorical features;
        ``few_valued_share``: the share that are few-valued numeric features (0 where noise
        was added to them)."""
        regime = self.regime(classifier, n_train, n_classes, d)
        base = regime.seconds(n_train, d, n_classes, epochs, onehot_share)
        return (base * (1.0 + self.data_noise.get(classifier, 0.0) * noisy_share)
                * self._few_valued_factor(classifier, regime, few_valued_share, d, onehot_share))

    def few_valued_factor(self, classifier: str, few_valued_share: float, n_train: float,
                          d: float, n_classes: float, onehot_share: float = 0.0) -> float:
        """What few-valued columns make a fit of ``classifier`` cost against one on continuous
        values (:func:`few_valued_factor` with its φ and the column offset of the regime that
        covers the fit); 1 for a classifier without φ."""
        return self._few_valued_factor(classifier, self.regime(classifier, n_train, n_classes, d),
                                       few_valued_share, d, onehot_share)

    def _few_valued_factor(self, classifier: str, regime: FitCost, few_valued_share: float,
                           d: float, onehot_share: float) -> float:
        phi = self.few_valued.get(classifier, 1.0)
        if phi == 1.0 or not few_valued_share:
            return 1.0
        return few_valued_factor(phi, few_valued_share, d, regime.weighted_columns(
            d, onehot_share), regime.column_offset)

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "classifiers": {
            clf: [r.as_dict() for r in regimes] for clf, regimes in self.classifiers.items()},
            "data_noise": self.data_noise, "few_valued": self.few_valued,
            "misses": self.misses}, indent=1) + "\n"


def load(path: str | Path | None = None) -> CostModel:
    """The cost model in ``path`` (a calibration of your own), or the shipped one. A
    classifier's entry is a list of regimes, or one set of constants (one regime)."""
    path = Path(path) if path else SHIPPED
    body = json.loads(path.read_text())
    classifiers = {}
    for clf, entry in body["classifiers"].items():
        regimes = entry if isinstance(entry, list) else [entry]
        classifiers[clf] = tuple(sorted((FitCost.from_dict(r) for r in regimes),
                                        key=lambda r: (r.min_classes, r.min_rows,
                                                       r.min_columns)))
    return CostModel(classifiers, body.get("source", str(path)), dict(body.get("data_noise", {})),
                     dict(body.get("few_valued", {})), dict(body.get("misses", {})))


def few_valued_factor(phi: float, few_valued_share: float, d: float = 1.0,
                      weighted_d: float | None = None, column_offset: float = 0.0) -> float:
    """(d0 + d_w − (1 − φ) · f · d) / (d0 + d_w): a fit whose ``d`` encoded columns are
    few-valued numeric features in share f against one on continuous values, φ what such a
    column costs against a continuous one, d_w the weighted columns (``weighted_d``: one-hot
    levels counted as ρ; default d) and d0 the regime's column offset (a row's own cost, which
    few values do not lessen). Without an offset: 1 − f + φ · f."""
    weighted_d = d if weighted_d is None else weighted_d
    whole = column_offset + weighted_d
    return (whole - (1.0 - phi) * few_valued_share * d) / whole


def column_weight_of_ratio(ratio: float, d: float, column_offset: float) -> float:
    """φ from a timed ratio (a fit with every one of its ``d`` columns few-valued over one on
    continuous values, in a regime with ``column_offset`` d0): the φ at which
    :func:`few_valued_factor` with f = 1 gives ``ratio``, 1 − (1 − ratio) · (d0 + d) / d. A
    ratio that leaves φ below 0 contradicts the offset: ValueError."""
    phi = 1.0 - (1.0 - ratio) * (column_offset + d) / d
    if phi < 0:
        raise ValueError(f"a few-valued time ratio of {ratio:.3f} at {d:g} columns is below "
                         f"what the column offset {column_offset:.1f} allows "
                         f"({column_offset / (column_offset + d):.3f}); recalibrate the model")
    return phi


def onehot_share(n_numeric: int, d: int) -> float:
    """The share of a dataset's ``d`` encoded columns that are one-hot levels of its categorical
    features (the model's h): all but the numeric ones."""
    return min(1.0, max(0.0, 1.0 - n_numeric / d)) if d else 0.0


def _fit_regime(rows: np.ndarray, w: np.ndarray, with_overhead: bool) -> tuple:
    """(t0, b0, exponents, ρ, d0) of one regime: the power law by weighted least squares in log
    space, then, with ``with_overhead`` and enough samples, t0 and the power law together by
    non-linear least squares of the log residuals (scipy's trust-region solver, started from the
    power law; kept only where it fits better). ρ is fitted with them where the samples (column
    6, the one-hot share) mix one-hot and numeric columns and d varies; else it is 1. d0 (≥ 0)
    is fitted with them where the samples have at least :data:`MIN_COLUMN_SIZES` distinct d
    and enough samples for one more constant; else it is 0."""
    X = np.log(np.maximum(rows[:, :4], [1, 1, 2, 1]))
    X[:, 2] = log_problems(rows[:, 2])
    y = np.log(np.maximum(rows[:, 4], 1e-6))
    share = rows[:, 5] if rows.shape[1] > 5 else np.zeros(len(rows))
    varies = X.std(axis=0) > 1e-9
    design = np.column_stack([np.ones(len(X)), X[:, varies]])
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)
    overhead, rho, offset = 0.0, 1.0, 0.0
    mixed = bool(varies[1] and share.std() > 1e-9)
    n_free = design.shape[1] + 1 + mixed
    with_overhead = with_overhead and len(X) >= MIN_SAMPLES_PER_CONSTANT * n_free
    with_offset = (with_overhead and len(np.unique(rows[:, 1])) >= MIN_COLUMN_SIZES
                   and len(X) >= MIN_SAMPLES_PER_CONSTANT * (n_free + 1))
    if with_overhead or mixed:
        from scipy.optimize import least_squares

        d_column = int(varies[0]) + 1  # log d's column in the design
        d = np.exp(X[:, 1])

        def log_seconds(p):
            t0, c = (p[0], p[1:]) if with_overhead else (None, p)
            c, d0 = (c[:-1], c[-1]) if with_offset else (c, 0.0)
            c, log_rho = (c[:-1], c[-1]) if mixed else (c, 0.0)
            shifted = design
            if mixed or with_offset:
                shifted = design.copy()
                shifted[:, d_column] = np.log(d * (1.0 + share * np.expm1(log_rho)) + d0)
            power = shifted @ c
            return np.logaddexp(t0, power) if with_overhead else power

        start = np.concatenate([[y.min() - np.log(10)] if with_overhead else [], coef,
                                [0.0] if mixed else [], [d.min()] if with_offset else []])
        lower = np.full(len(start), -np.inf)
        lower[-1] = 0.0 if with_offset else -np.inf  # d0 ≥ 0
        power_law = sw * (design @ coef - y)
        result = least_squares(lambda p: sw * (log_seconds(p) - y), start,
                               bounds=(lower, np.inf))
        if result.success and (result.fun ** 2).sum() < (power_law ** 2).sum():
            p = result.x
            if with_overhead:
                overhead, p = float(np.exp(p[0])), p[1:]
            if with_offset:
                offset, p = float(p[-1]), p[:-1]
            if mixed:
                rho, p = float(np.exp(p[-1])), p[:-1]
            coef = p
    exps = np.zeros(4)
    exps[varies] = coef[1:]
    return overhead, float(coef[0]), tuple(float(e) for e in exps), rho, offset


def fit(samples: dict[str, np.ndarray], *, source: str,
        weights: dict[str, np.ndarray] | None = None,
        regimes: dict[str, tuple[tuple[str, int], ...]] | None = None,
        with_overhead: bool = True) -> CostModel:
    """Fit the model, per classifier and regime: ``samples[clf]`` is an (m × 5) array of
    (n_train, d, C, epochs, seconds), or (m × 6) with the one-hot share of d; ``weights[clf]``
    optional weights of its rows; ``regimes[clf]`` the ``("classes" | "rows" | "columns",
    threshold)`` pairs from which its fit changes (default: its spec's ``cost_regimes``).
    Exponents of a factor that does not vary in a regime's samples are 0 (nothing can be learnt
    about them); a regime without samples is left out (the one below it covers its fits)."""
    out = {}
    for clf, rows in samples.items():
        rows = np.asarray(rows, dtype=float)
        w = np.asarray(weights[clf], dtype=float) if weights and clf in weights \
            else np.ones(len(rows))
        bounds = regimes[clf] if regimes and clf in regimes else _spec_regimes(clf)
        unknown = {axis for axis, _ in bounds} - set(REGIME_AXES)
        if unknown:
            raise ValueError(f"{clf}: cost regimes by {sorted(unknown)}; the axes are "
                             f"{list(REGIME_AXES)}")
        lows = [[REGIME_AXES[axis][1], *sorted(t for a, t in bounds if a == axis)]
                for axis in REGIME_AXES]
        ranges = [list(zip(low, [*low[1:], math.inf], strict=True)) for low in lows]
        fitted = []
        for box in itertools.product(*ranges):
            inside = np.ones(len(rows), dtype=bool)
            for (column, _), (low, high) in zip(REGIME_AXES.values(), box, strict=True):
                inside &= (rows[:, column] >= low) & (rows[:, column] < high)
            if inside.any():
                overhead, intercept, exponents, rho, offset = _fit_regime(
                    rows[inside], w[inside], with_overhead)
                fitted.append(FitCost(intercept, exponents, overhead,
                                      *(low for low, _ in box), onehot_weight=rho,
                                      binary_as_one=True, column_offset=offset))
        out[clf] = tuple(fitted)
    return CostModel(out, source)


def _trains_for_epochs(classifier: str) -> bool:
    """Whether a classifier's time grows with its epochs (its spec's ``epochs``). A classifier
    of the user's own, which a run may hold but this process has not registered (its
    declaration is in the study's config), never trains for epochs (modelvar.models.user)."""
    from modelvar.models.registry import spec

    try:
        return spec(classifier).epochs is not None
    except ValueError:  # not registered here: a declared classifier
        return False


def fit_epochs(runs, shapes: dict[str, dict]) -> list[float]:
    """The epochs each fit of a runs table trained for: its ``epochs`` column (fit jobs record
    it; older runs tables lack it) for the classifiers that train for epochs, else its dataset's
    ``shapes[dataset]["epochs"]``, else the classifier's default (its spec's; a run's own
    ``classifier_settings`` could have set others, which older tables do not say); 1 for the
    classifiers that do not train for epochs."""
    import pandas as pd

    from modelvar.models.registry import spec

    recorded = runs["epochs"] if "epochs" in runs.columns else [None] * len(runs)
    out = []
    for classifier, dataset, value in zip(runs["classifier"], runs["dataset"], recorded,
                                          strict=True):
        if not _trains_for_epochs(classifier):
            out.append(1.0)
        elif value is not None and not pd.isna(value):
            out.append(float(value))
        else:
            out.append(float(shapes[dataset].get("epochs", spec(classifier).epochs)))
    return out


def _spec_regimes(classifier: str) -> tuple[tuple[str, int], ...]:
    from modelvar.models.registry import spec

    try:
        return tuple(spec(classifier).cost_regimes)
    except ValueError:  # not registered: one regime
        return ()


def calibrate(runs, shapes: dict[str, dict], *, source: str,
              base: CostModel | None = None) -> CostModel:
    """A cost model from runs tables (``runs``: a DataFrame with ``dataset``, ``classifier``,
    ``n_train``, ``fit_seconds`` and, if it has one, ``device``; ``shapes[dataset]`` =
    ``{"d": …, "n_classes": …, "epochs": …, "n_numeric": …}``, the last for the one-hot share
    of d, 0 without it), e.g. the aggregated runs of a finished study.
    Each fit counts the epochs it trained for (:func:`fit_epochs`: the runs table's ``epochs``
    column, else the shape's, else the spec's default) where its classifier trains for epochs,
    1 for the others. Only fits on the CPU are fitted: the constants are one core's, and the plan
    divides a GPU-tagged classifier's by ``jobs.gpu_speedup`` (fits that ran on a GPU would be
    divided twice). A classifier whose fits all ran on a GPU keeps ``base``'s constants, if
    given.

    Continuous data noise slows some classifiers (``base.data_noise``, e.g. xgb's histograms
    fill up): a fit with a ``noisy_share`` > 0 (a column of ``runs``: the share of its encoded
    columns that its data perturbation gave new values, :func:`modelvar.planning.plan.noisy_share`)
    counts as ``fit_seconds / (1 + a · noisy_share)`` of clean data, and the model keeps ``a``,
    by which the plan multiplies again; without it, a run with noisy cells would average clean
    and noisy fits into one constant, too slow for the one and too fast for the other. In the
    same way a fit with a ``few_valued_share`` f > 0 (a column of ``runs``: the share of its
    encoded columns that are few-valued numeric features,
    :func:`modelvar.planning.plan.few_valued_share`) counts as ``fit_seconds`` over its
    few-valued factor (:func:`few_valued_factor` with φ, ``base.few_valued``, and the column
    offset of the fit's regime: ``base``'s for a first fit, then that fit's for the second,
    whose constants are kept), and the model keeps φ."""
    present = set(runs["classifier"])
    if "device" in runs.columns:
        runs = runs[runs["device"] == "cpu"]
    for share in ("noisy_share", "few_valued_share"):
        if share not in runs.columns:
            runs = runs.assign(**{share: 0.0})
    factors = base.data_noise if base is not None else {}
    few_valued = base.few_valued if base is not None else {}
    runs = runs.assign(epochs=fit_epochs(runs, shapes))
    columns = ["dataset", "classifier", "n_train", "fit_seconds", "noisy_share",
               "few_valued_share", "epochs"]
    rows = list(runs[columns].itertuples())

    def clean_samples(offsets: CostModel | None) -> dict[str, np.ndarray]:
        """The fits as on clean, continuous data: the few-valued factor with the column
        offsets of ``offsets``'s regimes (none: 1 − f + φ · f)."""
        samples: dict[str, list] = {}
        for row in rows:
            shape = shapes[row.dataset]
            clean = row.fit_seconds / (1.0 + factors.get(row.classifier, 0.0) * row.noisy_share)
            onehot = (onehot_share(shape["n_numeric"], shape["d"]) if "n_numeric" in shape
                      else 0.0)
            if row.few_valued_share and row.classifier in few_valued:
                clean /= (offsets.few_valued_factor(row.classifier, row.few_valued_share,
                                                    row.n_train, shape["d"], shape["n_classes"],
                                                    onehot)
                          if offsets is not None and row.classifier in offsets.classifiers
                          else few_valued_factor(few_valued[row.classifier],
                                                 row.few_valued_share))
            samples.setdefault(row.classifier, []).append(
                (row.n_train, shape["d"], shape["n_classes"], row.epochs, clean, onehot))
        return {k: np.array(v) for k, v in samples.items()}

    samples = clean_samples(base)
    model = fit(samples, source=source)
    if any(row.few_valued_share for row in rows) and few_valued:
        # again with the offsets just fitted, which the plan will use with φ
        model.few_valued = dict(few_valued)
        samples = clean_samples(model)
        model = fit(samples, source=source)
    if base is None:
        return model
    kept = {clf: regimes for clf, regimes in base.classifiers.items()
            if clf in present and clf not in samples}
    fitted = set(kept) | set(samples)
    return CostModel({**kept, **model.classifiers}, source,
                     {clf: a for clf, a in factors.items() if clf in fitted},
                     {clf: phi for clf, phi in few_valued.items() if clf in fitted},
                     {clf: m for clf, m in base.misses.items() if clf in kept})
