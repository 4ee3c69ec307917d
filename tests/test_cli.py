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
    frame = mutate(long_table(np.random.default_rng(2), repeats=(0,)).drop(columns="repeat"))
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    assert main(["metrics", str(path), "--out", str(tmp_path / "pw.parquet")]) == 2
    err = capsys.readouterr().err
    assert "error" in err
    import re
    assert re.search(message, err), err
