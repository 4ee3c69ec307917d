"""Student's t quantiles without scipy, for the jackknife intervals of every metrics job.

Importing ``scipy.stats`` costs a metrics job more CPU than its whole start-up
(docs/measurements/design-choices.md), for one quantile per summary row. Here:

* the t CDF from the regularised incomplete beta function, F(t) = 1 − ½·I_x(ν/2, ½) with
  x = ν/(ν + t²) for t ≥ 0 (Abramowitz & Stegun 26.7.1), I_x evaluated by its continued
  fraction (modified Lentz; Press et al., *Numerical Recipes*, §6.4), the symmetry
  I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly;
* the quantile by Newton steps on F with the t density, started from the normal quantile and
  safeguarded by bisection.

``tests/test_metrics_inference.py`` checks it against ``scipy.stats.t.ppf`` to 2e-9 over
ν = 0.7 … 1000 and p = 0.0013 … 0.999.
"""

from __future__ import annotations

import functools
import math


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 ≤ x ≤ 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def _t_pdf(t: float, df: float) -> float:
    log = (math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
           - (df + 1) / 2 * math.log1p(t * t / df))
    return math.exp(log)


def _normal_quantile(p: float) -> float:
    """Acklam's rational approximation (relative error < 1.2e-9): the starting point."""
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (0 < p < 1, df > 0); a
    pure function, so its values are kept (the same few quantiles are asked for again and
    again)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:  # bracket the root
        low, high = high, high * 2.0
    t = min(max(_normal_quantile(p), low), high)
    for _ in range(200):
        error = t_cdf(t, df) - p
        if abs(error) < 1e-14:
            break
        if error > 0:
            high = t
        else:
            low = t
        step = t - error / _t_pdf(t, df)
        t = step if low < step < high else (low + high) / 2.0
        if high - low < 1e-13 * max(1.0, abs(t)):
            break
    return t
