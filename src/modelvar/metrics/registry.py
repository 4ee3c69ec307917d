"""The pairwise-metric registry: each metric declared once, with what the tables, intervals,
nulls and figures need to know about it.

A :class:`PairwiseMetric` entry says how the metric is computed for every pair of runs at once
— from the pair's **error counts** (n, s_i, s_j, I_ij, the notation of
:mod:`modelvar.metrics.pairwise`) or its **labels** (agreement counts, class margins, C×C
contingency tables T of ŷ_i against ŷ_j), with the counts it ``needs`` (:data:`NEEDS`, handed
to it as :class:`PairCounts`; a request computes the union of its metrics' needs and nothing
else) — its range (the jackknife interval is clipped to it;
a range below 0 means the metric is signed), its direction (whether a higher value means the
runs are more alike), its value under independent errors (the **null**,
:mod:`modelvar.metrics.inference`; ``None``: no null), the subsets of test samples it is
computed on, its name in figures and tables, and where it comes from. The formulas are in the
docstring of :mod:`modelvar.metrics.pairwise`. Adding a metric is one entry (:func:`register`,
or :data:`BUILT_IN`) plus its function: the metric tables, the grouped tables and the figures'
names read this registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SUBSETS = ("all", "disagree")
#: the value of local EC where neither run errs, by the option ec_local_undefined
EC_LOCAL_UNDEFINED = {"nan": np.nan, "zero": 0.0, "one": 1.0}


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den = 0."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


#: what a metric may need, each computed once per request for every metric that needs it:
#: ``errors`` — each run's error count s and the k × k co-occurrences I of the errors;
#: ``agreement`` — the k × k counts of samples on which two runs predict the same label;
#: ``margins`` — each run's count of every predicted class;
#: ``tables`` — the C × C contingency tables of the pairs, one row of runs at a time (with
#: the agreement and the margins).
NEEDS = ("errors", "agreement", "margins", "tables")
#: the counts each need provides, by their names on :class:`PairCounts`
PROVIDES = {"errors": ("si", "sj", "inter"), "agreement": ("agree",),
            "margins": ("r", "c"), "tables": ("T", "agree", "r", "c")}


class MissingCount(AttributeError):
    """A metric read a count its entry does not declare among its ``needs``."""


class PairCounts:
    """The counts of a block of pairs (i, j), i < j, each an array with one entry per pair.

    ``n`` samples; ``si``/``sj`` the two runs' error counts and ``inter`` the samples both got
    wrong (I_ij; ``union`` = s_i + s_j − I_ij) — need ``errors``; ``agree`` (also ``diag``) the
    samples on which both predict the same label — need ``agreement``; ``r``/``c`` (pairs, C)
    the two runs' class counts (the table's row and column margins) — need ``margins``; ``T``
    (pairs, C, C) the contingency tables of ŷ_i against ŷ_j — need ``tables``. Counts are
    float64 (exact integers below 2⁵³). A count the request did not compute raises
    :class:`MissingCount` naming the need. ``ec_local_undefined``: the value of local EC where
    neither run errs."""

    def __init__(self, n: int, pairs: int, counts: dict[str, np.ndarray],
                 ec_local_undefined: str = "nan") -> None:
        self.n = n
        self.pairs = pairs
        self.ec_local_undefined = ec_local_undefined
        self._counts = counts

    def _get(self, name: str) -> np.ndarray:
        try:
            return self._counts[name]
        except KeyError:
            need = next(need for need, names in PROVIDES.items() if name in names)
            raise MissingCount(f"the count {name!r} was not computed: the metric's entry must "
                               f"declare needs=({need!r}, …)") from None

    si = property(lambda self: self._get("si"))
    sj = property(lambda self: self._get("sj"))
    inter = property(lambda self: self._get("inter"))
    agree = property(lambda self: self._get("agree"))
    diag = agree
    r = property(lambda self: self._get("r"))
    c = property(lambda self: self._get("c"))
    T = property(lambda self: self._get("T"))

    @property
    def union(self) -> np.ndarray:
        return self.si + self.sj - self.inter

    def nan_if_empty(self, values: Callable[[], np.ndarray]) -> np.ndarray:
        return values() if self.n else np.full(self.pairs, np.nan)


@dataclass(frozen=True)
class Accuracies:
    """The two runs' error rates ``pi``, ``pj`` (accuracies ``ai`` = 1 − p_i, ``aj``) of every
    pair and the number of classes, from which a null is computed."""

    pi: np.ndarray
    pj: np.ndarray
    n_classes: int | None

    @property
    def ai(self) -> np.ndarray:
        return 1.0 - self.pi

    @property
    def aj(self) -> np.ndarray:
        return 1.0 - self.pj


@dataclass(frozen=True)
class PairwiseMetric:
    """One pairwise metric (module docstring). ``compute`` takes the :class:`PairCounts` of a
    block of pairs holding the counts of its ``needs`` (default: ``errors`` for the ``errors``
    basis, ``tables`` for ``labels``); ``basis`` says whether it compares the runs' errors or
    their labels (figures group metrics by it); ``null`` takes
    :class:`Accuracies` and returns the per-pair null (or ``None`` where it has none)."""

    name: str
    label: str
    basis: str
    compute: Callable
    value_range: tuple[float, float] = (0.0, 1.0)
    higher_is_more_alike: bool = True
    null: Callable[[Accuracies], np.ndarray | None] | None = None
    subsets: tuple[str, ...] = SUBSETS
    source: str = ""
    needs: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.basis not in ("errors", "labels"):
            raise ValueError(f"metric {self.name!r}: basis must be 'errors' or 'labels'")
        if self.needs is None:
            default = ("errors",) if self.basis == "errors" else ("tables",)
            object.__setattr__(self, "needs", default)
        unknown_needs = sorted(set(self.needs) - set(NEEDS))
        if unknown_needs or not self.needs:
            raise ValueError(f"metric {self.name!r}: needs must name some of {NEEDS}, got "
                             f"{self.needs!r}")
        unknown = sorted(set(self.subsets) - set(SUBSETS))
        if unknown:
            raise ValueError(f"metric {self.name!r}: unknown subset(s) {unknown}; known: "
                             f"{SUBSETS}")

    @property
    def signed(self) -> bool:
        """Whether the metric can be negative (below chance)."""
        return self.value_range[0] < 0


# ----------------------------------------------------------------------------- error metrics
def ec_local(e: PairCounts) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = safe_div(e.inter, e.union)
    out[e.union == 0] = EC_LOCAL_UNDEFINED[e.ec_local_undefined]
    return out


def ec_global(e: PairCounts) -> np.ndarray:
    return e.nan_if_empty(lambda: e.inter / e.n)


def ec_agree(e: PairCounts) -> np.ndarray:
    return e.nan_if_empty(lambda: (e.n - (e.si + e.sj - 2 * e.inter)) / e.n)


def ec_corr(e: PairCounts) -> np.ndarray:
    n, si, sj = e.n, e.si, e.sj
    with np.errstate(invalid="ignore", divide="ignore"):
        return safe_div(n * e.inter - si * sj, np.sqrt(si * (n - si) * sj * (n - sj)))


def ec_kappa(e: PairCounts) -> np.ndarray:
    n, si, sj = e.n, e.si, e.sj
    pe = e.nan_if_empty(lambda: (si * sj + (n - si) * (n - sj)) / float(n) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = safe_div(ec_agree(e) - pe, 1.0 - pe)
    kappa[np.isclose(pe, 1.0)] = np.nan
    return kappa


def _accnorm(base: Callable, root: str) -> Callable:
    def compute(e: PairCounts) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            ai, aj = 1.0 - e.si / e.n, 1.0 - e.sj / e.n
            if root == "sqrt":
                return np.sqrt(np.sqrt(ai * aj) * base(e))
            return np.cbrt(ai * aj * base(e))
    return compute


# ----------------------------------------------------------------------------- nulls
def _null_global(a: Accuracies) -> np.ndarray:
    return a.pi * a.pj


def _null_local(a: Accuracies) -> np.ndarray:
    both = a.pi * a.pj
    with np.errstate(invalid="ignore", divide="ignore"):
        union = a.pi + a.pj - both
        return np.where(union > 0, both / np.where(union > 0, union, 1.0), np.nan)


def _null_agree(a: Accuracies) -> np.ndarray:
    return a.pi * a.pj + (1 - a.pi) * (1 - a.pj)


def _null_zero(a: Accuracies) -> np.ndarray:
    return np.zeros_like(a.pi * a.pj)


def _null_accnorm(base: Callable, root: str) -> Callable:
    def null(a: Accuracies) -> np.ndarray:
        if root == "sqrt":
            return np.sqrt(np.sqrt(a.ai * a.aj) * base(a))
        return np.cbrt(a.ai * a.aj * base(a))
    return null


def _null_pa(a: Accuracies) -> np.ndarray | None:
    if a.n_classes is None or a.n_classes < 2:
        return None
    return a.ai * a.aj + a.pi * a.pj / (a.n_classes - 1)


def _null_churn(a: Accuracies) -> np.ndarray | None:
    pa = _null_pa(a)
    return None if pa is None else 1.0 - pa


# ----------------------------------------------------------------------------- label metrics
def pa(t: PairCounts) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return t.nan_if_empty(lambda: t.agree / t.n)


def churn(t: PairCounts) -> np.ndarray:
    return 1.0 - pa(t)


def kappa(t: PairCounts) -> np.ndarray:
    po = pa(t)
    with np.errstate(invalid="ignore", divide="ignore"):
        pe = t.nan_if_empty(lambda: (t.r * t.c).sum(axis=1) / float(t.n) ** 2)
        out = safe_div(po - pe, 1.0 - pe)
    out[np.isclose(pe, 1.0)] = np.nan
    return out


def cramer_v(t: PairCounts) -> np.ndarray:
    """On the table without empty rows and columns; χ² = Σ (T − E)² / E over the cells with
    E = r c / n > 0, a sum of non-negative terms (n (Σ T² / (r c) − 1) cancels: at independence
    its rounding error, ± a few ulp, became ≈ 1e-8 under the square root)."""
    n, T, r, c = t.n, t.T, t.r, t.c
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = r[:, :, None] * c[:, None, :] / n if n else np.zeros_like(T)
        terms = safe_div((T - expected) ** 2, expected)
        chi2 = np.nansum(terms, axis=(1, 2))
        dof = np.minimum((r > 0).sum(axis=1), (c > 0).sum(axis=1)) - 1
        v = np.sqrt(np.clip(safe_div(chi2, n * dof.astype(np.float64)), 0, None))
    v[dof <= 0] = np.nan
    return v


def kripp_alpha(t: PairCounts) -> np.ndarray:
    """Nominal, two coders, from the agreement and the margins: the coincidences o = T + Tᵀ have
    margins n_c = r_c + c_c, N = 2n values, Σ_{c≠k} o_ck = 2(n − agree) and
    Σ_{c≠k} n_c n_k = N² − Σ_c n_c²."""
    with np.errstate(invalid="ignore", divide="ignore"):
        nc = t.r + t.c
        big_n = 2.0 * t.n
        off_o = big_n - 2.0 * t.agree
        off_e = big_n**2 - (nc**2).sum(axis=1)
        alpha = 1.0 - safe_div((big_n - 1.0) * off_o, off_e)
    alpha[off_e == 0] = np.nan
    return alpha


def gwet_ac1(t: PairCounts) -> np.ndarray:
    """Over the categories observed in the pair."""
    n, r, c = t.n, t.r, t.c
    po = pa(t)
    with np.errstate(invalid="ignore", divide="ignore"):
        pi = (r + c) / (2.0 * n) if n else np.full_like(r, np.nan)
        q = ((r + c) > 0).sum(axis=1).astype(np.float64)
        pe_g = safe_div((pi * (1.0 - pi)).sum(axis=1), q - 1.0)
        ac1 = safe_div(po - pe_g, 1.0 - pe_g)
    ac1[q <= 1] = np.nan
    return ac1


_SIGNED = (-1.0, 1.0)
BUILT_IN: tuple[PairwiseMetric, ...] = (
    PairwiseMetric("ec_local", "local EC (Jaccard of error sets)", "errors", ec_local,
                   null=_null_local, source="seed 000 EC_l; seed 004 local EC"),
    PairwiseMetric("ec_global", "global EC (rate both wrong)", "errors", ec_global,
                   null=_null_global, source="seed 000 EC_g"),
    PairwiseMetric("ec_agree", "EC, agreement of error indicators", "errors", ec_agree,
                   null=_null_agree, source="seed 000 accuracy-based EC"),
    PairwiseMetric("ec_corr", "EC, correlation of errors", "errors", ec_corr, _SIGNED,
                   null=_null_zero, source="phi coefficient of the error vectors"),
    PairwiseMetric("ec_kappa", "EC, κ of errors", "errors", ec_kappa, _SIGNED, null=_null_zero,
                   source="Geirhos et al. 2020, error consistency"),
    *(PairwiseMetric(f"{name}_accnorm_{root}", f"{label}, accuracy-normalised ({sign})",
                     "errors", _accnorm(base, root), null=_null_accnorm(null, root),
                     source="seed 004 accuracy-normalised EC")
      for name, label, base, null in (("ec_local", "local EC", ec_local, _null_local),
                                      ("ec_global", "global EC", ec_global, _null_global))
      for root, sign in (("sqrt", "√"), ("cbrt", "∛"))),
    PairwiseMetric("pa", "percent agreement", "labels", pa, null=_null_pa,
                   source="seed 000 PA_acc", needs=("agreement",)),
    PairwiseMetric("churn", "disagreement (1 − agreement)", "labels", churn,
                   higher_is_more_alike=False, null=_null_churn, source="1 − PA",
                   needs=("agreement",)),
    PairwiseMetric("kappa", "Cohen's κ", "labels", kappa, _SIGNED,
                   source="Cohen 1960; NaN when p_e = 1 (scikit-learn ≥ 1.9)",
                   needs=("agreement", "margins")),
    PairwiseMetric("cramer_v", "Cramér's V", "labels", cramer_v, source="Cramér 1946",
                   needs=("tables",)),
    PairwiseMetric("kripp_alpha", "Krippendorff's α", "labels", kripp_alpha, (-np.inf, 1.0),
                   source="Krippendorff 2011, nominal", needs=("agreement", "margins")),
    PairwiseMetric("gwet_ac1", "Gwet's AC1", "labels", gwet_ac1, _SIGNED, source="Gwet 2008",
                   needs=("agreement", "margins")),
)

_REGISTRY: dict[str, PairwiseMetric] = {m.name: m for m in BUILT_IN}


def metrics(basis: str | None = None, subset: str | None = None) -> tuple[PairwiseMetric, ...]:
    """The registered metrics in table order (of one basis, computed on one subset)."""
    return tuple(m for m in _REGISTRY.values()
                 if (basis is None or m.basis == basis)
                 and (subset is None or subset in m.subsets))


def names(basis: str | None = None) -> tuple[str, ...]:
    return tuple(m.name for m in metrics(basis))


def metric(name: str) -> PairwiseMetric:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown pairwise metric {name!r}; known: {list(_REGISTRY)}") \
            from None


#: columns of the pairwise table that no metric may take as its name
RESERVED = frozenset({"run_i", "run_j", "subset", "n", "acc_i", "acc_j", "repeat", "cell"})


def register(new: PairwiseMetric) -> PairwiseMetric:
    """Add a metric (after the others in the tables)."""
    if new.name in _REGISTRY or new.name in RESERVED or not new.name.isidentifier():
        raise ValueError(f"metric name {new.name!r} is taken or not an identifier")
    _REGISTRY[new.name] = new
    return new


def unregister(name: str) -> None:
    """Remove a registered metric (the built-ins stay)."""
    if any(m.name == name for m in BUILT_IN):
        raise ValueError(f"{name!r} is a built-in metric")
    _REGISTRY.pop(name, None)


def ranges() -> dict[str, tuple[float, float]]:
    """Each metric's range (of its values, so of any mean or interval of them)."""
    return {m.name: m.value_range for m in _REGISTRY.values()}
