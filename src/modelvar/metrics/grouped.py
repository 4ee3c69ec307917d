"""Grouped metrics: overall, by group, disparities, intersections, conditional features.

This is the API proposed in seed ``003_174f69340968f343.txt`` ("Updates for Metrics"), built on
``fairlearn.metrics.MetricFrame`` (the proposal's released form, fairlearn 0.15), which does the
grouping, the empty-intersection bookkeeping and the bootstrap. modelvar adds what the proposal
has and fairlearn dropped or renamed, and reproducibility metrics by group:

==================================  ======================================================
proposal (seed 003)                 here / fairlearn
==================================  ======================================================
``GroupedMetric(metrics, y_true,    positional metrics, ``y_true``, ``y_pred``; fairlearn's
y_pred, sensitive_features=...)``   constructor is keyword-only
list of metrics, list of            list (matched by index) or ``{name: metric}``;
``sample_params``/``params``        fairlearn takes a dict and has no ``params=``
``conditional_features=``           fairlearn's ``control_features=``
``method='minmax'|'to_overall'``    fairlearn's ``'between_groups'|'to_overall'``
metric given as a string            :data:`REGISTRY` (sklearn, fairlearn and modelvar)
early error for non-scalar results  checked here before any disparity is computed
==================================  ======================================================

Disparities, for one metric with group values m_g and overall value m (per conditional level):

* ``group_min`` = min_g m_g, ``group_max`` = max_g m_g
* ``difference(minmax)``     = max_g m_g − min_g m_g
* ``difference(to_overall)`` = max_g |m_g − m|
* ``ratio(minmax)``          = min_g m_g / max_g m_g
* ``ratio(to_overall)``      = min_g min(m_g/m, m/m_g)

Empty intersections of several sensitive features appear in ``by_group`` as NaN rows and are
skipped by every aggregate. A ratio is only meaningful for a metric that cannot be negative:
asking for the ratio of a signed metric (κ, correlations) is an error.

**Reproducibility by group** (:func:`reproducibility_by_group`): with ``y_pred`` an (n samples ×
k runs) matrix, fairlearn slices rows, so each group receives its own runs matrix and a
``mean_<metric>`` function returns the mean over the k(k−1)/2 pairs of any pairwise metric of
:mod:`modelvar.metrics.pairwise` (e.g. mean ec_global, mean pa). Confidence intervals come
either from fairlearn's bootstrap over samples (``n_boot``, ``ci_quantiles``: test-set
uncertainty) or from the jackknife over runs of :mod:`modelvar.metrics.inference`
(:func:`reproducibility_ci_by_group`: run-to-run uncertainty for the fixed test set).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import sklearn.metrics as skm
from fairlearn import metrics as flm
from fairlearn.metrics import MetricFrame

from modelvar.metrics import registry as pairwise_registry
from modelvar.metrics.inference import jackknife_ci
from modelvar.metrics.pairwise import encode_labels, pairwise_metrics
from modelvar.metrics.probabilistic import brier, log_loss

METHODS = {
    "minmax": "between_groups", "between_groups": "between_groups", "to_overall": "to_overall"
}
AGGREGATES = ("difference", "ratio", "group_min", "group_max")


class GroupedMetricError(ValueError):
    """Inputs to a grouped metric are malformed, or an aggregate is undefined for a metric."""


@dataclass(frozen=True)
class RegisteredMetric:
    """A metric known by name: the function and whether it can take negative values."""

    func: Callable
    signed: bool
    about: str


def _runs_as_indices(y_true, runs) -> tuple[np.ndarray, np.ndarray]:
    """(n,) truth and (n, k) runs matrix of any labels → int indices (truth, runs as k × n)."""
    runs = np.asarray(runs, dtype=object)
    if runs.ndim != 2:
        raise GroupedMetricError(
            f"reproducibility metrics need y_pred as an (n samples × k runs) matrix, "
            f"got {runs.ndim}-D"
        )
    yi, pi, _ = encode_labels(np.asarray(y_true, dtype=object), runs.T)
    return yi, pi


def mean_pairwise(metric: str, *, ec_local_undefined: str = "nan") -> Callable:
    """``f(y_true, runs)``: mean over run pairs of a pairwise metric, NaN pairs left out.

    ``runs`` is (n samples × k runs); labels may be of any type shared with ``y_true``.
    """
    known = pairwise_registry.names()
    if metric not in known:
        raise GroupedMetricError(f"unknown pairwise metric {metric!r}; known: {list(known)}")

    def f(y_true, runs) -> float:
        yi, pi = _runs_as_indices(y_true, runs)
        if len(yi) == 0:
            return np.nan
        values = pairwise_metrics(
            yi, pi, metrics=[metric], ec_local_undefined=ec_local_undefined
        )[metric].to_numpy(float)
        return float(np.nanmean(values)) if np.isfinite(values).any() else np.nan

    f.__name__ = f"mean_{metric}"
    f.signed = pairwise_registry.metric(metric).signed  # read by GroupedMetric.ratio()
    f.__doc__ = f"Mean over all run pairs of pairwise {metric} (modelvar.metrics.pairwise)."
    return f


def mean_run_accuracy(y_true, runs) -> float:
    """Mean over runs of each run's accuracy, for an (n × k) runs matrix."""
    yi, pi = _runs_as_indices(y_true, runs)
    return float((pi == yi).mean()) if len(yi) else np.nan


def sd_run_accuracy(y_true, runs) -> float:
    """Standard deviation (ddof=1) over runs of the runs' accuracies."""
    yi, pi = _runs_as_indices(y_true, runs)
    return float((pi == yi).mean(axis=1).std(ddof=1)) if len(yi) else np.nan


def _proba_metric(func: Callable, name: str) -> Callable:
    def f(y_true, proba) -> float:
        return func(np.asarray(y_true, dtype=np.int64), np.asarray(proba, dtype=float))

    f.__name__ = name
    f.__doc__ = func.__doc__
    return f


def _build_registry() -> dict[str, RegisteredMetric]:
    reg = {
        "accuracy_score": RegisteredMetric(skm.accuracy_score, False, "sklearn"),
        "balanced_accuracy_score": RegisteredMetric(skm.balanced_accuracy_score, False, "sklearn"),
        "precision_score": RegisteredMetric(skm.precision_score, False, "sklearn"),
        "recall_score": RegisteredMetric(skm.recall_score, False, "sklearn"),
        "f1_score": RegisteredMetric(skm.f1_score, False, "sklearn"),
        "zero_one_loss": RegisteredMetric(skm.zero_one_loss, False, "sklearn"),
        "log_loss": RegisteredMetric(skm.log_loss, False, "sklearn (y_pred: probabilities)"),
        "roc_auc_score": RegisteredMetric(skm.roc_auc_score, False, "sklearn (y_pred: scores)"),
        "cohen_kappa_score": RegisteredMetric(skm.cohen_kappa_score, True, "sklearn"),
        "matthews_corrcoef": RegisteredMetric(skm.matthews_corrcoef, True, "sklearn"),
        "confusion_matrix": RegisteredMetric(skm.confusion_matrix, False, "sklearn (not scalar)"),
        "selection_rate": RegisteredMetric(flm.selection_rate, False, "fairlearn"),
        "true_positive_rate": RegisteredMetric(flm.true_positive_rate, False, "fairlearn"),
        "false_positive_rate": RegisteredMetric(flm.false_positive_rate, False, "fairlearn"),
        "true_negative_rate": RegisteredMetric(flm.true_negative_rate, False, "fairlearn"),
        "false_negative_rate": RegisteredMetric(flm.false_negative_rate, False, "fairlearn"),
        "count": RegisteredMetric(flm.count, False, "fairlearn"),
        "cross_entropy": RegisteredMetric(
            _proba_metric(log_loss, "cross_entropy"), False,
            "modelvar (y_true: class indices, y_pred: n × C probabilities)",
        ),
        "brier": RegisteredMetric(
            _proba_metric(brier, "brier"), False,
            "modelvar, unhalved multi-class Brier (y_pred: n × C probabilities)",
        ),
        "mean_accuracy": RegisteredMetric(
            mean_run_accuracy, False, "modelvar (y_pred: n × k runs)"
        ),
        "sd_accuracy": RegisteredMetric(sd_run_accuracy, False, "modelvar (y_pred: n × k runs)"),
    }
    for m in pairwise_registry.metrics():
        reg[f"mean_{m.name}"] = RegisteredMetric(
            mean_pairwise(m.name), m.signed, "modelvar pairwise (y_pred: n × k runs)"
        )
    return reg


REGISTRY: dict[str, RegisteredMetric] = _build_registry()


def _resolve(metric, name: str | None = None) -> tuple[str, Callable, bool | None]:
    """(name, function, signed) of a metric given as a registry string or a callable.

    ``name`` (a dict key) overrides the metric's own name.
    """
    if isinstance(metric, str):
        if metric not in REGISTRY:
            raise GroupedMetricError(
                f"unknown metric name {metric!r}; known names: {sorted(REGISTRY)}"
            )
        entry = REGISTRY[metric]
        return name or metric, entry.func, entry.signed
    if not callable(metric):
        raise GroupedMetricError(f"a metric must be a callable or a registry name, got {metric!r}")
    name = name or getattr(metric, "__name__", None)
    if not name:
        raise GroupedMetricError(
            f"metric {metric!r} has no __name__ (e.g. a functools.partial): pass metrics as "
            "a dict {name: function} to name it"
        )
    known = [e for e in REGISTRY.values() if e.func is metric]
    return name, metric, known[0].signed if known else getattr(metric, "signed", None)


def _as_list(value, n_metrics: int, what: str) -> list:
    if value is None:
        return [None] * n_metrics
    if isinstance(value, Mapping):
        if n_metrics != 1:
            raise GroupedMetricError(
                f"{what} is one dict but there are {n_metrics} metrics: pass a list of dicts "
                "matched to the metrics by index"
            )
        return [value]
    if isinstance(value, (list, tuple)):
        if len(value) != n_metrics:
            raise GroupedMetricError(
                f"{what} has {len(value)} entries but there are {n_metrics} metrics"
            )
        return list(value)
    raise GroupedMetricError(
        f"{what} must be a dict or a list of dicts, got {type(value).__name__}"
    )


def _n_rows(value) -> int:
    if isinstance(value, (pd.Series, pd.DataFrame, np.ndarray)):
        return len(value)
    return len(np.asarray(value, dtype=object))


def _feature_frame(features, base: str, n: int) -> pd.DataFrame:
    """Features as a DataFrame of named columns, checked for length and missing values."""
    if isinstance(features, pd.DataFrame):
        frame = features.copy()
    elif isinstance(features, pd.Series):
        frame = features.to_frame(name=features.name if features.name is not None else f"{base}0")
    elif isinstance(features, Mapping):
        frame = pd.DataFrame(dict(features))
    elif isinstance(features, (list, tuple)) and features and all(
        isinstance(f, (pd.Series, np.ndarray, list)) for f in features
    ):
        cols = {}
        for i, f in enumerate(features):
            name = f.name if isinstance(f, pd.Series) and f.name is not None else f"{base}{i}"
            if name in cols:
                raise GroupedMetricError(f"two {base.rstrip('_')}s are named {name!r}")
            length = _n_rows(f)
            if length != n:
                raise GroupedMetricError(
                    f"{base}{i} ({name!r}) has {length} values but y_true has {n}"
                )
            cols[name] = np.asarray(f, dtype=object)
        frame = pd.DataFrame(cols)
    else:
        arr = np.asarray(features, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({f"{base}0": arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame({f"{base}{i}": arr[:, i] for i in range(arr.shape[1])})
        else:
            raise GroupedMetricError(f"{base.rstrip('_')}s must be 1-D or 2-D, got {arr.ndim}-D")
    if len(frame) != n:
        raise GroupedMetricError(
            f"{base.rstrip('_')}s have {len(frame)} rows but y_true has {n} values"
        )
    frame.columns = [str(c) for c in frame.columns]
    for col in frame.columns:
        missing = int(pd.isna(frame[col]).sum())
        if missing:
            raise GroupedMetricError(
                f"feature {col!r} has {missing} missing value(s): give them an explicit level "
                "(e.g. 'missing') or drop those samples before grouping"
            )
    return frame.reset_index(drop=True)


class GroupedMetric:
    """Metrics overall and by group (seed 003), computed by ``fairlearn.metrics.MetricFrame``.

    Parameters
    ----------
    metrics : a callable, a registry name (:data:`REGISTRY`), a list of these, or a dict
        ``{name: callable or registry name}``. Columns are named by ``__name__``, the string
        given, or the dict key.
    y_true, y_pred : array-likes with one entry (row) per sample; ``y_pred`` may be 2-D (an
        n × k runs matrix, or n × C probabilities), in which case groups get row slices.
    sensitive_features : one feature (Series, array, list) or several (DataFrame, dict, list of
        Series, 2-D array); several give intersections on a MultiIndex.
    conditional_features : same forms; adds leading index levels to ``overall`` and ``by_group``,
        and disparities are computed per conditional level.
    sample_params : per-sample arguments sliced with the samples (e.g. ``sample_weight``): a dict
        for one metric, a list of dicts matched to a list of metrics, or ``{name: dict}``.
    params : arguments broadcast unchanged to the metric (e.g. ``normalize=False``), same forms.
        A key present in both ``sample_params`` and ``params`` is an error.
    n_boot, ci_quantiles, random_state : fairlearn's bootstrap over samples.
    """

    def __init__(
        self,
        metrics,
        y_true,
        y_pred,
        *,
        sensitive_features,
        conditional_features=None,
        sample_params=None,
        params=None,
        n_boot: int | None = None,
        ci_quantiles: Sequence[float] | None = None,
        random_state: int | None = None,
    ):
        n = _n_rows(y_true)
        if _n_rows(y_pred) != n:
            raise GroupedMetricError(f"y_pred has {_n_rows(y_pred)} rows but y_true has {n}")
        if n == 0:
            raise GroupedMetricError("no samples: y_true is empty")
        names, funcs, signed = self._metrics(metrics)
        if isinstance(metrics, Mapping):
            sample_params = self._by_name(sample_params, names, "sample_params")
            params = self._by_name(params, names, "params")
        sample_list = _as_list(sample_params, len(names), "sample_params")
        param_list = _as_list(params, len(names), "params")
        bound: dict[str, Callable] = {}
        sliced: dict[str, dict] = {}
        for name, func, sp, pp in zip(names, funcs, sample_list, param_list, strict=True):
            sp, pp = dict(sp or {}), dict(pp or {})
            both = sorted(set(sp) & set(pp))
            if both:
                raise GroupedMetricError(
                    f"metric {name!r}: key(s) {both} appear in both sample_params and params"
                )
            for key, value in sp.items():
                if value is not None and _n_rows(value) != n:
                    raise GroupedMetricError(
                        f"metric {name!r}: sample_params[{key!r}] has {_n_rows(value)} values "
                        f"but y_true has {n}"
                    )
            bound[name] = functools.partial(func, **pp) if pp else func
            if sp:
                sliced[name] = {k: np.asarray(v) for k, v in sp.items()}
        self.metric_names = names
        self._signed = dict(zip(names, signed, strict=True))
        self.sensitive_features = _feature_frame(sensitive_features, "sensitive_feature_", n)
        self.conditional_features = (
            None
            if conditional_features is None
            else _feature_frame(conditional_features, "conditional_feature_", n)
        )
        if self.conditional_features is not None:
            clash = set(self.sensitive_features.columns) & set(self.conditional_features.columns)
            if clash:
                raise GroupedMetricError(
                    f"feature name(s) {sorted(clash)} are both sensitive and conditional"
                )
        if isinstance(y_true, (pd.Series, pd.DataFrame)):
            y_true = y_true.to_numpy()
        if isinstance(y_pred, (pd.Series, pd.DataFrame)):
            y_pred = y_pred.to_numpy()
        self.frame = MetricFrame(
            metrics=bound,
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=self.sensitive_features,
            control_features=self.conditional_features,
            sample_params=sliced or None,
            n_boot=n_boot,
            ci_quantiles=list(ci_quantiles) if ci_quantiles is not None else None,
            random_state=random_state,
        )

    # ----------------------------------------------------------------- construction helpers
    @staticmethod
    def _metrics(metrics) -> tuple[list[str], list[Callable], list[bool | None]]:
        if isinstance(metrics, Mapping):
            items = [_resolve(m, str(key)) for key, m in metrics.items()]
        else:
            listed = list(metrics) if isinstance(metrics, (list, tuple)) else [metrics]
            if not listed:
                raise GroupedMetricError("no metrics given")
            items = [_resolve(m) for m in listed]
        names = [name for name, _, _ in items]
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise GroupedMetricError(f"metric name(s) {dup} given more than once")
        return names, [f for _, f, _ in items], [s for _, _, s in items]

    @staticmethod
    def _by_name(value, names: list[str], what: str):
        if value is None or not isinstance(value, Mapping):
            return value
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise GroupedMetricError(
                f"with metrics given as a dict, {what} must be keyed by metric name (or be a "
                f"list matched by order); unknown key(s) {unknown}, metrics: {names}"
            )
        return [value.get(name) for name in names]

    # ----------------------------------------------------------------- results
    @property
    def overall(self) -> pd.DataFrame:
        """One row ``overall`` (or one row per conditional level), one column per metric."""
        res = self.frame.overall
        if self.conditional_features is None:
            return pd.DataFrame([res.to_numpy()], index=["overall"], columns=list(res.index))
        return res

    @property
    def by_group(self) -> pd.DataFrame:
        """One row per group (MultiIndex for intersections, conditional levels first)."""
        return self.frame.by_group

    def _selected(self, metrics: Sequence[str] | None) -> list[str]:
        if metrics is None:
            return list(self.metric_names)
        chosen = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [m for m in chosen if m not in self.metric_names]
        if unknown:
            raise GroupedMetricError(f"no metric(s) {unknown} here; metrics: {self.metric_names}")
        return chosen

    def _check_scalar(self, operation: str, names: list[str]) -> None:
        for name in names:
            values = list(self.by_group[name]) + list(self.overall[name])
            for v in values:
                if isinstance(v, numbers.Real) and not isinstance(v, bool):
                    continue
                kind = type(v).__name__
                if hasattr(v, "shape"):
                    kind += f" of shape {np.shape(v)}"
                raise GroupedMetricError(
                    f"{operation}() needs a real scalar per group, but metric {name!r} "
                    f"returned a {kind}"
                )

    def _check_ratio(self, names: list[str]) -> None:
        for name in names:
            if self._signed[name]:
                raise GroupedMetricError(
                    f"ratio() is meaningless for {name!r}: it can be zero or negative "
                    "(a chance-corrected or correlation metric); use difference()"
                )
            values = np.concatenate(
                [self.by_group[name].to_numpy(float), self.overall[name].to_numpy(float)]
            )
            if (values[~np.isnan(values)] < 0).any():
                raise GroupedMetricError(
                    f"ratio() is meaningless for {name!r}: it takes negative values here; "
                    "use difference()"
                )

    @staticmethod
    def _method(method: str) -> str:
        if method not in METHODS:
            raise GroupedMetricError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        return METHODS[method]

    @staticmethod
    def _pick(result, names: list[str]):
        return result[names] if isinstance(result, pd.DataFrame) else result.loc[names]

    def group_min(self, metrics: Sequence[str] | None = None):
        """Smallest group value of each metric (per conditional level)."""
        names = self._selected(metrics)
        self._check_scalar("group_min", names)
        return self._pick(self.frame.group_min(errors="coerce"), names)

    def group_max(self, metrics: Sequence[str] | None = None):
        """Largest group value of each metric (per conditional level)."""
        names = self._selected(metrics)
        self._check_scalar("group_max", names)
        return self._pick(self.frame.group_max(errors="coerce"), names)

    def difference(self, method: str = "minmax", metrics: Sequence[str] | None = None):
        """``minmax``: max − min over groups; ``to_overall``: max |group − overall|.

        ``metrics`` restricts the result to some columns (default: all).
        """
        m, names = self._method(method), self._selected(metrics)
        self._check_scalar("difference", names)
        return self._pick(self.frame.difference(method=m, errors="coerce"), names)

    def ratio(self, method: str = "minmax", metrics: Sequence[str] | None = None):
        """``minmax``: min/max over groups; ``to_overall``: min over groups of the ratio ≤ 1.

        ``metrics`` restricts the result to some columns (default: all); every selected metric
        must be non-negative.
        """
        m, names = self._method(method), self._selected(metrics)
        self._check_scalar("ratio", names)
        self._check_ratio(names)
        return self._pick(self.frame.ratio(method=m, errors="coerce"), names)

    # ----------------------------------------------------------------- bootstrap intervals
    @property
    def overall_ci(self):
        return self.frame.overall_ci

    @property
    def by_group_ci(self):
        return self.frame.by_group_ci

    def difference_ci(self, method: str = "minmax"):
        return self.frame.difference_ci(method=self._method(method))

    def ratio_ci(self, method: str = "minmax"):
        self._check_ratio(self.metric_names)
        return self.frame.ratio_ci(method=self._method(method))

    def aggregate(self, name: str, method: str = "minmax", metrics: Sequence[str] | None = None):
        """``difference``/``ratio`` (with ``method``), ``group_min`` or ``group_max`` by name."""
        if name not in AGGREGATES:
            raise GroupedMetricError(f"aggregate must be one of {AGGREGATES}, got {name!r}")
        if name in ("difference", "ratio"):
            return getattr(self, name)(method=method, metrics=metrics)
        return getattr(self, name)(metrics=metrics)


# --------------------------------------------------------------------- derived scalar metrics
def make_derived_metric(
    aggregate: str, metric, *, sample_param_names: Sequence[str] = (), method: str = "minmax"
) -> Callable:
    """A scalar function ``f(y_true, y_pred, *, sensitive_features, **kwargs)`` (seed 003).

    ``kwargs`` named in ``sample_param_names`` are sliced with the samples; the others are passed
    to ``metric`` unchanged; ``method=`` may be overridden per call for difference and ratio.
    Conditional features are not supported (the proposal leaves their meaning open).
    """
    if aggregate not in AGGREGATES:
        raise GroupedMetricError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    name, _, _ = _resolve(metric)
    GroupedMetric._method(method)
    sample_names = set(sample_param_names)

    def derived(y_true, y_pred, *, sensitive_features, method: str = method, **kwargs) -> float:
        sp = {k: v for k, v in kwargs.items() if k in sample_names}
        pp = {k: v for k, v in kwargs.items() if k not in sample_names}
        gm = GroupedMetric(
            {name: metric}, y_true, y_pred, sensitive_features=sensitive_features,
            sample_params={name: sp} if sp else None, params={name: pp} if pp else None,
        )
        return float(gm.aggregate(aggregate, method=method)[name])

    derived.__name__ = f"{name}_{aggregate}"
    derived.__doc__ = f"{aggregate} of {name} over the groups of sensitive_features (seed 003)."
    return derived


def make_grouped_scorer(
    metric,
    sensitive_features: pd.Series,
    indexed_params: Mapping[str, pd.Series] | None = None,
    params: Mapping | None = None,
    *,
    disparity_measure: str = "difference",
    relative_to: str = "min",
    greater_is_better: bool = False,
):
    """A scikit-learn scorer of a group disparity, for ``GridSearchCV`` and friends (seed 003).

    scikit-learn hands a scorer only the fold's ``y_true`` and ``y_pred``. When ``y`` is a pandas
    Series, the fold keeps the original index, which selects the fold's sensitive feature and
    per-sample parameters (the proposal's workaround). ``relative_to``: ``"min"`` (max − min or
    min/max over groups) or ``"overall"`` (relative to the *fold's* overall value).
    """
    if not isinstance(sensitive_features, pd.Series):
        raise GroupedMetricError(
            "make_grouped_scorer needs sensitive_features as a pandas Series (its index selects "
            "each fold's rows)"
        )
    if disparity_measure not in ("difference", "ratio"):
        raise GroupedMetricError(
            f"disparity_measure must be 'difference' or 'ratio', got {disparity_measure!r}"
        )
    methods = {"min": "minmax", "overall": "to_overall"}
    if relative_to not in methods:
        raise GroupedMetricError(f"relative_to must be 'min' or 'overall', got {relative_to!r}")
    if sensitive_features.index.has_duplicates:
        raise GroupedMetricError("sensitive_features has a duplicated index")
    indexed_params = dict(indexed_params or {})
    for key, value in indexed_params.items():
        if not isinstance(value, pd.Series) or not value.index.equals(sensitive_features.index):
            raise GroupedMetricError(
                f"indexed_params[{key!r}] must be a pandas Series with the same index as "
                "sensitive_features"
            )
    name, _, _ = _resolve(metric)
    derived = make_derived_metric(
        disparity_measure, metric, sample_param_names=list(indexed_params),
        method=methods[relative_to],
    )

    def score(y_true, y_pred) -> float:
        if not isinstance(y_true, (pd.Series, pd.DataFrame)):
            raise GroupedMetricError(
                "the grouped scorer received y without an index: pass y to fit() as a pandas "
                "Series so that each fold keeps its row labels"
            )
        missing = y_true.index.difference(sensitive_features.index)
        if len(missing):
            raise GroupedMetricError(
                f"{len(missing)} fold row(s) (e.g. {list(missing[:3])}) are not in "
                "sensitive_features' index"
            )
        rows = y_true.index
        kwargs = {k: v.loc[rows].to_numpy() for k, v in indexed_params.items()}
        kwargs.update(params or {})
        return derived(
            y_true.to_numpy(), y_pred,
            sensitive_features=sensitive_features.loc[rows].to_numpy(), **kwargs,
        )

    score.__name__ = f"{name}_{disparity_measure}"
    return skm.make_scorer(score, greater_is_better=greater_is_better)


# --------------------------------------------------------------------- fairness conveniences
def _fairness_metric(base, aggregate: str, name: str, doc: str):
    """A seed-003 convenience metric: ``aggregate`` of ``base`` over the groups."""
    derived = make_derived_metric(aggregate, base, sample_param_names=["sample_weight"])

    def metric(y_true, y_pred, *, sensitive_features, method="minmax",
               sample_weight=None) -> float:
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        return derived(y_true, y_pred, sensitive_features=sensitive_features, method=method, **kw)

    metric.__name__, metric.__doc__ = name, doc
    return metric


demographic_parity_difference = _fairness_metric(
    flm.selection_rate, "difference", "demographic_parity_difference",
    "Difference of selection rates P(ŷ = 1) between groups.")
demographic_parity_ratio = _fairness_metric(
    flm.selection_rate, "ratio", "demographic_parity_ratio",
    "Ratio of selection rates P(ŷ = 1) between groups.")
true_positive_rate_difference = _fairness_metric(
    flm.true_positive_rate, "difference", "true_positive_rate_difference",
    "Difference of true positive rates between groups.")
true_positive_rate_ratio = _fairness_metric(
    flm.true_positive_rate, "ratio", "true_positive_rate_ratio",
    "Ratio of true positive rates between groups.")
false_positive_rate_difference = _fairness_metric(
    flm.false_positive_rate, "difference", "false_positive_rate_difference",
    "Difference of false positive rates between groups.")
false_positive_rate_ratio = _fairness_metric(
    flm.false_positive_rate, "ratio", "false_positive_rate_ratio",
    "Ratio of false positive rates between groups.")


def equalized_odds_difference(y_true, y_pred, *, sensitive_features, method="minmax") -> float:
    """max(TPR difference, FPR difference) between groups."""
    return max(
        true_positive_rate_difference(y_true, y_pred, sensitive_features=sensitive_features,
                                      method=method),
        false_positive_rate_difference(y_true, y_pred, sensitive_features=sensitive_features,
                                       method=method),
    )


def equalized_odds_ratio(y_true, y_pred, *, sensitive_features, method="minmax") -> float:
    """min(TPR ratio, FPR ratio) between groups."""
    return min(
        true_positive_rate_ratio(y_true, y_pred, sensitive_features=sensitive_features,
                                 method=method),
        false_positive_rate_ratio(y_true, y_pred, sensitive_features=sensitive_features,
                                  method=method),
    )


# --------------------------------------------------------------------- reproducibility by group
def _samples_by_runs(y_true, preds) -> np.ndarray:
    """``preds`` (k runs × n samples, as for :func:`pairwise_metrics`) as the (n × k) matrix
    fairlearn slices by rows; the transposed orientation is refused with a clear error."""
    arr = np.asarray(preds, dtype=object)
    n = _n_rows(y_true)
    if arr.ndim != 2:
        raise GroupedMetricError(f"preds must be a 2-D (k runs × n samples) matrix, got "
                                 f"{arr.ndim}-D")
    if arr.shape[1] != n:
        hint = (" — that is samples × runs: pass preds.T" if arr.shape[0] == n else "")
        raise GroupedMetricError(f"preds has shape {arr.shape} but y_true has {n} samples; "
                                 f"preds must be k runs × n samples{hint}")
    if arr.shape[0] < 2:
        raise GroupedMetricError(f"preds must hold k ≥ 2 runs, got {arr.shape[0]}")
    return arr.T


def reproducibility_by_group(
    y_true,
    preds,
    *,
    sensitive_features,
    metrics: Sequence[str] = ("ec_global", "pa"),
    conditional_features=None,
    ec_local_undefined: str = "nan",
    with_accuracy: bool = True,
    n_boot: int | None = None,
    ci_quantiles: Sequence[float] | None = None,
    random_state: int | None = None,
) -> GroupedMetric:
    """Mean pairwise reproducibility metrics (and mean run accuracy) by group.

    ``preds`` is a (k runs × n samples) matrix of predicted labels, as for
    :func:`~modelvar.metrics.pairwise.pairwise_metrics`. Columns are ``mean_<metric>`` (and
    ``mean_accuracy``); the result supports every disparity of :class:`GroupedMetric`.
    """
    arr = _samples_by_runs(y_true, preds)
    funcs = {f"mean_{m}": mean_pairwise(m, ec_local_undefined=ec_local_undefined) for m in metrics}
    if with_accuracy:
        funcs = {"mean_accuracy": mean_run_accuracy, **funcs}
    return GroupedMetric(
        funcs, y_true, arr, sensitive_features=sensitive_features,
        conditional_features=conditional_features, n_boot=n_boot, ci_quantiles=ci_quantiles,
        random_state=random_state,
    )


def reproducibility_ci_by_group(
    y_true,
    preds,
    *,
    sensitive_features,
    metrics: Sequence[str] = ("ec_global", "pa"),
    level: float = 0.95,
    ec_local_undefined: str = "nan",
) -> pd.DataFrame:
    """Mean pairwise metric per group with its jackknife-over-runs interval.

    ``preds`` is (k runs × n samples), as for :func:`reproducibility_by_group`. Returns a tidy
    table: one row per (group, metric) plus the ``overall`` rows, with ``n``
    (samples in the group), ``mean``, ``se``, ``ci_low``, ``ci_high`` (see
    :func:`modelvar.metrics.inference.jackknife_ci`). Empty intersections are left out.
    """
    arr = _samples_by_runs(y_true, preds)
    n = len(arr)
    features = _feature_frame(sensitive_features, "sensitive_feature_", n)
    yi, pi = _runs_as_indices(y_true, arr)
    n_classes = int(max(yi.max(), pi.max())) + 1
    rows = []
    groups = [("overall", np.arange(n))]
    for key, idx in features.groupby(list(features.columns), sort=True).indices.items():
        label = key if isinstance(key, tuple) else (key,)
        groups.append((" × ".join(map(str, label)), idx))
    for label, idx in groups:
        table = pairwise_metrics(
            yi[idx], pi[:, idx], n_classes=n_classes, metrics=list(metrics),
            ec_local_undefined=ec_local_undefined,
        )
        for m in metrics:
            values = table[m].to_numpy(float)
            se, lo, hi = jackknife_ci(table["run_i"].to_numpy(), table["run_j"].to_numpy(),
                                      values, level,
                                      bounds=pairwise_registry.metric(m).value_range)
            mean = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
            rows.append({"group": label, "metric": m, "n": len(idx), "mean": mean, "se": se,
                         "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)
