"""The many-class one-vs-rest SGD path (modelvar.models.ovr_sgd, issue 23): the same model as
scikit-learn's SGDClassifier (exactly where the rows' order is the same, in distribution where it
is not), its probabilities, its routing in the SGD classifiers, its determinism and its errors."""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from modelvar.data import load
from modelvar.data.preprocess import fit_transform
from modelvar.models.classifiers import MANY_CLASSES
from modelvar.models.ovr_sgd import OvRSGDClassifier
from modelvar.models.registry import make_classifier


def blobs(n_classes, n_per_class, n_features, seed, spread=1.5):
    """Gaussian classes around random centres (overlapping at this spread)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, n_features))
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = centres[y] + spread * rng.normal(size=(len(y), n_features))
    return X, y


def both(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return (SGDClassifier(learning_rate="adaptive", **kw),
                OvRSGDClassifier(**kw))


@pytest.mark.parametrize(("loss", "penalty", "average"), list(itertools.product(
    ["log_loss", "hinge", "modified_huber"], ["l2", None, "l1", "elasticnet"], [False, True])))
def test_same_model_as_sklearn_when_the_row_order_is_the_same(loss, penalty, average):
    """Without shuffling both see the rows in the given order: then every binary problem is
    scikit-learn's, step for step (the same epochs per problem, weights equal to rounding)."""
    X, y = blobs(5, 60, 8, seed=1)
    kw = dict(loss=loss, penalty=penalty, alpha=1e-3, l1_ratio=0.3, eta0=0.05, average=average,
              shuffle=False)
    ref, ours = both(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(X, y)
        ours.fit(X, y)
    assert ours.n_iter_ == ref.n_iter_
    scale = np.abs(ref.coef_).max()  # equal to rounding (our dot products sum in another order)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-9 * scale)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    if loss != "hinge":
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
@pytest.mark.parametrize("average", [False, True])
def test_same_model_where_a_row_goes_alone(loss, average):
    """The kernel takes rows in pairs (one pass over the weights for two rows); a row goes alone
    where an L2 scale falls below 1e-9 within the pair (scikit-learn folds it into the weights at
    that row) and as the last of an odd count. Here the scale shrinks by 0.9 per row, so it is
    folded every ~200 rows, and there are 301 rows: still scikit-learn's model, step for step."""
    X, y = blobs(7, 43, 8, seed=11)
    alpha, eta0 = 0.2, 0.5
    assert len(y) % 2 == 1 and (1 - alpha * eta0) ** len(y) < 1e-9  # folds within each epoch
    ref, ours = both(loss=loss, penalty="l2", alpha=alpha, eta0=eta0, average=average,
                     shuffle=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(X, y)
        ours.fit(X, y)
    assert ours.n_iter_ == ref.n_iter_
    # the lazy average folds a running sum that grows as the scale shrinks (scikit-learn's form
    # and ours): its rounding shows at ~5e-9 of the weights here, as it did row by row
    scale = np.abs(ref.coef_).max() * (1e-7 if average else 1e-9)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=scale)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=scale)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("loss", ["log_loss", "modified_huber"])
def test_probabilities_are_sklearns_normalisation(loss):
    """Given the same weights, the probabilities are SGDClassifier's, bit for bit up to the
    decision's summation order; rows sum to 1, also where modified Huber gives all classes 0."""
    X, y = blobs(4, 40, 6, seed=2)
    ours = OvRSGDClassifier(loss=loss, random_state=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = SGDClassifier(loss=loss, learning_rate="adaptive", max_iter=1).fit(X, y)
    ref.coef_, ref.intercept_ = ours.coef_.copy(), ours.intercept_.copy()
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    ours.intercept_ = ref.intercept_ = ours.intercept_ - 1e3  # every score far below −1
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X).sum(axis=1), 1.0)
    assert np.all(ours.predict_proba(X) == 0.25)  # all classes 0: uniform, as scikit-learn's


def test_hinge_has_no_probabilities():
    X, y = blobs(3, 20, 4, seed=0)
    with pytest.raises(AttributeError, match="no probabilities"):
        OvRSGDClassifier(loss="hinge").fit(X, y).predict_proba(X)


def _runs(make, X, y, Xte, yte, seeds):
    """Test accuracy per seed, and the disagreement of seed pairs (0,1), (2,3), … (independent)."""
    preds = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for seed in seeds:
            preds.append(make(seed).fit(X, y).predict(Xte))
    preds = np.array(preds)
    accuracy = (preds == yte).mean(axis=1)
    disagreement = (preds[0::2] != preds[1::2]).mean(axis=1)
    return accuracy, disagreement


#: 8 comparisons (2 data sets × 2 losses × accuracy and disagreement) at a family-wise 5 %
#: (Bonferroni): each interval at 1 − 0.05/8.
LEVEL = 1 - 0.05 / 8


def _welch_interval(a, b, level=LEVEL):
    """The Welch interval of mean(a) − mean(b)."""
    res = stats.ttest_ind(a, b, equal_var=False)
    ci = res.confidence_interval(level)
    return ci.low, ci.high


def _vehicle():
    ds = load("vehicle", {"source": "embedded"})
    y = ds.class_index()
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[: int(0.75 * len(y))], idx[int(0.75 * len(y)):]
    Xtr, Xte, _ = fit_transform(ds, ds.X.iloc[tr], ds.X.iloc[te])
    return Xtr, y[tr], Xte, y[te]


def _many_classes():
    """Shaped like aloi at a small scale: many classes, few rows each, dense numeric columns."""
    X, y = blobs(60, 30, 16, seed=7, spread=2.0)
    idx = np.random.default_rng(1).permutation(len(y))
    tr, te = idx[: int(0.75 * len(y))], idx[int(0.75 * len(y)):]
    return X[tr], y[tr], X[te], y[te]


SEEDS = tuple(range(40))


@pytest.mark.parametrize("data", ["many-classes", "vehicle"])
@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
def test_equivalent_in_distribution_over_seeds(data, loss):
    """With shuffling the two differ only in the rows' order (one order per epoch for all
    problems instead of one per problem): over 40 fixed seeds, the accuracy and the
    seed-to-seed disagreement of the two have means whose Welch interval of the difference holds 0
    (99.4 % each, a family-wise 5 % over the 8 comparisons). The same check tells a model with a
    10× larger eta0 apart (the check has power; shown once)."""
    Xtr, ytr, Xte, yte = _many_classes() if data == "many-classes" else _vehicle()
    kw = dict(loss=loss, alpha=1e-4, eta0=0.01)

    def sklearn(eta0):
        return lambda seed: SGDClassifier(learning_rate="adaptive", random_state=seed,
                                          **{**kw, "eta0": eta0})

    acc_ref, dis_ref = _runs(sklearn(0.01), Xtr, ytr, Xte, yte, SEEDS)
    acc_ours, dis_ours = _runs(lambda seed: OvRSGDClassifier(random_state=seed, **kw),
                               Xtr, ytr, Xte, yte, SEEDS)
    for ours, ref in ((acc_ours, acc_ref), (dis_ours, dis_ref)):
        low, high = _welch_interval(ours, ref)
        assert low <= 0 <= high, (low, high, ours.mean(), ref.mean())
    if (data, loss) != ("many-classes", "hinge"):
        return
    acc_other, dis_other = _runs(sklearn(0.1), Xtr, ytr, Xte, yte, SEEDS)
    separated = [not (lo <= 0 <= hi) for lo, hi in (_welch_interval(acc_ours, acc_other),
                                                    _welch_interval(dis_ours, dis_other))]
    assert any(separated)


def test_the_seed_decides_the_order_and_nothing_else_does():
    X, y = blobs(6, 30, 5, seed=4)
    a = OvRSGDClassifier(random_state=5).fit(X, y)
    b = OvRSGDClassifier(random_state=5).fit(X, y)
    c = OvRSGDClassifier(random_state=6).fit(X, y)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()
    assert not np.array_equal(a.coef_, c.coef_)


def test_problems_stop_on_their_own():
    """Each binary problem has its own learning rate and stopping rule: with shuffle off, each
    stops at the epoch scikit-learn's binary fit of that class stops."""
    X, y = blobs(5, 40, 6, seed=8)
    ours = OvRSGDClassifier(loss="hinge", eta0=0.05, shuffle=False).fit(X, y)
    per_class = []
    for k in range(5):
        ref = SGDClassifier(loss="hinge", learning_rate="adaptive", eta0=0.05, shuffle=False)
        per_class.append(ref.fit(X, np.where(y == k, 1, -1)).n_iter_)
    np.testing.assert_array_equal(ours.n_iter_per_class_, per_class)
    assert len(set(per_class)) > 1  # they do differ here


@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
def test_the_pad_columns_change_no_bit(loss, monkeypatch):
    """The weights get zero columns up to a multiple of COLUMN_BLOCK (the passes over them run
    in whole blocks); a fit without them, problems stopping at different epochs and the stopped
    columns still swept, has the same bits."""
    from modelvar.models import ovr_sgd_kernels as kernels

    X, y = blobs(13, 20, 9, seed=2)
    kw = dict(loss=loss, eta0=1e-5, max_iter=200, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        padded = OvRSGDClassifier(**kw).fit(X, y)
        monkeypatch.setattr(kernels, "COLUMN_BLOCK", 1)
        unpadded = OvRSGDClassifier(**kw).fit(X, y)
    assert 13 % 8 and len(set(padded.n_iter_per_class_)) > 1
    for a, b in ((padded.coef_t_, unpadded.coef_t_), (padded.intercept_, unpadded.intercept_),
                 (padded.n_iter_per_class_, unpadded.n_iter_per_class_)):
        assert a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_sgd_classifiers_use_it_from_many_classes_on():
    X, y = blobs(MANY_CLASSES, 10, 5, seed=9)
    many = make_classifier("lr-sgd", None, seed=1).fit(X, y, MANY_CLASSES + 2)
    assert isinstance(many.model, OvRSGDClassifier)
    proba = many.predict_proba(X)
    assert proba.shape == (len(X), MANY_CLASSES + 2)  # absent classes get columns of 0
    assert np.all(proba[:, MANY_CLASSES:] == 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    few = make_classifier("svm-sgd", None, seed=1).fit(X[y < 5], y[y < 5], 5)
    assert isinstance(few.model, SGDClassifier)
    hinge = make_classifier("svm-sgd", None, seed=1).fit(X, y, MANY_CLASSES)
    assert isinstance(hinge.model, OvRSGDClassifier)
    onehot = hinge.predict_proba(X)
    np.testing.assert_array_equal(onehot.argmax(axis=1), hinge.predict(X))
    assert set(np.unique(onehot)) == {0.0, 1.0}


@pytest.mark.parametrize(("kw", "message"), [
    ({"loss": "squared_error"}, "loss must be one of"),
    ({"penalty": "l3"}, "penalty must be one of"),
    ({"alpha": -1.0}, "alpha must be >= 0"),
    ({"l1_ratio": 1.5}, r"l1_ratio must be in \[0, 1\]"),
    ({"eta0": 0.0}, "eta0 must be > 0"),
    ({"max_iter": 0}, "max_iter must be >= 1"),
    ({"average": 10}, "average must be True or False"),  # not silently True
])
def test_bad_settings_are_named(kw, message):
    with pytest.raises(ValueError, match=message):
        OvRSGDClassifier(**kw)


def test_bad_data_is_named():
    X, y = blobs(3, 10, 3, seed=0)
    with pytest.raises(ValueError, match="at least 3 classes"):
        OvRSGDClassifier().fit(X[y < 2], y[y < 2])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        OvRSGDClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="one row per label"):
        OvRSGDClassifier().fit(X, y[:-1])


def test_its_own_exp_log_and_expit_match_libm_to_the_last_bits():
    """The kernel's exp, log and expit (plain arithmetic, the same bits on every CPU, where
    libm's and numpy's pick an implementation by the CPU) against libm: exp within 1 unit in
    the last place over [−708, 0] and exactly 1 at 0, 0 far below; log within 3 units over
    [1, 2**500] (the log loss's running product) and exactly 0 at 1; expit within 2.3e-16."""
    import math

    from scipy.special import expit

    from modelvar.models import ovr_sgd_kernels as kernels

    rng = np.random.default_rng(0)
    x = np.concatenate([-708 * rng.random(200_000), -1e-3 * rng.random(1000), [0.0, -708.0]])
    got = np.array([kernels.exp_nonpositive(v) for v in x])
    want = np.array([math.exp(v) for v in x])
    assert (np.abs(got - want) <= np.spacing(want)).all()
    assert got[-2] == 1.0
    assert [kernels.exp_nonpositive(v) for v in (-746.0, -1e4, -np.inf)] == [0.0] * 3
    y = np.concatenate([1 + rng.random(200_000) * 2.0 ** rng.integers(0, 500, 200_000), [1.0]])
    logs = np.empty_like(y)
    kernels.log_each(y, logs)
    want = np.array([math.log(v) for v in y])
    assert (np.abs(logs - want)[:-1] <= 3 * np.spacing(want[:-1])).all()
    assert logs[-1] == 0.0
    scores = rng.normal(0, 20, (500, 40))
    np.testing.assert_allclose(kernels.expit_each(scores), expit(scores), rtol=0, atol=2.3e-16)


WARM_UP_CHECK = """
import json, sys
import numpy as np
from modelvar.models.registry import make_classifier

rng = np.random.default_rng(0)
y = np.arange(600) % 30
X = rng.normal(size=(600, 7)) + y[:, None] / 10
out = []
for name, hparams in json.loads(sys.argv[1]):
    warmed = make_classifier(name, hparams, seed=3)
    warmed.warm_up(X, y, 30)
    from modelvar.models import ovr_sgd_kernels as kernels
    kernels_ = [f for f in vars(kernels).values() if hasattr(f, "signatures")]
    after_warm_up = {f.__name__: len(f.signatures) for f in kernels_}
    model = make_classifier(name, hparams, seed=3).fit(X, y, 30)
    model.predict_proba(X)
    after_fit = {f.__name__: len(f.signatures) for f in kernels_}
    out.append([after_warm_up, after_fit, type(model.model).__name__])
print(json.dumps(out))
"""


def test_warm_up_loads_every_kernel_the_fit_then_needs():
    """The fit job times fit + predict after ``warm_up`` (modelvar.pipeline.fitting): in a fresh
    process, warming up leaves nothing for the first many-class fit to compile or load, for
    each loss and for hyperparameters of other types (averaging, an L1 part)."""
    import json
    import subprocess
    import sys

    variants = [("lr-sgd", None), ("svm-sgd", {"loss": "hinge", "average": True}),
                ("svm-sgd", {"loss": "modified_huber", "penalty": "elasticnet",
                             "l1_ratio": 0.3, "alpha": 0.1, "eta0": 1})]  # an int
    done = subprocess.run([sys.executable, "-c", WARM_UP_CHECK, json.dumps(variants)],
                          capture_output=True, text=True, check=True, timeout=300)
    for after_warm_up, after_fit, model in json.loads(done.stdout):
        assert model == "OvRSGDClassifier"
        assert sum(after_warm_up.values()) > 0
        assert after_fit == after_warm_up


def test_warm_up_changes_no_prediction():
    X, y = blobs(MANY_CLASSES + 5, 12, 6, seed=4)
    cold = make_classifier("lr-sgd", None, seed=8).fit(X, y, MANY_CLASSES + 5)
    warm = make_classifier("lr-sgd", None, seed=8)
    warm.warm_up(X, y, MANY_CLASSES + 5)
    warm.fit(X, y, MANY_CLASSES + 5)
    np.testing.assert_array_equal(cold.predict_proba(X), warm.predict_proba(X))
