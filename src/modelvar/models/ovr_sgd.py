"""One-vs-rest SGD for many classes in one pass over the rows per epoch.

scikit-learn's ``SGDClassifier`` fits a C-class problem as C binary problems, one after the other:
every epoch of every binary problem streams the whole training matrix, so a 1,000-class fit reads
it 1,000 times per epoch (issue 23: aloi and dionis were 98 % of the full study's CPU). This module
fits the same C binary models *together*: each training row is read once per epoch and advances
every binary problem that has not stopped. The weights are one ``(n_features, C)`` matrix, so the
per-row work over classes is contiguous and vectorises; every class's sums still run over the
features in order, so the bits do not depend on the vector width of the CPU. Rows go in pairs:
one pass over the weights applies two rows' updates and sums the next two rows' decisions (the
second row of a pair adds the first row's step times the two rows' product to its sums), and the
log loss needs one ``exp`` per row and class (its ``log`` terms are summed as the log of a
product); exp, log and the probabilities' expit are the kernels' own, not libm's, which differs
by CPU. ``make bench-sgd`` measures the time per fit against scikit-learn's
(docs/measurements/design-choices.md, ``docs/decisions.md``).

The model is ``SGDClassifier(loss, penalty, alpha, l1_ratio, learning_rate="adaptive", eta0,
average, tol=1e-3, n_iter_no_change=5, max_iter=1000, fit_intercept=True, shuffle=True)`` as
scikit-learn 1.9's ``_plain_sgd`` computes it, per binary problem ``k`` (class ``k`` against the
rest, target ``y_k = +1 / -1``; the log loss uses ``{1, 0}``):

* decision ``p = s_k · (v_k · x) + b_k`` with the weights kept as ``w_k = s_k · v_k`` (the scale
  ``s_k`` makes the L2 decay O(1); it is folded into ``v_k`` when it falls below 1e-9);
* objective per row: ``loss(y_k, p) + alpha · ((1 − l1_ratio) · ½‖w_k‖² + l1_ratio · ‖w_k‖₁)``
  (the norms as of the last weight update, as scikit-learn tracks them);
* step: ``u = −eta_k · clip(∂loss/∂p, ±1e12)``; ``s_k ← s_k · max(0, 1 − (1 − l1_ratio) · eta_k ·
  alpha)``; ``w_k ← w_k + u · x``; ``b_k ← b_k + u``; with ``average``, the running means of
  ``w_k`` and ``b_k`` over all steps (scikit-learn's lazy form: ``average_a``, ``average_b``); with
  an L1 part, the cumulative L1 penalty of Tsuruoka et al. (ACL 2009) with ``q_k``;
* losses: log loss ``log(1 + exp(p)) − y p`` (gradient ``expit(p) − y``), hinge
  ``max(0, 1 − y p)``, modified Huber ``(1 − y p)²`` for ``y p ≥ −1`` else ``−4 y p``
  (scikit-learn's formulas, including its cut-offs);
* adaptive learning rate and stopping, per binary problem: after each epoch, if the mean
  objective did not fall below ``best − tol``, a miss is counted; after ``n_iter_no_change``
  misses ``eta_k`` is divided by 5 (misses reset), or, when ``eta_k ≤ 1e-6``, problem ``k``
  stops. A stopped problem costs nothing in later epochs (its column leaves the active block).

**The one difference** (``docs/decisions.md``, "Many-class SGD"): scikit-learn draws one seed per
binary problem, so each problem sees the rows in its own order; here all problems share one order
per epoch, a permutation from the model seed's :class:`numpy.random.Generator`. The models are
therefore equal in distribution, not bit for bit; ``tests/test_ovr_sgd.py`` checks the
equivalence statistically over 40 fixed seeds, and checks the weights against scikit-learn's to
rounding when neither shuffles (the same order for every problem in both). The pairs of rows
change only the rounding of the second row's decision sums.

Probabilities are scikit-learn's one-vs-rest normalisations (``predict_proba`` of
``SGDClassifier``): log loss ``expit(p_k) / Σ expit``; modified Huber ``(clip(p_k, −1, 1) + 1) /
2`` normalised; uniform where all are 0. The hinge loss has none (the caller's one-hot).
"""

from __future__ import annotations

import warnings

import numpy as np

LOSSES = ("log_loss", "hinge", "modified_huber")
PENALTIES = ("none", "l2", "l1", "elasticnet")
#: scikit-learn's fixed settings of our SGD configuration.
TOL = 1e-3
N_ITER_NO_CHANGE = 5
MAX_ITER = 1000
MIN_ETA = 1e-6


class OvRSGDClassifier:
    """One-vs-rest SGD over all classes in one pass per epoch (module docstring).

    ``fit(X, y)`` learns one binary problem per class present in ``y`` (``classes_``, sorted);
    ``decision_function``, ``predict`` and ``predict_proba`` follow ``SGDClassifier``.
    ``n_iter_`` is the largest number of epochs over the problems, ``n_iter_per_class_`` each
    one's. Needs at least 3 classes (scikit-learn fits a 2-class problem as one binary model).
    """

    def __init__(self, *, loss: str = "log_loss", penalty: str | None = "l2",
                 alpha: float = 1e-4, l1_ratio: float = 0.15, eta0: float = 0.01,
                 average: bool = False, max_iter: int = MAX_ITER, shuffle: bool = True,
                 random_state: int = 0):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        penalty = "none" if penalty is None else penalty
        if penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES} or None, got {penalty!r}")
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha!r}")
        if not 0.0 <= l1_ratio <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio!r}")
        if not eta0 > 0:
            raise ValueError(f"eta0 must be > 0 for the adaptive learning rate, got {eta0!r}")
        if not isinstance(average, bool | np.bool_):
            raise ValueError(f"average must be True or False (scikit-learn's integer form, "
                             f"averaging from step N, is not implemented), got {average!r}")
        self.loss, self.penalty, self.alpha = loss, penalty, float(alpha)
        self.l1_ratio, self.eta0, self.average = float(l1_ratio), float(eta0), bool(average)
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
        self.max_iter = int(max_iter)
        self.shuffle, self.random_state = bool(shuffle), int(random_state)

    def _penalty_parts(self) -> tuple[float, float]:
        """(L2 share, L1 share) as scikit-learn sets them per penalty."""
        return {"none": (0.0, 0.0), "l2": (1.0, 0.0), "l1": (0.0, 1.0),
                "elasticnet": (1.0 - self.l1_ratio, self.l1_ratio)}[self.penalty]

    def fit(self, X, y):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y)
        if X.ndim != 2 or len(X) != len(y):
            raise ValueError(f"X must be 2-d with one row per label; got X {X.shape}, "
                             f"y {y.shape}")
        if not np.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values")
        self.classes_, label = np.unique(y, return_inverse=True)
        n_classes = len(self.classes_)
        if n_classes < 3:
            raise ValueError(f"OvRSGDClassifier needs at least 3 classes, got {n_classes}")
        from modelvar.models import ovr_sgd_kernels as kernels

        n, d = X.shape
        l2_part, l1_part = self._penalty_parts()
        loss_kind = LOSSES.index(self.loss)
        # columns: the problems, then zero columns up to a multiple of kernels.COLUMN_BLOCK (the
        # passes over the weights run to the block; a pad column is never a problem)
        n_cols = -(-n_classes // kernels.COLUMN_BLOCK) * kernels.COLUMN_BLOCK
        v = np.zeros((d, n_cols))
        aw = np.zeros((d, n_cols))
        q = np.zeros((d, n_cols)) if l1_part > 0 else np.zeros((1, 1))
        b, avg_b0 = np.zeros(n_cols), np.zeros(n_cols)
        s, avg_a, avg_b = np.ones(n_cols), np.zeros(n_cols), np.ones(n_cols)
        vv, v1, u = np.zeros(n_cols), np.zeros(n_cols), np.zeros(n_cols)
        eta = np.full(n_cols, self.eta0)
        best = np.full(n_cols, np.inf)
        misses = np.zeros(n_cols, dtype=np.int64)
        epochs = np.zeros(n_cols, dtype=np.int64)
        # column -> class (a pad column: a "class" from n_classes on, always behind the others)
        # and row -> column of its class; the active problems are columns [0, n_active)
        class_of_col, col_of_row = np.arange(n_cols), label
        n_active, t = n_classes, 1.0
        per_class = [v, aw, q] if l1_part > 0 else [v, aw]
        vectors = [b, avg_b0, s, avg_a, avg_b, vv, v1, u, eta, best, misses, epochs]
        xx = kernels.squared_norms(X)
        rng = np.random.default_rng(self.random_state)
        for epoch in range(self.max_iter):
            objective, log_product = np.zeros(n_active), np.ones(n_active)
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            t_next = kernels.epoch(
                X, xx, col_of_row, order, n_active, loss_kind, l2_part, l1_part,
                self.alpha, self.average, t, v, b, s, vv, v1, eta, objective, log_product, aw,
                avg_a, avg_b, avg_b0, q, u)
            active = slice(0, n_active)
            if not (np.isfinite(b[active]).all() and np.isfinite(v[:, active]).all()):
                raise ValueError(f"Floating-point under-/overflow occurred at epoch #{epoch + 1}."
                                 " Scaling input data with StandardScaler or MinMaxScaler might "
                                 "help.")
            t = t_next
            epochs[active] = epoch + 1
            logs = np.empty(n_active)
            kernels.log_each(log_product, logs)
            mean = (objective + logs) / n
            missed = mean > best[active] - TOL
            misses[active] = np.where(missed, misses[active] + 1, 0)
            best[active] = np.minimum(best[active], mean)
            patience_out = misses[active] >= N_ITER_NO_CHANGE
            slower = patience_out & (eta[active] > MIN_ETA)
            eta[active] = np.where(slower, eta[active] / 5, eta[active])
            misses[active] = np.where(slower, 0, misses[active])
            stops = patience_out & ~slower
            if stops.any():  # move the stopped columns behind the active block
                keep = np.flatnonzero(~stops)
                perm = np.concatenate([keep, np.flatnonzero(stops), np.arange(n_active,
                                                                             n_cols)])
                for m in per_class:
                    m[:] = m[:, perm]
                for a in vectors:
                    a[:] = a[perm]
                class_of_col = class_of_col[perm]
                col_of_row = np.argsort(class_of_col)[label]
                n_active = len(keep)
            if n_active == 0:
                break
        else:
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn("Maximum number of iteration reached before convergence. Consider "
                          "increasing max_iter to improve the fit.", ConvergenceWarning,
                          stacklevel=2)
        for k in range(n_classes):
            kernels.flush_scale(k, v, aw, s, avg_a, avg_b, self.average)
        order = np.argsort(class_of_col)[:n_classes]  # columns back in class order, no pads
        if self.average:
            self.coef_t_, self.intercept_ = aw[:, order].copy(), avg_b0[order].copy()
        else:
            self.coef_t_, self.intercept_ = v[:, order].copy(), b[order].copy()
        self.n_iter_per_class_ = epochs[order].copy()
        self.n_iter_ = int(self.n_iter_per_class_.max())
        return self

    @property
    def coef_(self) -> np.ndarray:
        """(n_classes, n_features), as scikit-learn's."""
        return self.coef_t_.T

    def decision_function(self, X) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=np.float64)
        from modelvar.models import ovr_sgd_kernels as kernels

        return kernels.decision(X, self.coef_t_, self.intercept_)

    def predict(self, X) -> np.ndarray:
        return self.classes_[self.decision_function(X).argmax(axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        scores = self.decision_function(X)
        if self.loss == "log_loss":
            from modelvar.models import ovr_sgd_kernels as kernels

            prob = kernels.expit_each(scores)
        elif self.loss == "modified_huber":
            prob = (np.clip(scores, -1, 1) + 1.0) / 2.0
        else:
            raise AttributeError("the hinge loss has no probabilities (scikit-learn's neither)")
        total = prob.sum(axis=1)
        flat = total == 0  # every class 0: uniform, as scikit-learn does
        prob[flat] = 1.0
        total[flat] = prob.shape[1]
        return prob / total[:, None]
