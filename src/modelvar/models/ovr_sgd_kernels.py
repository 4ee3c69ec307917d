"""The numba kernels of :mod:`modelvar.models.ovr_sgd` (imported only when a many-class SGD model
fits: numba and its compiler load in about a second, and the compiled kernels are cached).

No ``fastmath``: every sum runs in the written order, and no multiply-add is fused, so the
results do not depend on the CPU's vector width or instruction set. ``error_model="numpy"``: a
division by zero gives inf or nan instead of raising (no divisor here is zero), so the loops that
divide carry no check and vectorise (the same bits; 5–8 % less time per fit).
"""

import math

import numpy as np
from numba import njit

#: scikit-learn's clip of the loss gradient and its threshold for folding the weight scale.
MAX_DLOSS = 1e12
WSCALE_RESET = 1e-9


@njit(cache=True, error_model="numpy", inline="always")
def modified_huber_loss_and_gradient(label_is_k, p):
    """Loss and ∂loss/∂p of the modified Huber loss at target y = ±1, as scikit-learn's (z =
    y·p): 0 for z ≥ 1, (1 − z)² for z ≥ −1, else −4z. The hinge and log losses have loops of
    their own that vectorise (:func:`hinge_steps`, :func:`log_loss_steps`)."""
    y = 1.0 if label_is_k else -1.0
    z = p * y
    if z >= 1.0:
        return 0.0, 0.0
    if z >= -1.0:
        return (1.0 - z) * (1.0 - z), 2.0 * (1.0 - z) * -y
    return -4.0 * z, -4.0 * y


# ---------------------------------------------------------------- exp and log of our own
# glibc's exp and log pick an implementation by the CPU (an FMA variant where the CPU has FMA,
# ifunc dispatch), and numpy's and scipy's vector loops by the CPU's vector width, so their last
# bit may differ between machines. These are plain IEEE arithmetic in a fixed order (no fused
# multiply-add, no fastmath): the same bits on every x86-64 and ARM CPU. exp is inlined into
# the log loss's loop over classes (libm's is a call per value): 20 % less time per exp here.

#: 2**-j for j = 0 … 1075 (exact; from 2**-1023 on subnormal, 2**-1075 rounds to 0)
POW2_NEG = np.ldexp(1.0, -np.arange(1076))
_INV_LN2 = 1.4426950408889634
#: ln 2 split as fdlibm does: LN2_HI has its low 32 bits 0, so m · LN2_HI is exact for |m| < 2**20
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
#: below this exp(x) is 0 here (the exact value is under the smallest subnormal, 4.9e-324)
EXP_MIN = -745.0


@njit(cache=True, error_model="numpy", inline="always")
def exp_nonpositive(x):
    """exp(x) for x ≤ 0, within 2 units in the last place of the exact value for x ≥ −708 (normal
    results; tested against libm), 0 below ``EXP_MIN``. x = m ln 2 + r with m = round(x / ln 2)
    (Cody and Waite's two-part ln 2), |r| ≤ ½ ln 2; exp(r) by its Taylor polynomial to r**13
    (remainder < 5e-18) in Horner form; then exp(x) = exp(r) · 2**m from :data:`POW2_NEG`."""
    x = max(x, EXP_MIN)
    m = math.floor(x * _INV_LN2 + 0.5)
    r = (x - m * LN2_HI) - m * LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * POW2_NEG[min(int(-m), 1075)]


@njit(cache=True, error_model="numpy")
def log_each(x, out):
    """log(x) for finite x > 0 over 1-d arrays: x = f · 2**e with f in [√½, √2) (frexp: exact);
    log f = 2 atanh(s) = 2 (s + s³/3 + … + s²¹/21), s = (f − 1)/(f + 1), |s| ≤ 0.172 (remainder
    < 1e-18); log x = e · LN2_HI + (log f + e · LN2_LO)."""
    for i in range(x.shape[0]):
        f, e = math.frexp(x[i])
        if f < 0.7071067811865476:
            f *= 2.0
            e -= 1
        s = (f - 1.0) / (f + 1.0)
        z = s * s
        q = 1.0 / 21.0
        for j in range(19, 0, -2):
            q = q * z + 1.0 / j
        out[i] = e * LN2_HI + (2.0 * s * q + e * LN2_LO)


@njit(cache=True, error_model="numpy")
def expit_each(scores):
    """1 / (1 + exp(−p)) of every entry of a 2-d array, with :func:`exp_nonpositive`:
    1 / (1 + e) for p ≥ 0 and e / (1 + e) below, e = exp(−|p|)."""
    out = np.empty_like(scores)
    for i in range(scores.shape[0]):
        for j in range(scores.shape[1]):
            p = scores[i, j]
            e = exp_nonpositive(-abs(p))
            out[i, j] = (1.0 if p >= 0.0 else e) / (1.0 + e)
    return out


#: A row's step goes to the columns of the problems it moved alone (a strided pass over each,
#: then a pass summing the next decisions) while fewer than 1 / SPARSE_SHARE of them moved, else
#: to all columns in one pass. The two give the same bits (an unmoved column adds ``x · 0``, which
#: changes no weight but a −0, and a weight is −0 only after an L2 decay factor of exactly 0,
#: η·α ≥ 1, folded a negative weight: then only the sign of that zero differs). The strided path
#: is faster below a share of moved problems of 5–10 % (docs/measurements/design-choices.md).
SPARSE_SHARE = 16

#: The passes over the weights (:func:`pair_dots`, :func:`apply_pair_steps`, :func:`row_dots`,
#: :func:`apply_step`) run over the active columns rounded up to a multiple of COLUMN_BLOCK:
#: their loop over columns is vectorised in blocks, and a count that is not a multiple of the
#: block leaves a remainder done one column at a time, slower than a whole block
#: (docs/measurements/design-choices.md). The columns behind
#: the active ones are stopped problems or the zero columns ``fit`` pads the weights with; their
#: sums are never read, and their coefficients are 0 (``x · 0`` added, as for an unmoved column).
COLUMN_BLOCK = 8

#: The log loss's running product is renormalised by 2**-RENORM_BITS when it passes 2**RENORM_BITS.
RENORM_BITS = 500
_RENORM = 2.0**RENORM_BITS
_RENORM_LOG = RENORM_BITS * math.log(2.0)


@njit(cache=True, error_model="numpy")
def log_loss_steps(dot, s, b, own, eta, penalised, alpha, l2_part, l1_part, vv, v1, n_active,
                   margin, expm, objective, log_product, step):
    """The log loss's objective and step for every active problem with one ``exp`` each.

    With ``e = exp(−|p|)``: ``log(1 + exp(p)) = max(p, 0) + log(1 + e)`` and
    ``expit(p) = 1 / (1 + e)`` for p ≥ 0, ``e / (1 + e)`` below. The ``log(1 + e)`` terms are
    summed as the log of their product (``log_product``, taken once per epoch by the caller;
    ``objective`` gets ``RENORM_BITS · log 2`` whenever the product is renormalised), so the row
    loop calls no ``log`` and its other arithmetic vectorises. The gradient ``expit(p) − y`` is in
    [−1, 1]: scikit-learn's clip at ±1e12 never acts.
    """
    for k in range(n_active):
        p = dot[k] * s[k] + b[k]
        margin[k] = p
        expm[k] = -abs(p)
    for k in range(n_active):
        expm[k] = exp_nonpositive(expm[k])
    for k in range(n_active):
        p = margin[k]
        e = expm[k]
        y = 1.0 if k == own else 0.0
        lo = max(p, 0.0) - y * p
        if penalised:
            sk = s[k]
            lo += alpha * (l2_part * 0.5 * (vv[k] * (sk * sk)) + l1_part * (v1[k] * sk))
        grown = log_product[k] * (1.0 + e)
        big = grown > _RENORM
        log_product[k] = grown * (1.0 / _RENORM) if big else grown
        objective[k] += lo + (_RENORM_LOG if big else 0.0)
        expit = (1.0 if p >= 0.0 else e) / (1.0 + e)
        step[k] = -eta[k] * (expit - y)


@njit(cache=True, error_model="numpy")
def flush_scale(k, v, aw, s, avg_a, avg_b, averaging):
    """scikit-learn's ``reset_wscale`` for problem ``k``: fold the scale into the weights."""
    d = v.shape[0]
    if averaging:
        for j in range(d):
            aw[j, k] = (aw[j, k] + avg_a[k] * v[j, k]) * (1.0 / avg_b[k])
        avg_a[k] = 0.0
        avg_b[k] = 1.0
    for j in range(d):
        v[j, k] *= s[k]
    s[k] = 1.0


@njit(cache=True, error_model="numpy")
def row_dots(X, i, v, n_active, out):
    """``out[k] = v[:, k] · X[i]`` for the active columns, summed over the features in order
    (four features per pass over ``out``; the order of the additions is unchanged)."""
    out[:] = 0.0
    d = X.shape[1]
    j = 0
    while j + 4 <= d:
        x0, x1, x2, x3 = X[i, j], X[i, j + 1], X[i, j + 2], X[i, j + 3]
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        for k in range(n_active):
            out[k] = (((out[k] + v0[k] * x0) + v1[k] * x1) + v2[k] * x2) + v3[k] * x3
        j += 4
    while j < d:
        xj = X[i, j]
        for k in range(n_active):
            out[k] += v[j, k] * xj
        j += 1


@njit(cache=True, error_model="numpy")
def apply_step(x, x_next, v, coef, n_active, nxt):
    """``v[:, k] += coef[k] · x`` and, in the same pass, ``nxt[k] = v[:, k] · x_next`` (four
    features at a time, as :func:`row_dots`)."""
    nxt[:] = 0.0
    d = x.shape[0]
    j = 0
    while j + 4 <= d:
        x0, x1, x2, x3 = x[j], x[j + 1], x[j + 2], x[j + 3]
        n0, n1, n2, n3 = x_next[j], x_next[j + 1], x_next[j + 2], x_next[j + 3]
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        for k in range(n_active):
            c = coef[k]
            w0 = v0[k] + x0 * c
            w1 = v1[k] + x1 * c
            w2 = v2[k] + x2 * c
            w3 = v3[k] + x3 * c
            v0[k], v1[k], v2[k], v3[k] = w0, w1, w2, w3
            nxt[k] = (((nxt[k] + w0 * n0) + w1 * n1) + w2 * n2) + w3 * n3
        j += 4
    while j < d:
        xj = x[j]
        xn = x_next[j]
        for k in range(n_active):
            w = v[j, k] + xj * coef[k]
            v[j, k] = w
            nxt[k] += w * xn
        j += 1


@njit(cache=True, error_model="numpy")
def apply_l1_step(x, x_next, v, coef, s, u, q, n_active, nrm2, nrm1, nxt):
    """:func:`apply_step` followed by the cumulative L1 penalty (scikit-learn's ``l1penalty``);
    ``nrm2``, ``nrm1``: the norms of each column after the step, before the penalty."""
    nxt[:] = 0.0
    nrm2[:] = 0.0
    nrm1[:] = 0.0
    for j in range(x.shape[0]):
        xj = x[j]
        xn = x_next[j]
        for k in range(n_active):
            w = v[j, k] + xj * coef[k]
            nrm2[k] += w * w
            nrm1[k] += abs(w)
            sk = s[k]
            z = w
            if sk * w > 0.0:
                z = max(0.0, w - (u[k] + q[j, k]) / sk)
            elif sk * w < 0.0:
                z = min(0.0, w + (u[k] - q[j, k]) / sk)
            q[j, k] += sk * (z - w)
            v[j, k] = z
            nxt[k] += z * xn


@njit(cache=True, error_model="numpy")
def add_average(x, aw, avg_a, acoef, n_active):
    """scikit-learn's ``add_average`` for every active problem."""
    for j in range(x.shape[0]):
        xj = x[j]
        for k in range(n_active):
            aw[j, k] += avg_a[k] * xj * acoef[k]


@njit(cache=True, error_model="numpy")
def squared_norms(X):
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            out[i] += X[i, j] * X[i, j]
    return out


@njit(cache=True, error_model="numpy", inline="always")
def hinge_steps(dot, s, b, own, eta, penalised, alpha, l2_part, l1_part, vv, v1, n_active,
                objective, step):
    """The hinge loss's objective and step for every active problem, as scikit-learn's: loss
    ``max(0, 1 − z)`` and gradient −y for z = y·p ≤ 1, else 0, written as selects so the loop
    vectorises (the gradient is 0 or ±1, which scikit-learn's clip at ±1e12 leaves as it is)."""
    for k in range(n_active):
        sk = s[k]
        p = dot[k] * sk + b[k]
        y = 1.0 if k == own else -1.0
        z = p * y
        inside = z <= 1.0
        lo = 1.0 - z if inside else 0.0
        g = -y if inside else 0.0
        if penalised:
            lo += alpha * (l2_part * 0.5 * (vv[k] * (sk * sk)) + l1_part * (v1[k] * sk))
        objective[k] += lo
        step[k] = -eta[k] * g


@njit(cache=True, error_model="numpy", inline="always")
def row_scalars(own, loss_kind, dot, s, b, eta, penalised, alpha, l2_part, l1_part, vv, v1,
                n_active, margin, expm, objective, log_product, step, coef, acoef, xxi,
                averaging, has_l1, u, v, aw, avg_a, avg_b, may_fold):
    """One row's work per problem, in scikit-learn's order: objective and step from the decision
    sums ``dot`` (v · x), the L2 decay of the scales, the step's coefficient on the row
    (``coef`` = step / scale; ``acoef`` for the average), the intercepts, the tracked norm ‖v‖²
    and the L1 budget ``u``. Where a scale falls below ``WSCALE_RESET`` it is folded into its
    column (:func:`flush_scale`), which the caller allows only where the row is taken alone
    (``may_fold``). Returns how many problems moved."""
    if loss_kind == 0:
        log_loss_steps(dot, s, b, own, eta, penalised, alpha, l2_part, l1_part, vv, v1,
                       n_active, margin, expm, objective, log_product, step)
    elif loss_kind == 1:
        hinge_steps(dot, s, b, own, eta, penalised, alpha, l2_part, l1_part, vv, v1, n_active,
                    objective, step)
    else:  # modified Huber
        for k in range(n_active):
            sk = s[k]
            p = dot[k] * sk + b[k]
            lo, g = modified_huber_loss_and_gradient(k == own, p)
            if penalised:
                lo += alpha * (l2_part * 0.5 * (vv[k] * (sk * sk)) + l1_part * (v1[k] * sk))
            objective[k] += lo
            step[k] = -eta[k] * min(max(g, -MAX_DLOSS), MAX_DLOSS)
    if l2_part > 0.0:
        fold = False
        for k in range(n_active):
            s[k] *= max(0.0, 1.0 - l2_part * eta[k] * alpha)
            fold |= s[k] < WSCALE_RESET
        if fold and may_fold:
            for k in range(n_active):
                if s[k] < WSCALE_RESET:
                    sk = s[k]
                    flush_scale(k, v, aw, s, avg_a, avg_b, averaging)
                    vv[k] *= sk * sk
                    v1[k] *= sk
                    dot[k] *= sk
    n_moved = 0
    for k in range(n_active):
        moved = step[k] != 0.0
        ck = step[k] / s[k] if moved else 0.0
        coef[k] = ck
        n_moved += moved
        b[k] += step[k]
        if not has_l1:
            vv[k] = max(0.0, vv[k] + 2.0 * ck * dot[k] + ck * ck * xxi)
    if averaging:
        for k in range(n_active):
            acoef[k] = -step[k] / s[k]
    if has_l1:
        for k in range(n_active):
            u[k] += l1_part * eta[k] * alpha
    return n_moved


@njit(cache=True, error_model="numpy", inline="always")
def average_step(t, n_active, b, s, avg_a, avg_b, avg_b0):
    """scikit-learn's running-mean coefficients after step ``t`` (the lazy average)."""
    mu = 1.0 / t
    for k in range(n_active):
        if t > 1.0:
            avg_b[k] /= 1.0 - mu
        avg_a[k] += mu * avg_b[k] * s[k]
        avg_b0[k] += (b[k] - avg_b0[k]) / t


@njit(cache=True, error_model="numpy")
def pair_dots(x, y, v, n_active, dx, dy):
    """``dx[k] = v[:, k] · x`` and ``dy[k] = v[:, k] · y`` in one read of ``v`` (summed over
    the features in order, four per pass over the outputs: each pass loads and stores the
    sums once for four features; 3–20 % less time than two per pass, the same bits)."""
    dx[:] = 0.0
    dy[:] = 0.0
    d = x.shape[0]
    j = 0
    while j + 4 <= d:
        x0, x1, x2, x3 = x[j], x[j + 1], x[j + 2], x[j + 3]
        y0, y1, y2, y3 = y[j], y[j + 1], y[j + 2], y[j + 3]
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        for k in range(n_active):
            w0 = v0[k]
            w1 = v1[k]
            w2 = v2[k]
            w3 = v3[k]
            dx[k] = (((dx[k] + w0 * x0) + w1 * x1) + w2 * x2) + w3 * x3
            dy[k] = (((dy[k] + w0 * y0) + w1 * y1) + w2 * y2) + w3 * y3
        j += 4
    while j < d:
        xj, yj = x[j], y[j]
        vj = v[j]
        for k in range(n_active):
            dx[k] += vj[k] * xj
            dy[k] += vj[k] * yj
        j += 1


@njit(cache=True, error_model="numpy")
def apply_pair_steps(xa, xb, xc, xd, v, ca, cb, n_active, dc, dd):
    """``v[:, k] += ca[k] · xa``, then ``+= cb[k] · xb`` (each weight gets the two in that
    order, as row by row), and in the same pass ``dc[k] = v[:, k] · xc`` and ``dd[k] =
    v[:, k] · xd`` over the updated weights: one read and one write of ``v`` for two rows (four
    features per pass, as :func:`pair_dots`: 4–30 % less time than two, the same bits)."""
    dc[:] = 0.0
    dd[:] = 0.0
    d = xa.shape[0]
    j = 0
    while j + 4 <= d:
        a0, a1, a2, a3 = xa[j], xa[j + 1], xa[j + 2], xa[j + 3]
        b0, b1, b2, b3 = xb[j], xb[j + 1], xb[j + 2], xb[j + 3]
        c0, c1, c2, c3 = xc[j], xc[j + 1], xc[j + 2], xc[j + 3]
        e0, e1, e2, e3 = xd[j], xd[j + 1], xd[j + 2], xd[j + 3]
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        for k in range(n_active):
            cak = ca[k]
            cbk = cb[k]
            w0 = (v0[k] + a0 * cak) + b0 * cbk
            w1 = (v1[k] + a1 * cak) + b1 * cbk
            w2 = (v2[k] + a2 * cak) + b2 * cbk
            w3 = (v3[k] + a3 * cak) + b3 * cbk
            v0[k] = w0
            v1[k] = w1
            v2[k] = w2
            v3[k] = w3
            dc[k] = (((dc[k] + w0 * c0) + w1 * c1) + w2 * c2) + w3 * c3
            dd[k] = (((dd[k] + w0 * e0) + w1 * e1) + w2 * e2) + w3 * e3
        j += 4
    while j < d:
        aj, bj, cj, ej = xa[j], xb[j], xc[j], xd[j]
        vj = v[j]
        for k in range(n_active):
            w = (vj[k] + aj * ca[k]) + bj * cb[k]
            vj[k] = w
            dc[k] += w * cj
            dd[k] += w * ej
        j += 1


@njit(cache=True, error_model="numpy")
def add_pair_averages(xa, xb, aw, avg_a_of_a, acoef_a, avg_a_of_b, acoef_b, n_active):
    """:func:`add_average` of two rows in one pass (each entry gets the two in that order)."""
    for j in range(xa.shape[0]):
        aj = xa[j]
        bj = xb[j]
        for k in range(n_active):
            w = aw[j, k] + avg_a_of_a[k] * aj * acoef_a[k]
            aw[j, k] = w + avg_a_of_b[k] * bj * acoef_b[k]


@njit(cache=True, error_model="numpy")
def row_product(x, y):
    """x · y in a fixed order: four running sums (features j mod 4), added pairwise."""
    a0 = a1 = a2 = a3 = 0.0
    d = x.shape[0]
    j = 0
    while j + 4 <= d:
        a0 += x[j] * y[j]
        a1 += x[j + 1] * y[j + 1]
        a2 += x[j + 2] * y[j + 2]
        a3 += x[j + 3] * y[j + 3]
        j += 4
    while j < d:
        a0 += x[j] * y[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True, error_model="numpy")
def epoch(X, xx, col_of_row, order, n_active, loss_kind, l2_part, l1_part, alpha, averaging,
          t, v, b, s, vv, v1, eta, objective, log_product, aw, avg_a, avg_b, avg_b0, q, u):
    """One epoch over the rows in ``order`` for the problems in columns ``[0, n_active)``.

    ``col_of_row[i]``: the column of row i's class (≥ n_active: a stopped problem); ``xx[i]``:
    ‖X[i]‖². Per problem k: weights ``s[k] · v[:, k]``, ``vv[k]`` = ‖v[:, k]‖² and ``v1[k]`` =
    ‖v[:, k]‖₁ as of its last update (scikit-learn's tracked norms, unscaled). Without an L1 part
    ``vv`` follows the update exactly, ‖v + c·x‖² = ‖v‖² + 2c·(v·x) + c²‖x‖², with v·x the
    decision's own sum; with one, both norms are summed afresh over the updated column.

    **Rows go in pairs** (a, b): reading and writing ``v`` is what bounds a row's time, so one
    pass applies both rows' updates and sums the next pair's decisions (:func:`apply_pair_steps`).
    Row b's decision sums are then those of the weights before the pair plus row a's step:
    ``v·x_b + c_a (x_a·x_b)``, equal in exact arithmetic to summing over the updated weights,
    different in the last bits. A row goes alone, updated in a pass that sums the next row's
    decisions, where a scale may fall below ``WSCALE_RESET`` within the pair (it is folded at
    that row, as scikit-learn does), with an L1 part (its penalty clips the weights after every
    row) and as the last of an odd count. Returns the step counter after the epoch.
    """
    n = len(order)
    if n == 0 or n_active == 0:
        return t
    # the passes over the weights run over n_sweep columns (see COLUMN_BLOCK); the coefficients
    # of the columns from n_active on stay 0
    n_sweep = min(-(-n_active // COLUMN_BLOCK) * COLUMN_BLOCK, v.shape[1])
    da = np.zeros(n_sweep)
    db = np.zeros(n_sweep)
    ca = np.zeros(n_sweep)
    cb = np.zeros(n_sweep)
    aca = np.zeros(n_active)
    acb = np.zeros(n_active)
    avg_a_of_a = np.zeros(n_active)
    nrm2 = np.zeros(n_active)
    nrm1 = np.zeros(n_active)
    step = np.zeros(n_active)
    margin = np.zeros(n_active)
    expm = np.zeros(n_active)
    has_l1 = l1_part > 0.0
    penalised = l2_part > 0.0 or has_l1
    # s_low: a lower bound of every active scale (rounding is monotone, so decaying the smallest
    # scale by the smallest factor stays below every scale's own decay); exact where refreshed
    f_low = 1.0
    if l2_part > 0.0:
        for k in range(n_active):
            f_low = min(f_low, max(0.0, 1.0 - l2_part * eta[k] * alpha))
    s_low = 0.0
    # da (and db where db_ready): the decision sums of rows order[r] and order[r + 1]
    pair_dots(X[order[0]], X[order[min(1, n - 1)]], v, n_sweep, da, db)
    db_ready = True
    r = 0
    while r < n:
        a = order[r]
        pair = r + 1 < n and not has_l1
        if pair and l2_part > 0.0 and not (s_low * f_low) * f_low >= WSCALE_RESET:
            s_low = np.inf
            for k in range(n_active):
                f = max(0.0, 1.0 - l2_part * eta[k] * alpha)
                pair &= (s[k] * f) * f >= WSCALE_RESET
                s_low = min(s_low, s[k])
        if pair:
            bb = order[r + 1]
            if not db_ready:
                row_dots(X, bb, v, n_sweep, db)
            moved_a = row_scalars(col_of_row[a], loss_kind, da, s, b, eta, penalised, alpha,
                                  l2_part, l1_part, vv, v1, n_active, margin, expm, objective,
                                  log_product, step, ca, aca, xx[a], averaging, has_l1, u, v,
                                  aw, avg_a, avg_b, False)
            if averaging:
                avg_a_of_a[:] = avg_a[:n_active]
                average_step(t, n_active, b, s, avg_a, avg_b, avg_b0)
            t += 1.0
            g = row_product(X[a], X[bb])
            for k in range(n_active):
                db[k] += ca[k] * g
            moved_b = row_scalars(col_of_row[bb], loss_kind, db, s, b, eta, penalised, alpha,
                                  l2_part, l1_part, vv, v1, n_active, margin, expm, objective,
                                  log_product, step, cb, acb, xx[bb], averaging, has_l1, u, v,
                                  aw, avg_a, avg_b, False)
            c = order[min(r + 2, n - 1)]
            e = order[min(r + 3, n - 1)]
            if SPARSE_SHARE * (moved_a + moved_b) > 2 * n_active:
                apply_pair_steps(X[a], X[bb], X[c], X[e], v, ca, cb, n_sweep, da, db)
            else:  # few problems moved (the margin losses): update their columns only
                for k in range(n_active):
                    if ca[k] != 0.0 or cb[k] != 0.0:
                        for j in range(X.shape[1]):
                            v[j, k] = (v[j, k] + X[a, j] * ca[k]) + X[bb, j] * cb[k]
                pair_dots(X[c], X[e], v, n_sweep, da, db)
            db_ready = True
            if averaging:
                add_pair_averages(X[a], X[bb], aw, avg_a_of_a, aca, avg_a, acb, n_active)
                average_step(t, n_active, b, s, avg_a, avg_b, avg_b0)
            t += 1.0
            s_low = (s_low * f_low) * f_low
            r += 2
            continue
        moved_a = row_scalars(col_of_row[a], loss_kind, da, s, b, eta, penalised, alpha,
                              l2_part, l1_part, vv, v1, n_active, margin, expm, objective,
                              log_product, step, ca, aca, xx[a], averaging, has_l1, u, v, aw,
                              avg_a, avg_b, True)
        nxt = order[min(r + 1, n - 1)]
        if has_l1:
            apply_l1_step(X[a], X[nxt], v, ca, s, u, q, n_active, nrm2, nrm1, da)
        elif SPARSE_SHARE * moved_a > n_active:
            apply_step(X[a], X[nxt], v, ca, n_sweep, da)
        else:
            for k in range(n_active):
                if ca[k] != 0.0:
                    for j in range(X.shape[1]):
                        v[j, k] += X[a, j] * ca[k]
            row_dots(X, nxt, v, n_sweep, da)
        db_ready = False
        if averaging:
            add_average(X[a], aw, avg_a, aca, n_active)
        if has_l1:
            for k in range(n_active):
                if ca[k] != 0.0:
                    vv[k] = nrm2[k]
                    v1[k] = nrm1[k]
        if averaging:
            average_step(t, n_active, b, s, avg_a, avg_b, avg_b0)
        t += 1.0
        s_low *= f_low
        r += 1
    return t


@njit(cache=True, error_model="numpy")
def decision(X, W, b):
    """``X @ W + b`` with every sum over the features in order (no BLAS: the same bits on
    every CPU)."""
    n, d = X.shape
    out = np.empty((n, W.shape[1]))
    for i in range(n):
        acc = b.copy()
        for j in range(d):
            xj = X[i, j]
            for k in range(W.shape[1]):
                acc[k] += W[j, k] * xj
        out[i] = acc
    return out

