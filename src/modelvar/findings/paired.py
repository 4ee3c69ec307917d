"""Paired differences over repeats (or datasets), their ratios, and the verdicts they allow.

The runs of a repeat share their test set and training pool, so the per-repeat difference of
two cells (or of two classifiers in one cell) removes what the repeat itself contributes.

**A difference** d_r over R repeats with mean d̄ and SD s_d (:class:`Paired`):

* the **interval** is Student's, d̄ ± t(0.975, R − 1) · s_d / √R, drawn only from
  :data:`MIN_FOR_INTERVAL` repeats on (with 2, the whole spread is one difference of two values
  and t(0.975, 1) = 12.7: the interval says more about the repeat count than the data), and
  never for differences that are the same in every repeat (an interval of width 0 would read
  as certainty);
* the **p-value** (two-sided, of d̄ = 0) is the paired t-test's, 2 · (1 − F_t(|d̄| √R / s_d,
  R − 1)); NaN below :data:`MIN_FOR_INTERVAL` repeats;
* **the same in every repeat** is decided with a tolerance, never by an exact zero:
  s_d ≤ max(:data:`SAME` · scale, :data:`ROUNDING`), scale the largest |value| of the two
  series. The relative part covers rounding noise of sums of floats (~1e-16 of the values; no
  measured difference of runs is within 1e-9 of them); the absolute floor covers values that
  are themselves rounding noise (the run-to-run SD of a deterministic classifier's identical
  accuracies computes as ~1e-17, whose relative tolerance would be ~1e-26): nothing a study
  measures is below 1e-12 (an accuracy moves in steps of 1/n_test ≥ 1e-7, a disagreement in
  steps of 1/(n_test · pairs)). Then there is no spread for a t statistic: a nonzero d̄ gets the
  exact sign test, 2 · 0.5^R (R differences of one sign), and a d̄ within the tolerance of 0 is
  *identical*: nothing to test, no p-value, not counted by the page's control, never printed
  as an interval of zeros.

**A ratio** a / b of two positive measures (run-to-run SDs, disagreements; :class:`Compared`)
is the geometric mean of the per-repeat ratios, exp(mean_r log(a_r / b_r)), with the t-interval
of the mean log ratio carried back, exp(l̄ ± t(0.975, R − 1) · s_l / √R). It is **practically
equivalent** to 1 within a margin M (config ``findings.equivalence_ratio``, default
:data:`EQUIVALENCE_RATIO`) by two one-sided tests (Schuirmann 1987) of the mean log ratio:
H₀₁: l̄ ≤ −log M and H₀₂: l̄ ≥ log M, each a one-sided t-test, p = max of the two; at level α
this is the (1 − 2α) interval of the ratio lying inside [1/M, M]. Log ratios the same in every
repeat inside the margin get the exact sign test's 0.5^R.

**Verdicts** at a threshold (the page's multiplicity control,
:mod:`modelvar.findings.multiplicity`; :data:`ALPHA` for one comparison alone):
``equivalent`` when the equivalence p holds, else ``supported`` (above 0) or ``contradicted``
(below 0) when the difference's p holds, ``identical`` for identical values, else
``inconclusive``. A comparison enters the page's control once, with the p of the claim it can
make, min(p_difference, p_equivalent): the two nulls (d = 0; |log ratio| ≥ log M) exclude each
other, so a false claim is always a rejection of the one true null at its own valid p-value.

**Power.** A comparison's standardised **effect** is |d̄| / s_d (of a ratio's equivalence, the
room to the margin (log M − |l̄|) / s_l). For a claim left inconclusive, the repeats that would
give an effect of the seen size 80 % power (:data:`POWER`) in a two-sided paired t-test at the
level the claim faces on the page (its tier's next boundary, :mod:`~modelvar.findings.
multiplicity`; not 5 %) — noncentral t: power = P(|T| > t_c), T ~ t'(R − 1, effect · √R)
(:func:`repeats_for`) — or the two one-sided tests of equivalence that power
(:func:`equivalence_repeats_for`, normal approximation of the nearer bound's test): a planning
figure, not a promise (it takes the seen difference as true).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.metrics.student_t import t_cdf, t_quantile

#: the fewest repeats (or datasets) a t-interval or test is drawn from (module docstring)
MIN_FOR_INTERVAL = 3
#: the level of one comparison before the multiplicity control
ALPHA = 0.05
#: the power a "would need about N repeats" figure is for
POWER = 0.8
#: values within this share of their scale of each other are the same (module docstring)
SAME = 1e-9
#: values (and spreads) below this are rounding noise, whatever their scale (module docstring)
ROUNDING = 1e-12
#: the default equivalence margin on a ratio of two positive measures: 1/1.25 to 1.25, the
#: 80–125 % convention of bioequivalence (FDA 2001, *Statistical approaches to establishing
#: bioequivalence*; Schuirmann 1987): a quarter more or a fifth less counts as different
EQUIVALENCE_RATIO = 1.25
SUPPORTED, CONTRADICTED, EQUIVALENT, IDENTICAL, INCONCLUSIVE, NOT_TESTED = (
    "supported", "contradicted", "equivalent", "identical", "inconclusive", "not tested")
VERDICTS = (SUPPORTED, CONTRADICTED, EQUIVALENT, IDENTICAL, INCONCLUSIVE, NOT_TESTED)
#: the most repeats a "would need about" statement names (beyond: "more than")
MAX_REPEATS_NAMED = 1000


def _two_sided(t: float, df: int) -> float:
    return min(1.0, 2 * (1 - t_cdf(abs(t), df)))


def is_noise(x) -> bool:
    """A number below :data:`ROUNDING` in size (a float sum's rounding of 0)."""
    return x is not None and np.isfinite(x) and abs(x) < ROUNDING


def repeats_for(effect: float, alpha: float, power: float = POWER) -> int | None:
    """The smallest R (from :data:`MIN_FOR_INTERVAL`) at which a two-sided paired t-test at
    ``alpha`` of a difference of standardised size ``effect`` (|mean| / SD) has ``power``
    (module docstring); ``MAX_REPEATS_NAMED + 1`` when beyond; None without an effect."""
    if not (np.isfinite(effect) and effect > 0 and 0 < alpha < 1):
        return None
    from scipy.stats import nct
    from scipy.stats import t as student

    def reaches(n: int) -> bool:
        crit = student.isf(alpha / 2, n - 1)
        shift = effect * math.sqrt(n)
        lower = nct.cdf(-crit, n - 1, shift)  # NaN where it underflows
        return nct.sf(crit, n - 1, shift) + (lower if np.isfinite(lower) else 0.0) >= power

    # the normal approximation brackets the answer; the noncentral t decides within it
    guess = ((t_quantile(1 - alpha / 2, 1e6) + t_quantile(power, 1e6)) / effect) ** 2
    low = max(MIN_FOR_INTERVAL - 1, min(int(guess) - 2, MAX_REPEATS_NAMED))
    high = min(MAX_REPEATS_NAMED, max(int(math.ceil(guess)) + 3, MIN_FOR_INTERVAL))
    if low >= MIN_FOR_INTERVAL and reaches(low):
        low = MIN_FOR_INTERVAL - 1
    while high <= MAX_REPEATS_NAMED and not reaches(high):
        if high == MAX_REPEATS_NAMED:
            return MAX_REPEATS_NAMED + 1
        low, high = high, min(MAX_REPEATS_NAMED, 2 * high)
    while high - low > 1:  # power grows with n: bisect
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def equivalence_repeats_for(room: float, alpha: float, power: float = POWER) -> int | None:
    """The repeats at which two one-sided tests at ``alpha`` of a ratio whose mean log lies
    ``room`` SDs inside the margin would have about ``power`` (module docstring); None where
    there is no room."""
    if not (np.isfinite(room) and room > 0 and 0 < alpha < 1):
        return None
    for n in range(MIN_FOR_INTERVAL, MAX_REPEATS_NAMED + 1):
        if room * math.sqrt(n) >= t_quantile(1 - alpha, n - 1) + t_quantile(power, n - 1):
            return n
    return MAX_REPEATS_NAMED + 1


def claim_repeats(effect: float, room: float, alpha: float, power: float = POWER) -> float:
    """The repeats at which either verdict of a claim (told apart, at standardised effect
    ``effect``; practically equivalent, ``room`` SDs inside the margin) would have ``power``
    at ``alpha``: the fewer of the two; NaN where neither can be projected."""
    counts = [n for n in (repeats_for(effect, alpha, power),
                          equivalence_repeats_for(room, alpha, power)) if n is not None]
    return float(min(counts)) if counts else np.nan


@dataclass(frozen=True)
class Paired:
    """A per-repeat difference: mean, SD, count, the scale of the values it is a difference
    of, and its interval, test and verdict (module docstring)."""

    label: str
    mean: float
    sd: float
    n: int
    scale: float = np.nan

    @classmethod
    def of(cls, label: str, differences, scale: float | None = None) -> Paired:
        """``scale``: the magnitude of the values the differences are of (default: of the
        differences themselves)."""
        d = np.asarray(differences, dtype=float)
        d = d[np.isfinite(d)]
        if scale is None:
            scale = float(np.abs(d).max()) if len(d) else np.nan
        return cls(label, float(d.mean()) if len(d) else np.nan,
                   float(d.std(ddof=1)) if len(d) > 1 else np.nan, len(d), float(scale))

    @classmethod
    def between(cls, label: str, a: pd.Series, b: pd.Series) -> Paired:
        """a − b over the repeats both have (series indexed by repeat)."""
        x, y = paired_values(a, b)
        scale = float(max(np.abs(x).max(), np.abs(y).max())) if len(x) else np.nan
        return cls.of(label, x - y, scale)

    @property
    def tolerance(self) -> float:
        return max(SAME * self.scale if np.isfinite(self.scale) else 0.0, ROUNDING)

    @property
    def same_everywhere(self) -> bool:
        """Every difference the same, within :data:`SAME` of the values' scale."""
        return self.n >= 2 and np.isfinite(self.sd) and self.sd <= self.tolerance

    @property
    def identical(self) -> bool:
        """The same in every repeat and that difference (within the tolerance) 0."""
        return self.same_everywhere and abs(self.mean) <= self.tolerance

    @property
    def has_interval(self) -> bool:
        return self.n >= MIN_FOR_INTERVAL and np.isfinite(self.sd) and not self.same_everywhere

    def half_width(self, n: int | None = None, level: float = 0.95) -> float:
        n = self.n if n is None else n
        return t_quantile(0.5 + level / 2, n - 1) * self.sd / math.sqrt(n) if n > 1 else np.nan

    @property
    def low(self) -> float:
        return self.mean - self.half_width() if self.has_interval else np.nan

    @property
    def high(self) -> float:
        return self.mean + self.half_width() if self.has_interval else np.nan

    @property
    def p_value(self) -> float:
        """Two-sided p of a zero mean difference (module docstring); NaN with too few repeats
        and for identical values (nothing to test)."""
        if self.n < MIN_FOR_INTERVAL or not np.isfinite(self.mean) or self.identical:
            return np.nan
        if self.same_everywhere:
            return min(1.0, 2 * 0.5 ** self.n)
        return _two_sided(self.mean * math.sqrt(self.n) / self.sd, self.n - 1)

    def verdict(self, threshold: float = ALPHA) -> str:
        """``supported``/``contradicted`` when the p-value is at most ``threshold`` (the
        multiplicity control's), by the sign of the mean; ``identical``; else
        ``inconclusive``."""
        return verdict_of(self.p_value, np.nan, self.mean, self.identical, threshold)

    @property
    def effect(self) -> float:
        """|d̄| / s_d (module docstring); NaN without a spread or a difference."""
        if self.n < 2 or not np.isfinite(self.sd) or self.same_everywhere or \
                not abs(self.mean) > self.tolerance:
            return np.nan
        return abs(self.mean) / self.sd

    def repeats_needed(self, power: float = POWER, alpha: float = ALPHA) -> int | None:
        """The smallest R at which a two-sided paired t-test at ``alpha`` of a difference of
        this mean and SD has ``power`` (:func:`repeats_for`); None without a spread or a
        difference."""
        return repeats_for(self.effect, alpha, power)

    def text(self) -> str:
        """The difference with its interval, or why it has none."""
        if self.n < MIN_FOR_INTERVAL:
            return (f"{self.label} {signed(self.mean)} (too few repeats for an interval: "
                    f"{self.n}; run ≥ {MIN_FOR_INTERVAL})")
        if self.identical:
            return f"{self.label} 0 (identical in every repeat)"
        if not self.has_interval:
            return f"{self.label} {signed(self.mean)} (the same in every repeat: no interval)"
        return f"{self.label} {signed_ci(self.mean, self.low, self.high)}"


def verdict_of(p_difference: float, p_equivalent: float, difference: float, identical: bool,
               threshold: float = ALPHA) -> str:
    """The verdict of a comparison at ``threshold`` (module docstring): ``equivalent`` when
    ``identical`` (nothing to test), else ``equivalent`` when its equivalence p holds, else
    ``supported``/``contradicted`` by the
    sign of the difference when its p holds, else ``inconclusive``."""
    if identical:
        return IDENTICAL
    if np.isfinite(p_equivalent) and p_equivalent <= threshold:
        return EQUIVALENT
    if not np.isfinite(p_difference) or p_difference > threshold:
        return INCONCLUSIVE
    return SUPPORTED if difference > 0 else CONTRADICTED


def repeats_phrase(needed: int) -> str:
    """"about N repeats" at :data:`POWER`, N rounded to two significant digits from 100."""
    if needed > MAX_REPEATS_NAMED:
        return f"more than {MAX_REPEATS_NAMED:,} repeats"
    if needed >= 100:
        digits = 10 ** (len(str(needed)) - 2)
        needed = int(round(needed / digits) * digits)
    return f"about {needed:,} repeats"


def paired_values(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The values of two series (indexed by repeat) at the repeats both have, where both are
    defined."""
    if not a.index.equals(b.index):
        common = a.index.intersection(b.index)
        a, b = a.loc[common], b.loc[common]
    x, y = a.to_numpy(float), b.to_numpy(float)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def _log_ratio(a: pd.Series, b: pd.Series) -> Paired | None:
    x, y = paired_values(a, b)
    if not len(x) or not ((x > 0).all() and (y > 0).all()):
        return None
    return Paired.of("log ratio", np.log(x) - np.log(y), scale=1.0)


@dataclass(frozen=True)
class Compared:
    """a against b paired over repeats (module docstring): the difference a − b, told apart
    from 0 or not, and the ratio a / b, practically equivalent to 1 within ``margin`` or not.
    ``log_ratio`` is None where a value is not positive (no ratio)."""

    difference: Paired
    log_ratio: Paired | None
    margin: float = EQUIVALENCE_RATIO

    @classmethod
    def between(cls, label: str, a: pd.Series, b: pd.Series,
                margin: float = EQUIVALENCE_RATIO) -> Compared:
        return cls(Paired.between(label, a, b), _log_ratio(a, b), margin)

    @property
    def ratio(self) -> float:
        return math.exp(self.log_ratio.mean) if self.log_ratio is not None else np.nan

    @property
    def ratio_low(self) -> float:
        return math.exp(self.log_ratio.low) if self.log_ratio is not None and \
            self.log_ratio.has_interval else np.nan

    @property
    def ratio_high(self) -> float:
        return math.exp(self.log_ratio.high) if self.log_ratio is not None and \
            self.log_ratio.has_interval else np.nan

    @property
    def p_equivalent(self) -> float:
        """The two one-sided tests' p of a ratio inside [1/margin, margin] (module
        docstring); NaN without a ratio or with too few repeats."""
        lr = self.log_ratio
        if lr is None or lr.n < MIN_FOR_INTERVAL or not np.isfinite(lr.mean) or \
                self.difference.identical:
            return np.nan
        bound = math.log(self.margin)
        if lr.same_everywhere:
            return 0.5 ** lr.n if abs(lr.mean) < bound else 1.0
        se = lr.sd / math.sqrt(lr.n)
        above_low = 1 - t_cdf((lr.mean + bound) / se, lr.n - 1)
        below_high = t_cdf((lr.mean - bound) / se, lr.n - 1)
        return float(max(above_low, below_high))

    @property
    def p_value(self) -> float:
        """The p that enters the page's multiplicity control (module docstring)."""
        ps = [p for p in (self.difference.p_value, self.p_equivalent) if np.isfinite(p)]
        return min(ps) if ps else np.nan

    def verdict(self, threshold: float = ALPHA) -> str:
        d = self.difference
        return verdict_of(d.p_value, self.p_equivalent, d.mean, d.identical, threshold)

    @property
    def room(self) -> float:
        """How far inside the equivalence margin the mean log ratio lies, in SDs of the log
        ratios, (log M − |l̄|) / s_l (module docstring, "Power"); NaN where it is at or beyond
        the margin or has no spread."""
        lr = self.log_ratio
        if lr is None or lr.n < 2 or not np.isfinite(lr.sd) or lr.same_everywhere:
            return np.nan
        room = math.log(self.margin) - abs(lr.mean)
        return room / lr.sd if room > 0 else np.nan

    @property
    def margin_sds(self) -> float:
        """The equivalence margin in SDs of the log ratios, log M / s_l (the effect of
        interest of a sequential study's futility rule, :mod:`modelvar.study.stopping`); NaN
        without a spread."""
        lr = self.log_ratio
        if lr is None or lr.n < 2 or not np.isfinite(lr.sd) or lr.same_everywhere:
            return np.nan
        return math.log(self.margin) / lr.sd

    def equivalence_repeats(self, power: float = POWER, alpha: float = ALPHA) -> int | None:
        """The repeats at which the ratio's two one-sided tests at ``alpha`` would have about
        ``power``, if the log ratios keep the mean and spread seen
        (:func:`equivalence_repeats_for`); None where the ratio is at or beyond the margin, or
        has no spread."""
        return equivalence_repeats_for(self.room, alpha, power)

    def repeats_needed(self, alpha: float = ALPHA) -> float:
        """The repeats at which either verdict (told apart, or practically equivalent) would
        have 80 % power at ``alpha`` (:func:`claim_repeats`)."""
        return claim_repeats(self.difference.effect, self.room, alpha)

    def row(self) -> dict:
        """The comparison as a table's columns: what :func:`verdict_of` needs at any
        threshold, the difference and the ratio with their intervals, and the standardised
        sizes its power at any level follows from (``effect``, ``room``, ``margin_sds``;
        ``repeats_needed``
        is left to the page, which computes it at the level the claim faces,
        :func:`claim_repeats`)."""
        d = self.difference
        return {"repeats": d.n, "difference": d.mean, "difference_low": d.low,
                "difference_high": d.high, "ratio": self.ratio, "ratio_low": self.ratio_low,
                "ratio_high": self.ratio_high, "identical": d.identical,
                "p_difference": d.p_value, "p_equivalent": self.p_equivalent,
                "p_value": self.p_value, "effect": d.effect, "room": self.room,
                "margin_sds": self.margin_sds, "repeats_needed": np.nan}

    def ratio_text(self) -> str:
        """The ratio with its interval, or the ratio alone."""
        if not np.isfinite(self.ratio):
            return "no ratio (a value of 0)"
        if np.isfinite(self.ratio_low):
            return f"ratio {fmt(self.ratio)} [{fmt(self.ratio_low)}, {fmt(self.ratio_high)}]"
        return f"ratio {fmt(self.ratio)}"


def too_few(n: int, what: str = "repeats") -> str:
    """The words for a count below :data:`MIN_FOR_INTERVAL`."""
    return f"too few {what} for an interval ({n}): run ≥ {MIN_FOR_INTERVAL}"


# ------------------------------------------------------------------ numbers in sentences
def decimals(value: float, low: float = np.nan, high: float = np.nan) -> int:
    """Decimals for a number (and its interval) in a sentence: at least 3; two significant
    digits of the value (of the interval's larger end where the value is 0 or rounding
    noise); one of the interval's end nearest 0 when the interval excludes 0, so that a
    difference told apart from 0 never prints as 0 (at most 10)."""
    out = 3
    if np.isfinite(value) and value != 0 and not is_noise(value):
        out = max(out, 1 - math.floor(math.log10(abs(value))))
    elif np.isfinite(low) and np.isfinite(high) and max(abs(low), abs(high)) > ROUNDING:
        # a value of 0 (or rounding noise): two significant digits of the interval's ends
        out = max(out, 1 - math.floor(math.log10(max(abs(low), abs(high)))))
    if np.isfinite(low) and np.isfinite(high) and (low > 0 or high < 0):
        out = max(out, -math.floor(math.log10(min(abs(low), abs(high)))))
    return min(out, 10)


def fmt(x) -> str:
    """A number with :func:`decimals` decimals; an exact zero (a deterministic quantity, or a
    float sum's rounding below :data:`ROUNDING`) as 0."""
    if x is None or not np.isfinite(x):
        return "–"
    return "0" if is_noise(x) else f"{x:.{decimals(x)}f}"


def with_ci(value, low, high) -> str:
    """The value with its interval (one number of decimals for the three); the value alone
    where it has none (too few repeats, or the same in every repeat: never an interval of
    width 0, nor of a width that is rounding noise)."""
    if value is None or not np.isfinite(value):
        return "–"
    if not (np.isfinite(low) and np.isfinite(high)) or high - low <= ROUNDING:
        return fmt(value)
    k = decimals(value, low, high)
    value = 0.0 if is_noise(value) else value
    return f"{value:.{k}f} [{low:.{k}f}, {high:.{k}f}]"


def signed(value) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return "0" if is_noise(value) else f"{value:+.{decimals(value)}f}"


def signed_ci(value, low, high) -> str:
    """A difference with its sign and interval (one number of decimals for the three)."""
    if value is None or not np.isfinite(value):
        return "–"
    if not (np.isfinite(low) and np.isfinite(high)) or high - low <= ROUNDING:
        return signed(value)
    k = decimals(value, low, high)
    value = 0.0 if is_noise(value) else value
    return f"{value:+.{k}f} [{low:+.{k}f}, {high:+.{k}f}]"


# ------------------------------------------------------------------ per-repeat values
class PerRepeat:
    """Per (dataset, classifier, cell, repeat): ``accuracy`` (the runs' mean), ``sd`` (their
    within-repeat SD) and ``disagreement`` (mean pairwise churn), from the summary table's
    full-test-set rows; ``frame`` the table, indexed by those four, and each cell's values
    by repeat at hand (:meth:`series`)."""

    COLUMNS = ("accuracy", "sd", "disagreement")

    def __init__(self, summary: pd.DataFrame):
        rows = summary[summary["subset"] == "all"] if "subset" in summary else summary
        keys = ["dataset", "classifier", "cell", "repeat"]
        acc = rows[rows["metric"] == "accuracy"].set_index(keys)
        churn = rows[rows["metric"] == "churn"].set_index(keys)
        frame = pd.DataFrame({"accuracy": acc["mean"], "sd": acc["sd"]})
        self.frame = frame.join(churn["mean"].rename("disagreement"), how="outer").sort_index()
        self._cells = {key: part.droplevel([0, 1, 2]) for key, part in
                       self.frame.groupby(level=[0, 1, 2], sort=False, observed=True)}

    def series(self, dataset, classifier, cell: str, column: str) -> pd.Series:
        """One cell's per-repeat ``column`` (empty where it has none)."""
        part = self._cells.get((dataset, classifier, cell))
        return part[column] if part is not None else pd.Series(dtype=float)


def per_repeat(summary: pd.DataFrame) -> PerRepeat:
    """The summary's per-repeat values (:class:`PerRepeat`)."""
    return PerRepeat(summary)


def series(values: PerRepeat, dataset, classifier, cell: str, column: str) -> pd.Series:
    """One cell's per-repeat ``column`` of :func:`per_repeat` (empty where it has none)."""
    return values.series(dataset, classifier, cell, column)


def between_cells(values: PerRepeat, dataset, classifier, cell_a: str, cell_b: str,
                  column: str, label: str,
                  margin: float = EQUIVALENCE_RATIO) -> Compared | None:
    """``cell_a`` against ``cell_b`` of one dataset × classifier, paired over the repeats both
    have, from :func:`per_repeat`'s ``column``; None where either cell has no values."""
    a = series(values, dataset, classifier, cell_a, column)
    b = series(values, dataset, classifier, cell_b, column)
    if a.empty or b.empty:
        return None
    return Compared.between(label, a, b, margin)
