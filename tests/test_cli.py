"""The user-facing ``modelvar metrics`` command on a user's own predictions."""

import numpy as np
import pandas as pd
import pytest

from modelvar.cli import main
from modelvar.metrics import pairwise_metrics


def long_table(rng, k=4, n=60, repeats=(0, 1)):
    rows = []
    for r in repeats:
        y = rng.choice(["cat", "dog", "eel"], n)
        for run in range(k):
            pred = np.where(rng.random(n) < 0.7, y, rng.choice(["cat", "dog", "eel"], n))
            rows.append(pd.DataFrame({"repeat": r, "run": run, "sample": np.arange(n),
                                      "y_true": y, "y_pred": pred}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_metrics_cli_matches_library(tmp_path, suffix):
    frame = long_table(np.random.default_rng(1))
    path = tmp_path / f"preds{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    assert main(["metrics", str(path), "--out", str(tmp_path / "pw.parquet")]) == 0
    pw = pd.read_parquet(tmp_path / "pw.parquet")
    summary = pd.read_parquet(tmp_path / "pw.summary.parquet")
    assert set(pw["repeat"]) == {0, 1} and len(pw) == 2 * 2 * 6
    one = frame[frame["repeat"] == 1].sort_values(["run", "sample"])
    classes = ["cat", "dog", "eel"]
    y = one[one["run"] == 0]["y_true"].map(classes.index).to_numpy()
    P = one["y_pred"].map(classes.index).to_numpy().reshape(4, -1)
    want = pairwise_metrics(y, P)
    got = pw[(pw["repeat"] == 1) & (pw["subset"] == "all")].reset_index(drop=True)
    np.testing.assert_allclose(got["ec_global"], want["ec_global"])
    np.testing.assert_allclose(got["kappa"], want["kappa"])
    mean_pa = summary[(summary["repeat"] == 1) & (summary["metric"] == "pa")
                      & (summary["subset"] == "all")]["mean"].iloc[0]
    assert mean_pa == pytest.approx(want["pa"].mean())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda f: f.drop(columns=["y_pred"]), r"missing required column\(s\) \['y_pred'\]"),
        (lambda f: f[~((f["run"] == 2) & (f["sample"] < 5))], "lack predictions for some"),
        (lambda f: f.assign(y_pred=f["y_pred"].where(f.index != 3, None)), "missing"),
        (lambda f: f[f["run"] == 0], "at least 2 runs"),
        (lambda f: pd.concat([f, f.iloc[:1]]), "more than once"),
    ],
)
def test_metrics_cli_bad_input(tmp_path, capsys, mutate, message):
    check_error(tmp_path, capsys, mutate(long_table(np.random.default_rng(2), repeats=(0,))
                                         .drop(columns="repeat")), message)


def check_error(tmp_path, capsys, frame, message):
    import re

    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    assert main(["metrics", str(path), "--out", str(tmp_path / "pw.parquet")]) == 2
    err = capsys.readouterr().err
    assert "error" in err and re.search(message, err), err


def with_proba(frame, rng):
    p = rng.dirichlet(np.ones(3), size=len(frame))
    for c, name in enumerate(["cat", "dog", "eel"]):
        frame[f"proba:{name}"] = p[:, c]
    return frame


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda f: f.assign(**{c: f[c] * 0.9 for c in ("proba:cat", "proba:dog", "proba:eel")}),
         "do not sum to 1"),
        (lambda f: f.assign(**{"proba:cat": -0.5,
                                "proba:dog": f["proba:dog"] + 0.5 + f["proba:cat"]}),
         r"outside \[0, 1\]"),
        (lambda f: f.drop(columns=["proba:eel"]), "do not match the classes"),
    ],
)
def test_metrics_cli_bad_probabilities(tmp_path, capsys, mutate, message):
    rng = np.random.default_rng(3)
    frame = with_proba(long_table(rng, repeats=(0,)), rng)
    check_error(tmp_path, capsys, mutate(frame), message)


def test_metrics_cli_with_probabilities_writes_all_tables(tmp_path):
    rng = np.random.default_rng(4)
    frame = with_proba(long_table(rng), rng)
    frame.to_csv(tmp_path / "p.csv", index=False)
    assert main(["metrics", str(tmp_path / "p.csv"), "--out", str(tmp_path / "o.csv")]) == 0
    per_run = pd.read_csv(tmp_path / "o.per_run.csv")
    assert {"log_loss", "brier", "entropy_mean", "balanced_accuracy", "tau"} <= set(per_run.columns)
    assert len(per_run) == 2 * 4
    agreement = pd.read_csv(tmp_path / "o.agreement.csv")
    assert {"fleiss_kappa", "kripp_alpha", "always_wrong", "ever_wrong"} <= set(agreement.columns)
    per_sample = pd.read_csv(tmp_path / "o.per_sample.csv")
    assert len(per_sample) == 2 * 60 and per_sample["frac_wrong"].between(0, 1).all()
    assert per_sample["entropy_mean"].between(0, 1).all()
    summary = pd.read_csv(tmp_path / "o.summary.csv")
    row = summary[(summary.metric == "ec_global") & (summary.subset == "all")].iloc[0]
    assert row.ci_low <= row["mean"] <= row.ci_high and np.isfinite(row.null_mean)
