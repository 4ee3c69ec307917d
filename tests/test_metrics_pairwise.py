"""Pairwise metrics against independent oracles, pinned undefined cases, and invariants."""

import itertools

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats.contingency import association, crosstab
from sklearn.metrics import cohen_kappa_score, jaccard_score, matthews_corrcoef

from modelvar.metrics import (
    ALL_METRICS,
    MetricInputError,
    disagreement_mask,
    encode_labels,
    pairwise_metrics,
)


def oracle(y, a, b):
    """Per-pair values computed with sklearn / scipy / krippendorff (one pair at a time)."""
    ei, ej = (a != y).astype(int), (b != y).astype(int)
    n = len(y)
    acc_i, acc_j = 1 - ei.mean(), 1 - ej.mean()
    union = np.logical_or(ei, ej).sum()
    ec_local = jaccard_score(ei, ej) if union else np.nan
    ec_global = np.logical_and(ei, ej).sum() / n
    table = crosstab(a, b).count
    cv = association(table, method="cramer") if min(table.shape) > 1 else np.nan
    out = {
        "ec_local": ec_local,
        "ec_global": ec_global,
        "ec_agree": np.mean(ei == ej),
        "ec_corr": matthews_corrcoef(ei, ej) if ei.std() and ej.std() else np.nan,
        "ec_kappa": cohen_kappa_score(ei, ej),
        "ec_local_accnorm_sqrt": np.sqrt(np.sqrt(acc_i * acc_j) * ec_local),
        "ec_local_accnorm_cbrt": np.cbrt(acc_i * acc_j * ec_local),
        "ec_global_accnorm_sqrt": np.sqrt(np.sqrt(acc_i * acc_j) * ec_global),
        "ec_global_accnorm_cbrt": np.cbrt(acc_i * acc_j * ec_global),
        "pa": np.mean(a == b),
        "churn": np.mean(a != b),
        "kappa": cohen_kappa_score(a, b),
        "cramer_v": cv,
    }
    if len(np.unique(np.concatenate([a, b]))) > 1:
        out["kripp_alpha"] = krippendorff.alpha(
            np.vstack([a, b]).astype(float), level_of_measurement="nominal"
        )
    else:
        out["kripp_alpha"] = np.nan
    return out


def check_against_oracle(y, P):
    table = pairwise_metrics(y, P)
    assert len(table) == len(P) * (len(P) - 1) // 2
    for row in table.itertuples():
        want = oracle(y, P[row.run_i], P[row.run_j])
        for metric, value in want.items():
            np.testing.assert_allclose(getattr(row, metric), value, rtol=1e-10, atol=1e-12,
                                       err_msg=metric)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("n", "k", "c", "acc"), [(200, 4, 2, 0.8), (500, 6, 5, 0.6),
                                                  (50, 3, 10, 0.3)])
def test_random_inputs_match_oracles(seed, n, k, c, acc):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    P = np.where(rng.random((k, n)) < acc, y, rng.integers(0, c, (k, n)))
    check_against_oracle(y, P)


def test_adversarial_inputs_match_oracles():
    y = np.array([0, 1, 2, 0, 1, 2, 0, 0])
    P = np.array([
        [0, 1, 2, 0, 1, 2, 0, 0],  # perfect
        [0, 1, 2, 0, 1, 2, 0, 1],  # one error
        [1, 1, 1, 1, 1, 1, 1, 1],  # constant prediction
        [2, 0, 1, 2, 0, 1, 2, 2],  # always wrong
        [0, 0, 0, 0, 0, 0, 0, 0],  # constant, some right
    ])
    check_against_oracle(y, P)


@pytest.mark.parametrize("seed", range(3))
def test_gwet_ac1_matches_irrcac(seed):
    import irrCAC.raw as irr  # test-only oracle, installed by scripts/setup-venv.sh
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 150)
    P = np.where(rng.random((4, 150)) < 0.6, y, rng.integers(0, 4, (4, 150)))
    table = pairwise_metrics(y, P)
    for row in table.itertuples():
        ratings = pd.DataFrame({"a": P[row.run_i], "b": P[row.run_j]})
        want = irr.CAC(ratings, digits=15).gwet()["est"]["coefficient_value"]
        assert row.gwet_ac1 == pytest.approx(want, abs=1e-12)


def test_gwet_ac1_by_definition():
    # Gwet (2008), two raters, categories observed in the pair
    a = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0])
    b = np.array([0, 1, 1, 1, 2, 0, 0, 1, 2, 2])
    y = np.zeros(10, dtype=int)
    pa = np.mean(a == b)
    pi = np.array([(np.sum(a == q) + np.sum(b == q)) / 20 for q in (0, 1, 2)])
    pe = np.sum(pi * (1 - pi)) / 2
    value = pairwise_metrics(y, np.vstack([a, b]))["gwet_ac1"].iloc[0]
    assert value == pytest.approx((pa - pe) / (1 - pe), rel=1e-12)


# ---------------------------------------------------------------- undefined cases (pinned)
def test_ec_local_undefined_when_neither_run_errs():
    y = np.array([0, 1, 0, 1])
    P = np.vstack([y, y, 1 - y])
    t = pairwise_metrics(y, P)
    assert np.isnan(t["ec_local"].iloc[0])  # pair (0, 1): union empty
    assert np.isnan(t["ec_local_accnorm_sqrt"].iloc[0])
    assert t["ec_local"].iloc[1] == 0.0  # pair (0, 2): union = 4, intersection 0
    assert pairwise_metrics(y, P, ec_local_undefined="zero")["ec_local"].iloc[0] == 0.0
    assert pairwise_metrics(y, P, ec_local_undefined="one")["ec_local"].iloc[0] == 1.0


def test_constant_error_vector_gives_nan_corr_and_kappa():
    y = np.array([0, 1, 0, 1])
    P = np.vstack([y, y])  # both error vectors all-zero
    t = pairwise_metrics(y, P)
    assert np.isnan(t["ec_corr"].iloc[0]) and np.isnan(t["ec_kappa"].iloc[0])


def test_label_metrics_identical_and_constant_predictions():
    y = np.array([0, 1, 2, 0, 1])
    varied = pairwise_metrics(y, np.vstack([y, y]))
    for metric in ("pa", "kappa", "cramer_v", "kripp_alpha", "gwet_ac1"):
        assert varied[metric].iloc[0] == pytest.approx(1.0), metric
    const = pairwise_metrics(y, np.zeros((2, 5), dtype=int))
    assert const["pa"].iloc[0] == 1.0
    for metric in ("kappa", "cramer_v", "kripp_alpha", "gwet_ac1"):
        assert np.isnan(const[metric].iloc[0]), metric  # expected agreement 1 / 1×1 table


def test_cramer_v_drops_empty_rows_and_1xm_is_nan():
    y = np.zeros(6, dtype=int)
    a = np.array([0, 0, 0, 0, 0, 0])
    b = np.array([0, 1, 2, 0, 1, 2])
    assert np.isnan(pairwise_metrics(y, np.vstack([a, b]), n_classes=5)["cramer_v"].iloc[0])


def test_disagreement_subset_and_its_size():
    y = np.array([0, 0, 1, 1, 2, 2])
    P = np.array([[0, 0, 1, 1, 2, 0], [0, 0, 1, 2, 2, 0], [0, 0, 1, 1, 2, 1]])
    mask = disagreement_mask(P)
    np.testing.assert_array_equal(mask, [False, False, False, True, False, True])
    t = pairwise_metrics(y, P, subset="disagree")
    assert (t["n"] == 2).all() and (t["subset"] == "disagree").all()
    full = pairwise_metrics(y[mask], P[:, mask])
    np.testing.assert_allclose(t[list(ALL_METRICS)].to_numpy(dtype=float),
                               full[list(ALL_METRICS)].to_numpy(dtype=float), equal_nan=True)
    empty = pairwise_metrics(y, np.vstack([y, y]), subset="disagree")
    assert (empty["n"] == 0).all() and empty[list(ALL_METRICS)].isna().all().all()


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((np.zeros(3, int), np.zeros((1, 3), int)), {}, "at least 2 runs"),
        ((np.zeros(4, int), np.zeros((2, 3), int)), {}, "y_true has shape"),
        ((np.zeros(3), np.zeros((2, 3))), {}, "integer class indices"),
        ((np.zeros(3, int), -np.ones((2, 3), int)), {}, "negative"),
        ((np.zeros(3, int), np.full((2, 3), 4)), {"n_classes": 3}, "n_classes is 3"),
        ((np.zeros(3, int), np.zeros((2, 3), int)), {"metrics": ["nope"]}, "unknown metric"),
        ((np.zeros(3, int), np.zeros((2, 3), int)), {"subset": "x"}, "subset must be"),
        ((np.zeros(3, int), np.zeros((2, 3), int)), {"ec_local_undefined": "2"},
         "ec_local_undefined"),
    ],
)
def test_bad_input_errors(args, kwargs, message):
    with pytest.raises(MetricInputError, match=message):
        pairwise_metrics(*args, **kwargs)


def test_encode_labels():
    y, P, classes = encode_labels(["a", "b", "a"], [["a", "a", "c"], ["b", "b", "a"]])
    assert classes == ["a", "b", "c"]
    np.testing.assert_array_equal(y, [0, 1, 0])
    np.testing.assert_array_equal(P, [[0, 0, 2], [1, 1, 0]])
    with pytest.raises(MetricInputError, match="missing"):
        encode_labels(["a", None], [["a", "a"], ["a", "a"]])


# ---------------------------------------------------------------- properties
runs_strategy = st.integers(2, 4).flatmap(
    lambda c: st.tuples(
        st.just(c),
        st.integers(2, 5).flatmap(
            lambda k: st.integers(1, 30).flatmap(
                lambda n: st.tuples(
                    st.lists(st.integers(0, c - 1), min_size=n, max_size=n),
                    st.lists(st.lists(st.integers(0, c - 1), min_size=n, max_size=n),
                             min_size=k, max_size=k),
                )
            )
        ),
    )
)

BOUNDED_01 = ("ec_local", "ec_global", "ec_agree", "pa", "churn", "cramer_v",
              "ec_local_accnorm_sqrt", "ec_local_accnorm_cbrt", "ec_global_accnorm_sqrt",
              "ec_global_accnorm_cbrt")
SIGNED = ("ec_corr", "ec_kappa", "kappa", "kripp_alpha", "gwet_ac1")


@settings(max_examples=150, deadline=None)
@given(runs_strategy)
def test_properties(data):
    c, (y, P) = data
    y, P = np.array(y), np.array(P)
    t = pairwise_metrics(y, P, n_classes=c)
    values = t[list(ALL_METRICS)].to_numpy(dtype=float)
    # bounds
    for m in BOUNDED_01:
        v = t[m].dropna()
        assert ((v >= -1e-12) & (v <= 1 + 1e-12)).all(), m
    for m in SIGNED:
        v = t[m].dropna()
        assert (v <= 1 + 1e-12).all(), m
        assert (v >= -1 - 1e-12).all() or m == "kripp_alpha", m
    # symmetry: swapping run order gives the same pair values
    swapped = pairwise_metrics(y, P[::-1], n_classes=c)
    k = len(P)
    order = {(i, j): r for r, (i, j) in enumerate(itertools.combinations(range(k), 2))}
    remap = [order[(k - 1 - j, k - 1 - i)] for i, j in itertools.combinations(range(k), 2)]
    np.testing.assert_allclose(swapped[list(ALL_METRICS)].to_numpy(float)[remap], values,
                               atol=1e-12, equal_nan=True)
    # label permutation invariance
    perm = np.random.default_rng(0).permutation(c)
    permuted = pairwise_metrics(perm[y], perm[P], n_classes=c)
    np.testing.assert_allclose(permuted[list(ALL_METRICS)].to_numpy(float), values,
                               atol=1e-12, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(runs_strategy)
def test_identical_runs_agree_maximally(data):
    c, (y, P) = data
    y = np.array(y)
    row = np.array(P[0])
    t = pairwise_metrics(y, np.vstack([row, row, row]), n_classes=c)
    assert (t["pa"] == 1).all() and (t["ec_agree"] == 1).all()
    for m in ("kappa", "kripp_alpha", "gwet_ac1", "cramer_v", "ec_local", "ec_kappa", "ec_corr"):
        assert t[m].isna().all() or np.allclose(t[m], 1.0), m


# ---------------------------------------------------------------- what a request computes
def test_chunked_counts_equal_one_pass(monkeypatch):
    """The counts read the labels in chunks (issue 57): chunks of 1, 7 and 64 samples give the
    values of one pass, on the full set and the disagreement set, n not a multiple of 64."""
    from modelvar.metrics import pairwise

    rng = np.random.default_rng(5)
    y = rng.integers(0, 4, 203)
    P = np.where(rng.random((5, 203)) < 0.6, y, rng.integers(0, 4, (5, 203)))
    whole = {s: pairwise_metrics(y, P, subset=s) for s in ("all", "disagree")}
    for chunk in (1, 7, 64):
        monkeypatch.setattr(pairwise, "CHUNK", chunk)
        for subset, want in whole.items():
            got = pairwise_metrics(y, P, subset=subset)
            np.testing.assert_array_equal(got[list(ALL_METRICS) + ["acc_i", "acc_j"]]
                                          .to_numpy(float),
                                          want[list(ALL_METRICS) + ["acc_i", "acc_j"]]
                                          .to_numpy(float))


def test_a_request_computes_only_what_its_metrics_need(monkeypatch):
    """Only Cramér's V needs the C × C tables: a request without it never builds them, and one
    of error metrics never counts margins or agreements."""
    from modelvar.metrics import pairwise

    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 100)
    P = np.where(rng.random((4, 100)) < 0.7, y, rng.integers(0, 3, (4, 100)))
    want = pairwise_metrics(y, P)
    built = []
    real_tables, real_counts = pairwise.pair_tables, pairwise._run_counts
    monkeypatch.setattr(pairwise, "pair_tables", lambda *a: built.append(a) or real_tables(*a))
    needs_seen = []
    monkeypatch.setattr(pairwise, "_run_counts",
                        lambda y, L, C, needs: needs_seen.append(set(needs))
                        or real_counts(y, L, C, needs))
    labels = [m for m in ALL_METRICS if m != "cramer_v"]
    got = pairwise_metrics(y, P, metrics=labels)
    np.testing.assert_array_equal(got[labels].to_numpy(float), want[labels].to_numpy(float))
    assert built == [] and needs_seen[-1] == {"errors", "agreement", "margins"}
    pairwise_metrics(y, P, metrics=["ec_kappa", "ec_local"])
    assert built == [] and needs_seen[-1] == {"errors"}
    pairwise_metrics(y, P, metrics=["pa"])
    assert needs_seen[-1] == {"agreement"}
    got = pairwise_metrics(y, P, metrics=["cramer_v"])
    assert len(built) == len(P) - 1
    np.testing.assert_array_equal(got["cramer_v"], want["cramer_v"])


@pytest.mark.parametrize("c", [130, 200])
def test_many_classes_use_wider_label_and_code_types(c):
    """130 classes need int16 labels, 200 classes int32 pair codes (C² > 32767); both match
    the oracles, and the margins come from a bincount beyond 16 classes."""
    rng = np.random.default_rng(c)
    y = rng.integers(0, c, 400)
    P = np.where(rng.random((3, 400)) < 0.5, y, rng.integers(0, c, (3, 400)))
    check_against_oracle(y, P)


def test_narrow_input_types_and_their_negative_values():
    y = np.array([0, 1, 2, 1], dtype=np.int8)
    P = np.array([[0, 1, 2, 2], [0, 2, 2, 1]], dtype=np.uint8)
    np.testing.assert_allclose(pairwise_metrics(y, P)["pa"], [0.5])
    with pytest.raises(MetricInputError, match="preds holds negative"):
        pairwise_metrics(y, P.astype(np.int16) - 300)
    with pytest.raises(MetricInputError, match="y_true holds negative"):
        pairwise_metrics(y - 1, P)


def test_peak_memory_stays_within_a_fifth_of_the_input():
    """Issue 57: the counts work on narrowed labels in chunks, so a call's peak traced memory
    stays ≤ 1.2× its int64 input (it was 2.2×)."""
    import tracemalloc

    rng = np.random.default_rng(2)
    y = rng.integers(0, 10, 300_000)
    P = np.where(rng.random((8, 300_000)) < 0.7, y, rng.integers(0, 10, (8, 300_000)))
    tracemalloc.start()
    pairwise_metrics(y, P, n_classes=10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 1.2 * P.nbytes, peak / P.nbytes


def test_cramer_v_at_independence_is_zero_in_any_label_order():
    """Found by test_properties in a CI run: two runs whose table is exactly independent (its
    χ² is 0). n (Σ T²/(r c) − 1) left a rounding error that the square root made 1e-8 in one
    label order and 0 in another; Σ (T − E)²/E keeps it below 1e-12 in every order."""
    y = np.zeros(30, dtype=int)
    P = np.array([[0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                   2, 1, 1, 2],
                  [0, 0, 2, 0, 2, 2, 2, 2, 2, 0, 0, 1, 1, 2, 1, 1, 2, 2, 2, 2, 0, 0, 0, 1, 2, 2,
                   0, 2, 2, 0]])
    for perm in itertools.permutations(range(3)):
        perm = np.array(perm)
        v = pairwise_metrics(perm[y], perm[P], n_classes=3)["cramer_v"].iloc[0]
        assert abs(v - association(crosstab(P[0], P[1]).count, method="cramer")) < 1e-12
