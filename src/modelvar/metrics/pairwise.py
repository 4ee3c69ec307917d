"""Pairwise reproducibility metrics over k prediction vectors that share a test set.

Notation (``../shared/reference/metric-conventions.md``; seeds 000 and 004): k runs predict the
same n test samples with truth y. Run i predicts ŷ_i; its error vector is e_i = 1[ŷ_i ≠ y], error
count s_i, accuracy a_i = 1 − s_i/n. For a pair i < j: intersection I_ij = Σ e_i e_j, union
U_ij = s_i + s_j − I_ij. All k(k−1)/2 pairs are computed at once.

Error-based metrics (from the error counts s and the k×k co-occurrences I of the errors):

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

Label-based metrics (from the agreement counts A_ij = Σ 1[ŷ_i = ŷ_j], each run's class counts
(margins r = counts of ŷ_i, c = counts of ŷ_j) and, for Cramér's V only, the C×C contingency
table T_ij of ŷ_i against ŷ_j):

* ``pa`` = A_ij / n = Σ_c T_cc / n, percent agreement (seed 000 "PA_acc"); ``churn`` = 1 − pa.
* ``kappa`` = Cohen's κ of ŷ_i vs ŷ_j: p_e = Σ_c r_c c_c / n²; NaN when p_e = 1 (sklearn ≥ 1.9).
* ``cramer_v`` = sqrt(χ² / (n (min(R, C) − 1))) with the uncorrected χ² = Σ (T − E)²/E,
  E = r c / n, of T after dropping empty
  rows and columns (R, C non-empty); NaN when min(R, C) = 1.
* ``kripp_alpha`` = Krippendorff's α (nominal) for two coders: coincidences o = T + Tᵀ, n_c its
  margins (= r_c + c_c), N = 2n, α = 1 − (N − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k with
  Σ_{c≠k} o_ck = 2(n − A_ij); NaN on single-valued data.
* ``gwet_ac1`` = Gwet's AC1 for two raters: π_q = (r_q + c_q)/(2n) over the Q categories
  observed in the pair, p_e = Σ_q π_q(1 − π_q)/(Q − 1), AC1 = (p_o − p_e)/(1 − p_e); NaN if Q = 1.

Every metric can be computed on the full test set or on the *disagreement set*: the samples on
which not all k runs predict the same label (``subset="disagree"``), whose size is reported.

How the counts are computed (issue 57): a request computes only the union of its metrics'
``needs`` (:data:`modelvar.metrics.registry.NEEDS`). The labels are narrowed to the smallest
integer type that holds the classes and read in chunks of :data:`CHUNK` samples, so the working
set stays in cache and memory grows by a fraction of the input: the error vectors are bit-packed
and I_ij is a popcount of e_i AND e_j; A_ij counts equal int8 (or int16 …) labels; the margins
count each class; the tables (Cramér's V, or a registered metric that asks for them) are one
``bincount`` of the pair codes ŷ_i·C + ŷ_j in the narrowest code type, one row of runs at a
time. All counts are exact integers.
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


def _validated_runs(y_true, preds, n_classes: int | None):
    """Validate int-coded inputs without copying them; return (y_true, preds, n_classes)."""
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
    top = 0
    for name, arr in (("y_true", y_true), ("preds", preds)):
        largest = _largest(arr)
        if largest is None:
            raise MetricInputError(f"{name} holds negative class indices")
        top = max(top, largest + 1)
    if n_classes is None:
        n_classes = top
    elif top > n_classes:
        raise MetricInputError(f"labels reach index {top - 1} but n_classes is {n_classes}")
    return y_true, preds, int(n_classes)


def _largest(arr: np.ndarray) -> int | None:
    """The largest value of an integer array, ``None`` if it holds a negative one: one pass,
    over the values read as unsigned (where a negative value reads as larger than any other)."""
    if not arr.size:
        return 0
    value = int(np.ascontiguousarray(arr).view(f"u{arr.dtype.itemsize}").max())
    if arr.dtype.kind == "i" and value > np.iinfo(arr.dtype).max:
        return None
    return value


def check_runs(y_true: np.ndarray, preds: np.ndarray, n_classes: int | None = None):
    """Validate int-coded inputs; return (y_true, preds, n_classes) as int64 arrays."""
    y_true, preds, n_classes = _validated_runs(y_true, preds, n_classes)
    return y_true.astype(np.int64), preds.astype(np.int64), n_classes


def narrowest_int(largest: int) -> np.dtype:
    """The smallest signed integer type that holds 0 … ``largest``."""
    for dtype in (np.int8, np.int16, np.int32):
        if largest <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


#: arrays of the label metrics alive at once: the C×C tables of run i against every later run,
#: their expected counts, ratios and squares (``cramer_v``); or the two margins of every pair
#: and their products (``kappa``, ``gwet_ac1``)
_LABEL_TABLE_COPIES = 5
_MARGIN_COPIES = 4
#: a need below this is not checked against the memory available (reading it costs more)
_SURELY_AVAILABLE = 64 * 2**20


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


def check_label_memory(k: int, n: int, n_classes: int, *, tables: bool = True,
                       available: int | None = None) -> None:
    """Refuse a label count whose tables cannot fit in memory, before allocating them.

    Metrics on the tables hold (k − 1) C×C float64 tables at once (×5 for their
    intermediates); metrics on the margins the k(k − 1)/2 × C margins of the pairs (×4); the
    per-sample counts an n×C table: C that large means the "labels" are not class labels
    (continuous values, probabilities, ids)."""
    held = (_LABEL_TABLE_COPIES * max(k - 1, 1) * n_classes**2 if tables
            else _MARGIN_COPIES * max(k * (k - 1) // 2, 1) * n_classes)
    need = max(8 * held, 2 * 8 * n * n_classes)
    if available is None and need < _SURELY_AVAILABLE:
        return
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


#: samples per pass over the labels: bounds the temporaries (a chunk of bits and compares) while
#: keeping the per-call cost of numpy small against the work of a call
CHUNK = 1 << 17


def _packed_bits(mask: np.ndarray) -> np.ndarray:
    """Each row of a (k, m) bool array as 64-bit words (zero-padded)."""
    k, m = mask.shape
    out = np.zeros((k, -(-m // 64) * 8), dtype=np.uint8)
    out[:, : -(-m // 8)] = np.packbits(mask, axis=1)
    return out.view(np.uint64)


def _popcount_rows(words: np.ndarray) -> np.ndarray:
    return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)


def _run_counts(y_true: np.ndarray, labels: np.ndarray, n_classes: int,
                needs: set[str]) -> dict[str, np.ndarray]:
    """The k-run counts a request needs, in one chunked pass over the (narrowed) labels:
    ``s`` (k,) error counts (always: the accuracies), ``inter`` (k, k) error co-occurrences,
    ``agree`` (k, k) agreements (upper triangle), ``margins`` (k, C) class counts (up to
    :data:`_COMPARE_CLASSES` classes by compares, beyond by a ``bincount`` per run)."""
    k, n = labels.shape
    s = np.zeros(k, dtype=np.int64)
    inter = np.zeros((k, k), dtype=np.int64) if "errors" in needs else None
    agree = np.zeros((k, k), dtype=np.int64) if needs & {"agreement", "tables"} else None
    by_compare = bool(needs & {"margins", "tables"}) and n_classes <= _COMPARE_CLASSES
    margins = np.zeros((k, n_classes), dtype=np.int64) if by_compare else None
    for start in range(0, n, CHUNK):
        chunk = labels[:, start: start + CHUNK]
        equal = np.empty(chunk.shape[1], dtype=bool)
        bits = _packed_bits(chunk != y_true[start: start + CHUNK])
        s += _popcount_rows(bits)
        for i in range(k - 1):
            if inter is not None:
                inter[i, i + 1:] += _popcount_rows(bits[i + 1:] & bits[i])
            if agree is not None:
                row = chunk[i]
                for j in range(i + 1, k):
                    agree[i, j] += np.count_nonzero(np.equal(row, chunk[j], out=equal))
        if margins is not None:
            for i, row in enumerate(chunk):
                for c in range(n_classes - 1):
                    margins[i, c] += np.count_nonzero(np.equal(row, c, out=equal))
    out = {"s": s, "inter": inter, "agree": agree}
    if margins is not None:
        margins[:, -1] = n - margins[:, :-1].sum(axis=1)
        out["margins"] = margins
    elif needs & {"margins", "tables"}:
        out["margins"] = np.stack([np.bincount(row, minlength=n_classes) for row in labels])
    return out


#: up to this many classes, a run's class counts are C compares (faster than a bincount)
_COMPARE_CLASSES = 16


def pair_tables(labels: np.ndarray, n_classes: int, i: int) -> np.ndarray:
    """Contingency tables of run i against every later run j > i: shape (k−i−1, C, C), int64;
    each one ``bincount`` of the codes ŷ_i·C + ŷ_j per chunk of samples, in the narrowest type."""
    k, n = labels.shape
    cells = n_classes * n_classes
    code = narrowest_int(cells - 1)
    tables = np.zeros((k - i - 1, cells), dtype=np.int64)
    for start in range(0, n, CHUNK):
        chunk = labels[:, start: start + CHUNK]
        rows = chunk[i].astype(code) * code.type(n_classes)
        for j in range(i + 1, k):
            tables[j - i - 1] += np.bincount(rows + chunk[j], minlength=cells)
    return tables.reshape(k - i - 1, n_classes, n_classes)


def _metric_values(y_true, labels, n_classes, ec_local_undefined, iu, ju,
                   wanted: Sequence[registry.PairwiseMetric]):
    """Every wanted metric for every pair (iu, ju), from the union of their needs, and each
    run's error count."""
    k, n = labels.shape
    needs = {need for m in wanted for need in m.needs}
    if needs & {"margins", "tables"}:
        check_label_memory(k, n, n_classes, tables="tables" in needs)
    counts = _run_counts(y_true, labels, n_classes, needs)
    per_pair: dict[str, np.ndarray] = {}
    if "errors" in needs:
        s = counts["s"].astype(np.float64)
        per_pair.update(si=s[iu], sj=s[ju], inter=counts["inter"][iu, ju].astype(np.float64))
    if counts["agree"] is not None:
        per_pair["agree"] = counts["agree"][iu, ju].astype(np.float64)
    if "margins" in counts:
        margins = counts["margins"].astype(np.float64)
        per_pair.update(r=margins[iu], c=margins[ju])
    out = {}
    on_all = [m for m in wanted if "tables" not in m.needs]
    if on_all:
        block = registry.PairCounts(n, len(iu), per_pair, ec_local_undefined)
        out.update({m.name: m.compute(block) for m in on_all})
    on_tables = [m for m in wanted if "tables" in m.needs]
    if on_tables:
        parts: dict[str, list[np.ndarray]] = {m.name: [] for m in on_tables}
        start = 0
        for i in range(k - 1):
            rows = slice(start, start + k - i - 1)
            start = rows.stop
            block = registry.PairCounts(
                n, k - i - 1,
                {**{name: v[rows] for name, v in per_pair.items()},
                 "T": pair_tables(labels, n_classes, i).astype(np.float64)},
                ec_local_undefined)
            for m in on_tables:
                parts[m.name].append(m.compute(block))
        out.update({m: np.concatenate(v) for m, v in parts.items()})
    return out, counts["s"]


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
    y_true, preds, n_classes = _validated_runs(y_true, preds, n_classes)
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
    label_type = narrowest_int(n_classes - 1)
    labels, y_true = preds.astype(label_type, copy=False), y_true.astype(label_type, copy=False)
    if subset == "disagree":
        mask = disagreement_mask(labels)
        y_true, labels = y_true[mask], labels[:, mask]
    n = labels.shape[1]
    iu, ju = np.triu_indices(k, 1)
    wanted = [m for m in registry.metrics() if m.name in set(metrics)]
    values, errors = _metric_values(y_true, labels, n_classes, ec_local_undefined, iu,
                                    ju, wanted)
    acc = (n - errors) / n if n else np.full(k, np.nan)
    table = {
        "run_i": np.asarray(run_ids)[iu],
        "run_j": np.asarray(run_ids)[ju],
        "subset": np.full(len(iu), subset, dtype=object),
        "n": np.full(len(iu), n, dtype=np.int64),
        "acc_i": acc[iu],
        "acc_j": acc[ju],
        **values,
    }
    cols = ["run_i", "run_j", "subset", "n", "acc_i", "acc_j", *(m.name for m in wanted)]
    return {c: table[c] for c in cols}
