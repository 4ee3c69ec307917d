"""Grouped metrics (seed 003) against fairlearn's MetricFrame and hand computations."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as skm
from fairlearn import metrics as flm
from fairlearn.metrics import MetricFrame
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from modelvar.metrics import grouped
from modelvar.metrics.grouped import GroupedMetric, GroupedMetricError
from modelvar.metrics.inference import jackknife_ci
from modelvar.metrics.pairwise import MetricInputError, pairwise_metrics


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    n = 300
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, 1 - y_true)
    sf = pd.DataFrame({
        "SF 1": rng.choice(["B", "C"], n),
        "SF 2": rng.choice(["M", "N", "P"], n),
    })
    weights = rng.integers(1, 4, n)
    income = pd.Series(rng.choice(["High", "Low"], n), name="income_level")
    return y_true, y_pred, sf, weights, income


def test_single_metric_matches_proposal_and_fairlearn(data):
    y_true, y_pred, sf, _, _ = data
    gm = GroupedMetric(skm.accuracy_score, y_true, y_pred, sensitive_features=sf["SF 1"])
    assert list(gm.overall.columns) == ["accuracy_score"]
    assert list(gm.overall.index) == ["overall"]
    assert gm.overall.loc["overall", "accuracy_score"] == pytest.approx(
        skm.accuracy_score(y_true, y_pred))
    assert list(gm.by_group.index) == ["B", "C"]
    for g in ("B", "C"):
        mask = sf["SF 1"].to_numpy() == g
        assert gm.by_group.loc[g, "accuracy_score"] == pytest.approx(
            skm.accuracy_score(y_true[mask], y_pred[mask]))
    mf = MetricFrame(metrics=skm.accuracy_score, y_true=y_true, y_pred=y_pred,
                     sensitive_features=sf["SF 1"])
    b, c = gm.by_group["accuracy_score"]
    overall = gm.overall.iloc[0, 0]
    diff = gm.difference()
    assert isinstance(diff, pd.Series)
    assert diff["accuracy_score"] == pytest.approx(abs(b - c)) == pytest.approx(mf.difference())
    assert gm.difference(method="to_overall")["accuracy_score"] == pytest.approx(
        max(abs(b - overall), abs(c - overall)))
    assert gm.ratio()["accuracy_score"] == pytest.approx(min(b, c) / max(b, c))
    assert gm.ratio(method="to_overall")["accuracy_score"] == pytest.approx(
        mf.ratio(method="to_overall"))
    assert gm.group_min()["accuracy_score"] == min(b, c)
    assert gm.group_max()["accuracy_score"] == max(b, c)


def test_sample_params_and_params(data):
    y_true, y_pred, sf, weights, _ = data
    gm = GroupedMetric(skm.accuracy_score, y_true, y_pred, sensitive_features=sf["SF 1"],
                       sample_params={"sample_weight": weights}, params={"normalize": False})
    for g in ("B", "C"):
        mask = sf["SF 1"].to_numpy() == g
        expected = float(np.sum(weights[mask] * (y_true[mask] == y_pred[mask])))
        assert gm.by_group.loc[g, "accuracy_score"] == pytest.approx(expected)
    assert gm.overall.iloc[0, 0] == pytest.approx(float(np.sum(weights * (y_true == y_pred))))


def test_several_metrics_with_lists_of_params(data):
    y_true, y_pred, sf, weights, _ = data
    gm = GroupedMetric(
        [skm.accuracy_score, skm.precision_score], y_true, y_pred, sensitive_features=sf["SF 1"],
        sample_params=[{"sample_weight": weights}, {"sample_weight": weights}],
        params=[{"normalize": True}, {"pos_label": 0}],
    )
    mf = MetricFrame(
        metrics={"accuracy_score": skm.accuracy_score,
                 "precision_score": functools.partial(skm.precision_score, pos_label=0)},
        y_true=y_true, y_pred=y_pred, sensitive_features=sf["SF 1"],
        sample_params={"accuracy_score": {"sample_weight": weights},
                       "precision_score": {"sample_weight": weights}},
    )
    pd.testing.assert_frame_equal(gm.by_group, mf.by_group)
    pd.testing.assert_series_equal(gm.difference(), mf.difference())
    pd.testing.assert_series_equal(gm.ratio(), mf.ratio())
    assert list(gm.overall.columns) == ["accuracy_score", "precision_score"]


def test_intersections_with_empty_cells_are_nan_and_skipped():
    y_true = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    y_pred = np.array([0, 1, 1, 1, 0, 0, 1, 1])
    sf = pd.DataFrame({"SF 1": list("BBBBCCCC"), "SF 2": list("MNMNMMMM")})
    gm = GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=sf)
    assert gm.by_group.index.names == ["SF 1", "SF 2"]
    assert len(gm.by_group) == 4
    assert np.isnan(gm.by_group.loc[("C", "N"), "accuracy_score"])
    assert gm.by_group.loc[("B", "N"), "accuracy_score"] == 1.0
    assert gm.difference()["accuracy_score"] == pytest.approx(0.5)  # NaN row skipped
    assert gm.group_min()["accuracy_score"] == pytest.approx(0.5)


def test_intersections_match_fairlearn_and_accept_list_of_series(data):
    y_true, y_pred, sf, _, _ = data
    gm = GroupedMetric("accuracy_score", y_true, y_pred,
                       sensitive_features=[sf["SF 1"], sf["SF 2"]])
    mf = MetricFrame(metrics={"accuracy_score": skm.accuracy_score}, y_true=y_true,
                     y_pred=y_pred, sensitive_features=sf)
    pd.testing.assert_frame_equal(gm.by_group, mf.by_group)
    assert len(gm.by_group) == 6


def test_conditional_features_with_several_metrics(data):
    y_true, y_pred, sf, _, income = data
    gm = GroupedMetric(["accuracy_score", skm.recall_score], y_true, y_pred,
                       sensitive_features=sf["SF 1"], conditional_features=income)
    assert list(gm.overall.index) == ["High", "Low"]
    assert gm.by_group.index.names == ["income_level", "SF 1"]
    diff = gm.difference()
    assert list(diff.index) == ["High", "Low"]
    for level in ("High", "Low"):
        sub = income.to_numpy() == level
        inner = GroupedMetric(["accuracy_score", skm.recall_score], y_true[sub], y_pred[sub],
                              sensitive_features=sf["SF 1"].to_numpy()[sub])
        assert gm.overall.loc[level, "accuracy_score"] == pytest.approx(
            inner.overall.iloc[0]["accuracy_score"])
        for metric in ("accuracy_score", "recall_score"):
            assert diff.loc[level, metric] == pytest.approx(inner.difference()[metric])
            assert gm.difference("to_overall").loc[level, metric] == pytest.approx(
                inner.difference("to_overall")[metric])
            assert gm.group_max().loc[level, metric] == pytest.approx(inner.group_max()[metric])


def test_string_metrics_equal_functions_and_mix(data):
    y_true, y_pred, sf, _, _ = data
    by_name = GroupedMetric(["accuracy_score", "f1_score", "selection_rate"], y_true, y_pred,
                            sensitive_features=sf["SF 2"])
    by_func = GroupedMetric([skm.accuracy_score, skm.f1_score, flm.selection_rate], y_true,
                            y_pred, sensitive_features=sf["SF 2"])
    pd.testing.assert_frame_equal(by_name.by_group, by_func.by_group)
    assert list(by_name.by_group.columns) == ["accuracy_score", "f1_score", "selection_rate"]
    assert set(grouped.REGISTRY) >= {"accuracy_score", "mean_pa", "mean_ec_global", "brier"}


def test_dict_of_metrics_names_columns(data):
    y_true, y_pred, sf, weights, _ = data
    gm = GroupedMetric({"acc": "accuracy_score", "f_half": functools.partial(skm.fbeta_score,
                                                                              beta=0.5)},
                       y_true, y_pred, sensitive_features=sf["SF 1"],
                       sample_params={"acc": {"sample_weight": weights}})
    assert list(gm.by_group.columns) == ["acc", "f_half"]
    mask = sf["SF 1"].to_numpy() == "B"
    assert gm.by_group.loc["B", "f_half"] == pytest.approx(
        skm.fbeta_score(y_true[mask], y_pred[mask], beta=0.5))


def test_derived_metric_matches_fairlearn(data):
    y_true, y_pred, sf, weights, _ = data
    fbeta_diff = grouped.make_derived_metric("difference", skm.fbeta_score,
                                             sample_param_names=["sample_weight"])
    ours = fbeta_diff(y_true, y_pred, sensitive_features=sf["SF 1"], sample_weight=weights,
                      beta=0.5)
    theirs = flm.make_derived_metric(metric=skm.fbeta_score, transform="difference",
                                     sample_param_names=["sample_weight"])(
        y_true, y_pred, sensitive_features=sf["SF 1"], sample_weight=weights, beta=0.5)
    assert ours == pytest.approx(theirs)
    for agg in ("ratio", "group_min", "group_max"):
        f = grouped.make_derived_metric(agg, "accuracy_score")
        g = flm.make_derived_metric(metric=skm.accuracy_score, transform=agg)
        assert f(y_true, y_pred, sensitive_features=sf["SF 2"]) == pytest.approx(
            g(y_true, y_pred, sensitive_features=sf["SF 2"]))
    f = grouped.make_derived_metric("difference", "accuracy_score")
    assert f(y_true, y_pred, sensitive_features=sf["SF 2"], method="to_overall") == pytest.approx(
        flm.make_derived_metric(metric=skm.accuracy_score, transform="difference")(
            y_true, y_pred, sensitive_features=sf["SF 2"], method="to_overall"))


def test_fairness_conveniences_match_fairlearn(data):
    y_true, y_pred, sf, weights, _ = data
    A = sf["SF 2"]
    assert grouped.demographic_parity_difference(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(flm.demographic_parity_difference(y_true, y_pred, sensitive_features=A))
    assert grouped.demographic_parity_ratio(
        y_true, y_pred, sensitive_features=A, sample_weight=weights) == pytest.approx(
        flm.demographic_parity_ratio(y_true, y_pred, sensitive_features=A,
                                     sample_weight=weights))
    assert grouped.equalized_odds_difference(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(flm.equalized_odds_difference(y_true, y_pred, sensitive_features=A))
    assert grouped.equalized_odds_ratio(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(flm.equalized_odds_ratio(y_true, y_pred, sensitive_features=A))
    tpr = flm.MetricFrame(metrics=flm.true_positive_rate, y_true=y_true, y_pred=y_pred,
                          sensitive_features=A)
    fpr = flm.MetricFrame(metrics=flm.false_positive_rate, y_true=y_true, y_pred=y_pred,
                          sensitive_features=A)
    assert grouped.true_positive_rate_difference(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(tpr.difference())
    assert grouped.true_positive_rate_ratio(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(tpr.ratio())
    assert grouped.false_positive_rate_difference(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(fpr.difference())
    assert grouped.false_positive_rate_ratio(y_true, y_pred, sensitive_features=A) == \
        pytest.approx(fpr.ratio())


def test_grouped_scorer_in_real_grid_search():
    rng = np.random.default_rng(11)
    n = 240
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"],
                     index=pd.RangeIndex(1000, 1000 + n))
    y = pd.Series((X["a"] + 0.5 * rng.normal(size=n) > 0).astype(int), index=X.index)
    A = pd.Series(rng.choice(["g1", "g2", "g3"], n), index=X.index, name="group")
    w = pd.Series(rng.integers(1, 5, n).astype(float), index=X.index)
    scorer = grouped.make_grouped_scorer(skm.accuracy_score, A, {"sample_weight": w},
                                         disparity_measure="difference")
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, scoring=scorer, cv=cv)
    search.fit(X, y)
    for c_index, C in enumerate([0.01, 1.0]):
        for split, (train, test) in enumerate(cv.split(X, y)):
            model = LogisticRegression(C=C).fit(X.iloc[train], y.iloc[train])
            pred = model.predict(X.iloc[test])
            accs = []
            for g in ("g1", "g2", "g3"):
                m = A.iloc[test].to_numpy() == g
                accs.append(skm.accuracy_score(y.iloc[test].to_numpy()[m], pred[m],
                                               sample_weight=w.iloc[test].to_numpy()[m]))
            expected = -(max(accs) - min(accs))  # greater_is_better=False negates
            got = search.cv_results_[f"split{split}_test_score"][c_index]
            assert got == pytest.approx(expected)


def test_grouped_scorer_errors():
    A = pd.Series(["a", "b"])
    with pytest.raises(GroupedMetricError, match="pandas Series"):
        grouped.make_grouped_scorer("accuracy_score", np.array(["a", "b"]))
    with pytest.raises(GroupedMetricError, match="same index"):
        grouped.make_grouped_scorer("accuracy_score", A,
                                    {"sample_weight": pd.Series([1, 2], index=[5, 6])})
    scorer = grouped.make_grouped_scorer("accuracy_score", A)
    model = DummyClassifier().fit(np.zeros((2, 1)), [0, 1])
    with pytest.raises(GroupedMetricError, match="without an index"):
        scorer(model, np.zeros((2, 1)), np.array([0, 1]))
    with pytest.raises(GroupedMetricError, match=r"not in sensitive_features' index"):
        scorer(model, np.zeros((2, 1)), pd.Series([0, 1], index=[7, 8]))


def test_errors_are_early_and_named(data):
    y_true, y_pred, sf, weights, _ = data
    A = sf["SF 1"]
    gm = GroupedMetric(["accuracy_score", skm.confusion_matrix], y_true, y_pred,
                       sensitive_features=A)
    for op in (gm.difference, gm.ratio, gm.group_min, gm.group_max):
        with pytest.raises(GroupedMetricError, match="'confusion_matrix' returned a ndarray"):
            op()
    assert gm.difference(metrics=["accuracy_score"]).index.tolist() == ["accuracy_score"]
    with pytest.raises(GroupedMetricError, match=r"no metric\(s\) \['recall'\]"):
        gm.difference(metrics=["recall"])
    kappa = GroupedMetric("cohen_kappa_score", y_true, y_pred, sensitive_features=A)
    assert np.isfinite(kappa.difference()["cohen_kappa_score"])
    with pytest.raises(GroupedMetricError, match="ratio.*meaningless.*cohen_kappa_score"):
        kappa.ratio()

    def shifted(yt, yp):
        return skm.accuracy_score(yt, yp) - 0.9

    with pytest.raises(GroupedMetricError, match="negative values"):
        GroupedMetric(shifted, y_true, y_pred, sensitive_features=A).ratio()
    with pytest.raises(GroupedMetricError, match="y_pred has 299 rows but y_true has 300"):
        GroupedMetric("accuracy_score", y_true, y_pred[:-1], sensitive_features=A)
    with pytest.raises(GroupedMetricError, match="have 299 rows but y_true has 300"):
        GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=A[:-1])
    with pytest.raises(GroupedMetricError, match=r"sample_params\['sample_weight'\] has 10"):
        GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=A,
                      sample_params={"sample_weight": weights[:10]})
    holes = A.copy()
    holes.iloc[[3, 7]] = None
    with pytest.raises(GroupedMetricError, match="'SF 1' has 2 missing value"):
        GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=holes)
    with pytest.raises(GroupedMetricError, match=r"\['sample_weight'\] appear in both"):
        GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=A,
                      sample_params={"sample_weight": weights},
                      params={"sample_weight": weights})
    with pytest.raises(GroupedMetricError, match="has 1 entries but there are 2 metrics"):
        GroupedMetric(["accuracy_score", "f1_score"], y_true, y_pred, sensitive_features=A,
                      params=[{"normalize": True}])
    with pytest.raises(GroupedMetricError, match="one dict but there are 2 metrics"):
        GroupedMetric(["accuracy_score", "f1_score"], y_true, y_pred, sensitive_features=A,
                      sample_params={"sample_weight": weights})
    with pytest.raises(GroupedMetricError, match="unknown metric name 'acuracy'"):
        GroupedMetric("acuracy", y_true, y_pred, sensitive_features=A)
    with pytest.raises(GroupedMetricError, match="no __name__"):
        GroupedMetric(functools.partial(skm.fbeta_score, beta=1), y_true, y_pred,
                      sensitive_features=A)
    with pytest.raises(GroupedMetricError, match="given more than once"):
        GroupedMetric(["accuracy_score", skm.accuracy_score], y_true, y_pred,
                      sensitive_features=A)
    with pytest.raises(GroupedMetricError, match="method must be one of"):
        gm.difference(method="overall_max")
    with pytest.raises(GroupedMetricError, match="both sensitive and conditional"):
        GroupedMetric("accuracy_score", y_true, y_pred, sensitive_features=A,
                      conditional_features=A)


# ------------------------------------------------------------------ reproducibility by group
@pytest.fixture
def runs_data():
    rng = np.random.default_rng(5)
    n, k = 400, 6
    y_true = rng.choice(["a", "b", "c"], n)
    group = np.where(rng.random(n) < 0.5, "stable", "noisy")
    flip = np.where(group == "stable", 0.05, 0.4)
    runs = np.empty((n, k), dtype=object)
    for j in range(k):
        wrong = rng.random(n) < flip
        runs[:, j] = np.where(wrong, rng.choice(["a", "b", "c"], n), y_true)
    return y_true, runs.T, pd.Series(group, name="stability")  # preds: k runs × n samples


def test_reproducibility_by_group_equals_pairwise_on_each_group(runs_data):
    y_true, preds, group = runs_data
    gm = grouped.reproducibility_by_group(y_true, preds, sensitive_features=group,
                                          metrics=["ec_global", "pa", "kappa"])
    assert list(gm.by_group.columns) == ["mean_accuracy", "mean_ec_global", "mean_pa",
                                         "mean_kappa"]
    classes = {"a": 0, "b": 1, "c": 2}
    yi = np.array([classes[v] for v in y_true])
    pi = np.vectorize(classes.get)(preds)
    for g in ("stable", "noisy"):
        m = group.to_numpy() == g
        table = pairwise_metrics(yi[m], pi[:, m], n_classes=3)
        for metric in ("ec_global", "pa", "kappa"):
            assert gm.by_group.loc[g, f"mean_{metric}"] == pytest.approx(table[metric].mean())
        assert gm.by_group.loc[g, "mean_accuracy"] == pytest.approx((pi[:, m] == yi[m]).mean())
    assert gm.by_group.loc["stable", "mean_pa"] > gm.by_group.loc["noisy", "mean_pa"]
    pa = gm.by_group["mean_pa"]
    assert gm.difference()["mean_pa"] == pytest.approx(pa.max() - pa.min())
    assert gm.ratio(metrics=["mean_pa"])["mean_pa"] == pytest.approx(pa.min() / pa.max())
    with pytest.raises(GroupedMetricError, match="mean_kappa"):
        gm.ratio()


def test_reproducibility_by_group_bootstrap_and_jackknife(runs_data):
    y_true, preds, group = runs_data
    gm = grouped.reproducibility_by_group(y_true, preds, sensitive_features=group,
                                          metrics=["pa"], n_boot=40,
                                          ci_quantiles=[0.025, 0.5, 0.975], random_state=1)
    low, mid, high = gm.by_group_ci
    assert (low["mean_pa"] <= mid["mean_pa"]).all() and (mid["mean_pa"] <= high["mean_pa"]).all()
    d_low, _, d_high = gm.difference_ci()
    assert d_low["mean_pa"] <= gm.difference()["mean_pa"] <= d_high["mean_pa"] + 0.05

    table = grouped.reproducibility_ci_by_group(y_true, preds, sensitive_features=group,
                                                metrics=["pa", "ec_global"])
    assert set(table["group"]) == {"overall", "noisy", "stable"}
    row = table[(table.group == "noisy") & (table.metric == "pa")].iloc[0]
    classes = {"a": 0, "b": 1, "c": 2}
    m = group.to_numpy() == "noisy"
    yi = np.array([classes[v] for v in y_true])[m]
    pi = np.vectorize(classes.get)(preds)[:, m]
    pw = pairwise_metrics(yi, pi, n_classes=3)
    se, lo, hi = jackknife_ci(pw.run_i.to_numpy(), pw.run_j.to_numpy(), pw.pa.to_numpy())
    assert (row["n"], row["mean"], row["se"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (m.sum(), pw.pa.mean(), se, lo, hi))


def test_reproducibility_by_group_errors(runs_data):
    y_true, preds, group = runs_data
    with pytest.raises(GroupedMetricError, match="k ≥ 2"):
        grouped.reproducibility_by_group(y_true, preds[:1], sensitive_features=group)
    with pytest.raises(GroupedMetricError, match=r"samples × runs: pass preds.T"):
        grouped.reproducibility_by_group(y_true, preds.T, sensitive_features=group)
    with pytest.raises(MetricInputError, match=r"samples × runs; pass runs × samples"):
        pairwise_metrics(np.zeros(400, int), np.zeros((400, 6), int))
    with pytest.raises(GroupedMetricError, match="unknown pairwise metric 'pq'"):
        grouped.reproducibility_by_group(y_true, preds, sensitive_features=group, metrics=["pq"])
    with pytest.raises(GroupedMetricError, match=r"shape \(6, 400\) but y_true has 399"):
        grouped.reproducibility_ci_by_group(y_true[:-1], preds, sensitive_features=group)


# ------------------------------------------------------------------ the pipeline's grouped job
def flat(series):
    """A by-group Series with intersections labelled as the pipeline does ('f × a')."""
    return pd.Series(series.to_numpy(), index=[" × ".join(g) if isinstance(g, tuple) else g
                                               for g in series.index])


def test_pipeline_grouped_tables_equal_the_metricframe_computation():
    """The grouped job computes with numpy (fairlearn's per-group overhead was ~80 % of its
    time); fairlearn's MetricFrame (through GroupedMetric) is the oracle, empty intersections
    included."""
    from modelvar.pipeline.grouped_tables import grouped_columns
    from modelvar.pipeline.predictions import RunsMatrix

    rng = np.random.default_rng(11)
    n, k = 300, 5
    y = rng.integers(0, 3, n)
    preds = np.where(rng.random((k, n)) < 0.3, rng.integers(0, 3, (k, n)), y)
    sex = rng.choice(["f", "m"], n)
    job = np.where(sex == "f", rng.choice(["a", "b"], n), rng.choice(["a", "c"], n))
    samples = np.arange(n) * 2
    columns = {"sex": np.empty(2 * n, object), "job": np.empty(2 * n, object)}
    columns["sex"][samples], columns["job"][samples] = sex, job
    matrix = RunsMatrix(y_true=y, preds=preds, runs=np.arange(k), samples=samples,
                        classes=["x", "y", "z"], keys={"cell": "c", "repeat": 0})
    metrics = ["ec_global", "pa", "kappa"]
    table, disp = grouped_columns(matrix, columns, groupings=["sex", ["sex", "job"]],
                                  metrics=metrics, categorical={"sex", "job"})
    table, disp = pd.DataFrame(table), pd.DataFrame(disp)
    labels = np.array(["x", "y", "z"])[y]
    for grouping, features in (("sex", pd.Series(sex, name="sex")),
                               ("sex × job", pd.DataFrame({"sex": sex, "job": job}))):
        rows = table[table["grouping"] == grouping]
        for j in range(k):
            gm = grouped.GroupedMetric(skm.accuracy_score, labels,
                                       np.array(["x", "y", "z"])[preds[j]],
                                       sensitive_features=features)
            by_group = gm.by_group.iloc[:, 0]
            got = rows[(rows["run"] == j) & (rows["group"] != "overall")].set_index("group")
            want = flat(by_group)
            pd.testing.assert_series_equal(got["value"], want.loc[got.index], check_names=False)
            assert len(got) == len(want)  # every intersection, the empty one as NaN
            d = disp[(disp["grouping"] == grouping) & (disp["run"] == j)].set_index(
                "aggregate")["value"]
            assert d["difference_minmax"] == pytest.approx(gm.difference().iloc[0])
            assert d["difference_to_overall"] == pytest.approx(
                gm.difference(method="to_overall").iloc[0])
            assert d["ratio_minmax"] == pytest.approx(gm.ratio().iloc[0])
            assert d["ratio_to_overall"] == pytest.approx(gm.ratio(method="to_overall").iloc[0])
        rep = grouped.reproducibility_by_group(labels, np.array(["x", "y", "z"])[preds],
                                               sensitive_features=features, metrics=metrics)
        ci = grouped.reproducibility_ci_by_group(labels, np.array(["x", "y", "z"])[preds],
                                                 sensitive_features=features, metrics=metrics)
        per_repeat = rows[rows["run"] == -1]
        for column in rep.by_group.columns:
            got = per_repeat[(per_repeat["metric"] == column)
                             & (per_repeat["group"] != "overall")].set_index("group")["value"]
            want = flat(rep.by_group[column])
            np.testing.assert_allclose(got.to_numpy(), want.loc[got.index].to_numpy())
            d = disp[(disp["grouping"] == grouping) & (disp["run"] == -1)
                     & (disp["metric"] == column)].set_index("aggregate")["value"]
            assert d["difference_minmax"] == pytest.approx(rep.difference()[column])
        for metric in metrics:
            got = per_repeat[per_repeat["metric"] == f"mean_{metric}"].set_index("group")
            want = ci[ci["metric"] == metric].set_index("group")
            for group in want.index:
                assert got.loc[group, ["value", "se", "ci_low", "ci_high"]].to_numpy(float) == \
                    pytest.approx(want.loc[group, ["mean", "se", "ci_low", "ci_high"]]
                                  .to_numpy(float), nan_ok=True)
