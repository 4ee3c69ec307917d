"""Pairwise reproducibility metrics over k prediction vectors that share a test set.

Notation (``../shared/reference/metric-conventions.md``; seeds 000 and 004): k runs predict the
same n test samples with truth y. Run i predicts ŷ_i; its error vector is e_i = 1[ŷ_i ≠ y], error
count s_i, accuracy a_i = 1 − s_i/n. For a pair i < j: intersection I_ij = Σ e_i e_j, union
U_ij = s_i + s_j − I_ij. All k(k−1)/2 pairs are computed at once.

Error-based metrics (from one Gram matrix I = E·Eᵀ of the k×n error matrix):

* ``ec_local``  = I/U, the Jaccard index of the error sets (seed 000 "EC_l", seed 004
  "local EC").
  Undefined when U = 0 (neither run errs): NaN by default (``ec_local_undefined``).
* ``ec_global`` = I/n, the rate at which *both* runs are wrong (seed 000 "EC_g").
* ``ec_agree``  = mean(e_i == e_j) = 1 − (s_i + s_j − 2I)/n (seed 000 "accuracy-based EC").
* ``ec_corr``   = Pearson (phi) correlation of e_i, e_j
  = (nI − s_i s_j) / sqrt(s_i(n − s_i) s_j(n − s_j)); NaN when either error vector is constant.
* ``ec_kappa``  = Cohen's κ of e_i vs e_j (Geirhos et al. 2020 "error consistency"):
  p_o = ec_agree, p_e = (s_i s_j + (n − s_i)(n − s_j))/n²,
  κ = (p_o − p_e)/(1 − p_e); NaN if p_e = 1.
* ``ec_local_accnorm_sqrt`` = sqrt(sqrt(a_i a_j) · ec_local) and
  ``ec_local_accnorm_cbrt`` = (a_i a_j · ec_local)^(1/3) (seed 004 "accuracy-normalised EC");
  the same two for ``ec_global``.

Label-based metrics (from the C×C contingency table T_ij of ŷ_i against ŷ_j, built for all pairs
of one row i with one ``bincount``, so memory stays O(k·n)):

* ``pa`` = Σ_c T_cc / n, percent agreement (seed 000 "PA_acc"); ``churn`` = 1 − pa.
* ``kappa`` = Cohen's κ of ŷ_i vs ŷ_j: p_e = Σ_c r_c c_c / n²; NaN when p_e = 1 (sklearn ≥ 1.9).
* ``cramer_v`` = sqrt(χ² / (n (min(R, C) − 1))) with the uncorrected χ² of T after dropping empty
  rows and columns (R, C non-empty); NaN when min(R, C) = 1.
* ``kripp_alpha`` = Krippendorff's α (nominal) for two coders: coincidences o = T + Tᵀ, n_c its
  margins, N = 2n, α = 1 − (N − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k; NaN on single-valued data.
* ``gwet_ac1`` = Gwet's AC1 for two raters: π_q = (r_q + c_q)/(2n) over the Q categories
  observed in the pair, p_e = Σ_q π_q(1 − π_q)/(Q − 1), AC1 = (p_o − p_e)/(1 − p_e); NaN if Q = 1.

Every metric can be computed on the full test set or on the *disagreement set*: the samples on
which not all k runs predict the same label (``subset="disagree"``), whose size is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from modelvar.metrics import registry
from modelvar.metrics.errors import MetricInputError

if TYPE_CHECKING:
    import pandas as pd

#: the built-in metrics (:mod:`modelvar.metrics.registry` holds them, and any registered one)
ERROR_METRICS = registry.names("errors")
LABEL_METRICS = registry.names("labels")
ALL_METRICS = ERROR_METRICS + LABEL_METRICS
#: the range of each built-in metric's values (and so of any mean or interval of them)
METRIC_RANGES: dict[str, tuple[float, float]] = registry.ranges()
SUBSETS = registry.SUBSETS


def check_runs(y_true: np.ndarray, preds: np.ndarray, n_classes: int | None = None):
    """Validate int-coded inputs; return (y_true, preds, n_classes) as int64 arrays."""
    y_true = np.asarray(y_true)
    preds = np.asarray(preds)
    if preds.ndim != 2:
        raise MetricInputError(f"preds must be a 2-D (runs × samples) array, got {preds.ndim}-D")
    k, n = preds.shape
    if y_true.ndim == 1 and len(y_true) != n and k == len(y_true):
        raise MetricInputError(
            f"preds has shape {preds.shape}, samples × runs; pass runs × samples (preds.T)")
    if k < 2:
        raise MetricInputError(f"need at least 2 runs for pairwise metrics, got {k}")
    if y_true.ndim != 1 or len(y_true) != n:
        raise MetricInputError(
            f"y_true has shape {y_true.shape} but preds has {n} samples per run"
        )
    for name, arr in (("y_true", y_true), ("preds", preds)):
        if not np.issubdtype(arr.dtype, np.integer):
            raise MetricInputError(
                f"{name} must hold integer class indices (use encode_labels for other labels), "
                f"got dtype {arr.dtype}"
            )
        if arr.size and arr.min() < 0:
            raise MetricInputError(f"{name} holds negative class indices")
    top = int(max(y_true.max(initial=0), preds.max(initial=0))) + 1
    if n_classes is None:
        n_classes = top
    elif top > n_classes:
        raise MetricInputError(f"labels reach index {top - 1} but n_classes is {n_classes}")
    return y_true.astype(np.int64), preds.astype(np.int64), int(n_classes)


#: arrays of the label metrics alive at once: the C×C tables of run i against every later run,
#: their expected counts, ratios and squares (``_label_metrics``)
_LABEL_TABLE_COPIES = 5


def available_memory() -> int:
    """Bytes of memory available to this process (Linux MemAvailable, else free pages)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_label_memory(k: int, n: int, n_classes: int, *, available: int | None = None) -> None:
    """Refuse a label count whose tables cannot fit in memory, before allocating them.

    The label metrics hold (k − 1) C×C float64 tables at once (×5 for their intermediates), the
    per-sample counts an n×C table: C that large means the "labels" are not class labels
    (continuous values, probabilities, ids)."""
    need = max(_LABEL_TABLE_COPIES * 8 * max(k - 1, 1) * n_classes**2, 2 * 8 * n * n_classes)
    available = available_memory() if available is None else available
    if need > available:
        raise MetricInputError(
            f"{n_classes:,} distinct labels: the label tables of {k} runs would need "
            f"{need / 2**30:,.1f} GiB, more than the {available / 2**30:,.1f} GiB available. "
            "Labels must be classes: are these continuous values, probabilities or ids?"
        )


def encode_labels(
    y_true: Sequence, preds: Sequence[Sequence]
) -> tuple[np.ndarray, np.ndarray, list]:
    """Map arbitrary labels to class indices shared by truth and predictions."""
    import pandas as pd

    y_true = np.asarray(y_true, dtype=object)
    preds = np.asarray(preds, dtype=object)
    if pd.isna(y_true).any() or pd.isna(preds).any():
        raise MetricInputError("labels contain missing values (NaN/None)")
    classes = sorted(set(y_true.tolist()) | set(preds.ravel().tolist()), key=str)
    lookup = {c: i for i, c in enumerate(classes)}
    yi = np.fromiter((lookup[v] for v in y_true), dtype=np.int64, count=len(y_true))
    pi = np.vectorize(lookup.__getitem__, otypes=[np.int64])(preds) if preds.size else preds
    return yi, pi.astype(np.int64), classes


def disagreement_mask(preds: np.ndarray) -> np.ndarray:
    """Samples on which not all runs predict the same label."""
    return (preds != preds[:1]).any(axis=0)


def _error_metrics(y_true, preds, iu, ju, ec_local_undefined,
                   wanted: Sequence[registry.PairwiseMetric]) -> dict[str, np.ndarray]:
    E = (preds != y_true).astype(np.float64)
    s = E.sum(axis=1)
    counts = registry.ErrorCounts(n=preds.shape[1], si=s[iu], sj=s[ju], inter=(E @ E.T)[iu, ju],
                                  ec_local_undefined=ec_local_undefined)
    return {m.name: m.compute(counts) for m in wanted}


def pair_tables(preds: np.ndarray, n_classes: int, i: int) -> np.ndarray:
    """Contingency tables of run i against every later run j > i: shape (k−i−1, C, C)."""
    k, n = preds.shape
    later = preds[i + 1 :]
    m = len(later)
    codes = (np.arange(m)[:, None] * n_classes + preds[i][None, :]) * n_classes + later
    counts = np.bincount(codes.ravel(), minlength=m * n_classes * n_classes)
    return counts.reshape(m, n_classes, n_classes).astype(np.float64)


def _label_metrics(preds, n_classes,
                   wanted: Sequence[registry.PairwiseMetric]) -> dict[str, np.ndarray]:
    k, n = preds.shape
    parts: dict[str, list[np.ndarray]] = {m.name: [] for m in wanted}
    for i in range(k - 1):
        T = pair_tables(preds, n_classes, i)
        tables = registry.LabelTables(n=n, T=T, r=T.sum(axis=2), c=T.sum(axis=1),
                                      diag=np.einsum("pcc->pc", T).sum(axis=1))
        for m in wanted:
            parts[m.name].append(m.compute(tables))
    return {m: np.concatenate(v) if v else np.empty(0) for m, v in parts.items()}


def pairwise_metrics(
    y_true: np.ndarray,
    preds: np.ndarray,
    *,
    n_classes: int | None = None,
    metrics: Sequence[str] | None = None,
    subset: str = "all",
    ec_local_undefined: str = "nan",
    run_ids: Sequence | None = None,
) -> pd.DataFrame:
    """:func:`pairwise_arrays` as a DataFrame (see there for the parameters and columns)."""
    import pandas as pd

    return pd.DataFrame(pairwise_arrays(
        y_true, preds, n_classes=n_classes, metrics=metrics, subset=subset,
        ec_local_undefined=ec_local_undefined, run_ids=run_ids))


def pairwise_arrays(
    y_true: np.ndarray,
    preds: np.ndarray,
    *,
    n_classes: int | None = None,
    metrics: Sequence[str] | None = None,
    subset: str = "all",
    ec_local_undefined: str = "nan",
    run_ids: Sequence | None = None,
) -> dict[str, np.ndarray]:
    """All pairwise metrics for k runs (rows of ``preds``) sharing truth ``y_true``.

    Parameters
    ----------
    y_true : (n,) int class indices.
    preds : (k, n) int class indices, one row per run.
    n_classes : number of classes C (default: largest index + 1).
    metrics : names of registered metrics (:mod:`modelvar.metrics.registry`; default: every
        one computed on ``subset``).
    subset : ``"all"`` (full test set) or ``"disagree"`` (samples where not all runs agree).
    ec_local_undefined : value of ec_local when neither run errs: ``"nan"`` (default),
        ``"zero"`` (the original study's choice) or ``"one"``.
    run_ids : labels for the runs (default 0..k−1).

    Returns
    -------
    Columns (arrays, one value per pair i < j): ``run_i``, ``run_j``, ``subset``, ``n`` (samples
    used), ``acc_i``, ``acc_j`` (accuracies on the samples used), and one column per metric.
    """
    y_true, preds, n_classes = check_runs(y_true, preds, n_classes)
    known = registry.names()
    if metrics is None:
        metrics = [m.name for m in registry.metrics(subset=subset)]
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise MetricInputError(f"unknown metric(s) {unknown}; available: {list(known)}")
    if subset not in SUBSETS:
        raise MetricInputError(f"subset must be one of {SUBSETS}, got {subset!r}")
    if ec_local_undefined not in registry.EC_LOCAL_UNDEFINED:
        raise MetricInputError(
            f"ec_local_undefined must be one of {list(registry.EC_LOCAL_UNDEFINED)}, "
            f"got {ec_local_undefined!r}"
        )
    k = preds.shape[0]
    if run_ids is None:
        run_ids = np.arange(k)
    elif len(run_ids) != k:
        raise MetricInputError(f"{len(run_ids)} run_ids for {k} runs")
    if subset == "disagree":
        mask = disagreement_mask(preds)
        y_true, preds = y_true[mask], preds[:, mask]
    n = preds.shape[1]
    iu, ju = np.triu_indices(k, 1)
    acc = (preds == y_true).mean(axis=1) if n else np.full(k, np.nan)
    table = {
        "run_i": np.asarray(run_ids)[iu],
        "run_j": np.asarray(run_ids)[ju],
        "subset": np.full(len(iu), subset, dtype=object),
        "n": np.full(len(iu), n, dtype=np.int64),
        "acc_i": acc[iu],
        "acc_j": acc[ju],
    }
    wanted = [m for m in registry.metrics() if m.name in set(metrics)]
    on_errors = [m for m in wanted if m.basis == "errors"]
    on_labels = [m for m in wanted if m.basis == "labels"]
    if on_errors:
        table.update(_error_metrics(y_true, preds, iu, ju, ec_local_undefined, on_errors))
    if on_labels:
        check_label_memory(k, n, n_classes)
        table.update(_label_metrics(preds, n_classes, on_labels))
    cols = ["run_i", "run_j", "subset", "n", "acc_i", "acc_j", *(m.name for m in wanted)]
    return {c: table[c] for c in cols}
