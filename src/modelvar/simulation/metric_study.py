"""Simulating repeated predictions without fitting classifiers (seed 000), and scoring how each
pairwise reproducibility metric behaves against the seed's criteria.

Seed ``000_2d1f161e64a3f406.txt`` ("Metric Evaluation: Simulated"): true labels y are draws of a
class variable Y with sorted class probabilities p₁ ≥ … ≥ p_c; k runs' predictions are draws of
Ŷ whose errors follow a *process*.

**Class distributions**: :mod:`modelvar.simulation.class_distributions` (Appendix A).

**Prediction process** (:func:`simulate_runs`). Target accuracy a, maximum error-set size s
(fraction of the test set, s ≥ 1 − a):

* *fixed* error set: one subset S of ⌊s·n⌉ samples; each run errs on each sample of S with
  probability (1 − a)/s and never outside S;
* *variable*: each run errs on (1 − a)·n samples (binomial, capped at s·n) anywhere;
* *dependence* δ ∈ [0, 1]: a base run is drawn from the same process, and each run copies the base
  run's prediction on each sample with probability δ (δ = 0: independent runs). Accuracy is
  unchanged in expectation; only the overlap of errors grows;
* a wrong prediction for true class t is drawn from the *wrong-label distribution* q restricted to
  classes ≠ t: q = p (predicted distribution ≈ true distribution) or another distribution
  (mismatch);
* ``process="random"``: predictions are i.i.d. draws from q, ignoring y (a classifier that learnt
  nothing); then the expected percent agreement of two runs is Σ_c q_c².

**Criteria** (:func:`evaluate`), one number per metric over a grid of simulations (each value is
the mean of the metric over the k(k−1)/2 pairs of one simulation):

* ``rho_accuracy``, ``rho_accuracy_sd``: Spearman correlation with the runs' mean accuracy and with
  the SD of their accuracies. The seed wants these *moderate*: ``moderation`` = 1 − |2|ρ| − 1|
  (1 at |ρ| = 0.5, 0 at |ρ| ∈ {0, 1}).
* ``class_sensitivity``: η² of the metric's accuracy-adjusted residual (residual of a cubic fit on
  mean accuracy) between the (distribution type × number of classes) groups; lower is better.
* ``mismatch_sensitivity``: |Cohen's d| of that residual between simulations whose wrong labels
  follow p and those whose wrong labels follow a different distribution; higher is better.
* ``dependence_auroc``: AUROC separating dependent from independent simulations by the metric's
  residual, direction-free (max(AUC, 1 − AUC)); higher is better.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from modelvar.metrics.pairwise import ALL_METRICS, pairwise_metrics
from modelvar.simulation.class_distributions import DISTRIBUTIONS, class_distribution


# ----------------------------------------------------------------------------- the process
def _wrong_labels(y: np.ndarray, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each true label t, a label ≠ t drawn from q restricted to the other classes (uniform
    over them where q puts all its mass on t)."""
    c = len(q)
    rows = np.arange(len(y))
    weights = np.tile(q, (len(y), 1))
    weights[rows, y] = 0.0
    empty = weights.sum(axis=1) <= 0
    if empty.any():
        weights[empty] = 1.0
        weights[empty, y[empty]] = 0.0
    cum = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(y))[:, None]
    return np.minimum((u > cum).sum(axis=1), c - 1)


def _one_run(y, q, accuracy, subset, error_set, s, rng) -> np.ndarray:
    n = len(y)
    err_rate = 1.0 - accuracy
    wrong = np.zeros(n, dtype=bool)
    if error_set == "fixed":
        if len(subset):
            wrong[subset] = rng.random(len(subset)) < min(1.0, err_rate * n / len(subset))
    else:
        m = min(int(rng.binomial(n, err_rate)), int(round(s * n)))
        wrong[rng.choice(n, size=m, replace=False)] = True
    pred = y.copy()
    pred[wrong] = _wrong_labels(y[wrong], q, rng)
    return pred


def simulate_runs(
    y_true: np.ndarray,
    n_runs: int,
    *,
    accuracy: float,
    rng: np.random.Generator,
    max_error_set: float | None = None,
    error_set: str = "variable",
    dependence: float = 0.0,
    wrong_label_dist: np.ndarray | None = None,
    n_classes: int | None = None,
    process: str = "errors",
) -> np.ndarray:
    """(k, n) predicted class indices for k runs sharing ``y_true`` (see module docstring)."""
    y = np.asarray(y_true, dtype=np.int64)
    c = int(n_classes or (y.max() + 1))
    if c < 2:
        raise ValueError("need at least 2 classes")
    q = np.full(c, 1.0 / c) if wrong_label_dist is None else np.asarray(wrong_label_dist, float)
    if len(q) != c or (q < 0).any() or not np.isclose(q.sum(), 1.0):
        raise ValueError(f"wrong_label_dist must be a probability vector over {c} classes")
    if n_runs < 2:
        raise ValueError("need at least 2 runs")
    if process == "random":
        return rng.choice(c, size=(n_runs, len(y)), p=q)
    if process != "errors":
        raise ValueError(f"process must be 'errors' or 'random', got {process!r}")
    if not 0 <= accuracy <= 1:
        raise ValueError(f"accuracy must be in [0, 1], got {accuracy}")
    s = 1.0 - accuracy if max_error_set is None else float(max_error_set)
    if s < 1.0 - accuracy - 1e-12 or s > 1:
        raise ValueError(f"max_error_set {s} must be in [1 - accuracy, 1] = [{1 - accuracy}, 1]")
    if error_set not in ("fixed", "variable"):
        raise ValueError(f"error_set must be 'fixed' or 'variable', got {error_set!r}")
    if not 0 <= dependence <= 1:
        raise ValueError(f"dependence must be in [0, 1], got {dependence}")
    n = len(y)
    subset = rng.choice(n, size=int(round(s * n)), replace=False)
    base = _one_run(y, q, accuracy, subset, error_set, s, rng)
    runs = np.empty((n_runs, n), dtype=np.int64)
    for i in range(n_runs):
        own = _one_run(y, q, accuracy, subset, error_set, s, rng)
        copy = rng.random(n) < dependence
        runs[i] = np.where(copy, base, own)
    return runs


# ----------------------------------------------------------------------------- the grid
def simulation_grid(
    *,
    n_classes: Sequence[int] = (2, 5, 10),
    distributions: Sequence[str] = DISTRIBUTIONS,
    replicates: int = 10,
) -> pd.DataFrame:
    """The design: every (classes, distribution type, error set, dependent?, mismatch?) combination,
    ``replicates`` times; accuracy, s and δ are drawn per simulation."""
    rows = []
    for c in n_classes:
        for dist in distributions:
            for error_set in ("fixed", "variable"):
                for dependent in (False, True):
                    for mismatch in (False, True):
                        for rep in range(replicates):
                            rows.append({"n_classes": int(c), "distribution": dist,
                                         "error_set": error_set, "dependent": dependent,
                                         "mismatch": mismatch, "replicate": rep})
    return pd.DataFrame(rows)


def _mismatched(p: np.ndarray) -> np.ndarray:
    """A wrong-label distribution unlike p: p reversed (rare classes favoured), or uniform when p
    is already flat."""
    rev = p[::-1].copy()
    return rev if not np.allclose(rev, p) else np.full(len(p), 1.0 / len(p))


def run_simulations(design: pd.DataFrame, *, n_samples: int, n_runs: int,
                    rng: np.random.Generator, metrics: Sequence[str] = ALL_METRICS) -> pd.DataFrame:
    """One row per simulation: its design, realised parameters, accuracy stats and the mean over
    run pairs of every pairwise metric."""
    out = []
    for row in design.itertuples(index=False):
        c = row.n_classes
        p = class_distribution(row.distribution, c, rng)
        y = rng.choice(c, size=n_samples, p=p)
        accuracy = float(rng.uniform(0.5, 0.98))
        s = float(rng.uniform(1 - accuracy, min(1.0, 2 * (1 - accuracy))))
        delta = float(rng.uniform(0.2, 0.9)) if row.dependent else 0.0
        q = _mismatched(p) if row.mismatch else p
        runs = simulate_runs(y, n_runs, accuracy=accuracy, rng=rng, max_error_set=s,
                             error_set=row.error_set, dependence=delta, wrong_label_dist=q,
                             n_classes=c)
        table = pairwise_metrics(y, runs, n_classes=c, metrics=list(metrics))
        accs = (runs == y).mean(axis=1)
        record = row._asdict() | {
            "target_accuracy": accuracy, "max_error_set": s, "dependence": delta,
            "mean_accuracy": float(accs.mean()), "sd_accuracy": float(accs.std(ddof=1)),
            "p_max": float(p[0]),
        }
        for m in metrics:
            values = table[m].to_numpy(float)
            record[m] = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
        out.append(record)
    return pd.DataFrame(out)


def _residual(values: np.ndarray, accuracy: np.ndarray) -> np.ndarray:
    ok = np.isfinite(values)
    res = np.full(len(values), np.nan)
    if ok.sum() > 4:
        coef = np.polyfit(accuracy[ok], values[ok], 3)
        res[ok] = values[ok] - np.polyval(coef, accuracy[ok])
    return res


def _eta_squared(values: np.ndarray, groups: pd.Series) -> float:
    frame = pd.DataFrame({"v": values, "g": groups.to_numpy()}).dropna()
    if frame["v"].var() == 0 or len(frame) < 3:
        return np.nan
    grand = frame["v"].mean()
    between = frame.groupby("g")["v"].agg(["mean", "size"])
    ss_between = float((between["size"] * (between["mean"] - grand) ** 2).sum())
    ss_total = float(((frame["v"] - grand) ** 2).sum())
    return ss_between / ss_total


def _cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        return np.nan
    pooled = np.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1))
                     / (len(a) + len(b) - 2))
    return float(abs(a.mean() - b.mean()) / pooled) if pooled > 0 else np.nan


CRITERIA = {
    # name: (column, higher_is_better)
    "accuracy_moderation": ("accuracy_moderation", True),
    "accuracy_sd_moderation": ("accuracy_sd_moderation", True),
    "class_sensitivity": ("class_sensitivity", False),
    "mismatch_sensitivity": ("mismatch_sensitivity", True),
    "dependence_auroc": ("dependence_auroc", True),
}


def evaluate(sims: pd.DataFrame, metrics: Sequence[str] = ALL_METRICS) -> tuple[pd.DataFrame,
                                                                              pd.DataFrame]:
    """(criteria, ranking): one row per metric with each criterion's value; the ranking table
    adds a rank per criterion (1 = best) and the mean rank."""
    # here, not at import: the simulate jobs never evaluate, and these two imports cost a job
    # more than the rest of its start-up (docs/measurements/job-cost.md)
    from scipy import stats
    from sklearn.metrics import roc_auc_score

    acc = sims["mean_accuracy"].to_numpy()
    acc_sd = sims["sd_accuracy"].to_numpy()
    rows = []
    for m in metrics:
        v = sims[m].to_numpy(float)
        ok = np.isfinite(v)
        rho_acc = stats.spearmanr(v[ok], acc[ok]).statistic if ok.sum() > 2 else np.nan
        rho_sd = stats.spearmanr(v[ok], acc_sd[ok]).statistic if ok.sum() > 2 else np.nan
        res = _residual(v, acc)
        groups = sims["distribution"].astype(str) + "/c=" + sims["n_classes"].astype(str)
        mism = sims["mismatch"].to_numpy(bool)
        dep = sims["dependent"].to_numpy(bool)
        okr = np.isfinite(res)
        auc = roc_auc_score(dep[okr], res[okr]) if len(set(dep[okr])) == 2 else np.nan
        rows.append({
            "metric": m,
            "n_defined": int(ok.sum()),
            "rho_accuracy": rho_acc,
            "rho_accuracy_sd": rho_sd,
            "accuracy_moderation": 1 - abs(2 * abs(rho_acc) - 1),
            "accuracy_sd_moderation": 1 - abs(2 * abs(rho_sd) - 1),
            "class_sensitivity": _eta_squared(res, groups),
            "mismatch_sensitivity": _cohens_d(res[mism], res[~mism]),
            "dependence_auroc": max(auc, 1 - auc) if np.isfinite(auc) else np.nan,
            "dependence_direction": "higher" if auc >= 0.5 else "lower",
        })
    criteria = pd.DataFrame(rows)
    ranking = criteria[["metric"]].copy()
    for name, (col, higher) in CRITERIA.items():
        ranking[f"rank_{name}"] = criteria[col].rank(ascending=not higher, method="min",
                                                     na_option="bottom").astype(int)
    ranking["mean_rank"] = ranking[[c for c in ranking if c.startswith("rank_")]].mean(axis=1)
    ranking = ranking.sort_values(["mean_rank", "metric"]).reset_index(drop=True)
    return criteria, ranking


def best_per_criterion(criteria: pd.DataFrame, top: int = 3) -> dict[str, list[str]]:
    """The ``top`` metrics on each criterion (for the report and the resolution note)."""
    out = {}
    for name, (col, higher) in CRITERIA.items():
        ordered = criteria.sort_values(col, ascending=not higher, na_position="last")
        out[name] = ordered["metric"].head(top).tolist()
    return out
