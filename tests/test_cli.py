"""The user-facing ``modelvar metrics`` command on a user's own predictions."""

import sys

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


# ------------------------------------------------------------------ hostile and malformed input
def run_metrics(tmp_path, capsys, frame, suffix=".parquet", out="pw.parquet"):
    path = tmp_path / f"in{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    code = main(["metrics", str(path), "--out", str(tmp_path / out)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def numeric_table(rng, k=3, n=50):
    y = rng.integers(0, 3, n)
    rows = [pd.DataFrame({"run": run, "sample": np.arange(n), "y_true": y,
                          "y_pred": np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))})
            for run in range(k)]
    return pd.concat(rows, ignore_index=True)


def accuracy_in(tmp_path):
    per_run = pd.read_parquet(tmp_path / "pw.per_run.parquet")
    return per_run["accuracy"].to_numpy()


def test_labels_of_one_value_in_different_types_compare_by_value(tmp_path, capsys):
    frame = numeric_table(np.random.default_rng(5))
    assert run_metrics(tmp_path, capsys, frame)[0] == 0
    want = accuracy_in(tmp_path)
    assert want.min() > 0.7
    # parquet: int truth, text predictions of the same numbers
    as_text = frame.assign(y_pred=frame["y_pred"].astype(str))
    assert run_metrics(tmp_path, capsys, as_text)[0] == 0
    np.testing.assert_array_equal(accuracy_in(tmp_path), want)
    # CSV: "2" in y_true, "2.0" in y_pred
    csv = frame.assign(y_pred=frame["y_pred"].astype(float).map(lambda v: f"{v:.1f}"))
    assert run_metrics(tmp_path, capsys, csv, ".csv")[0] == 0
    np.testing.assert_array_equal(accuracy_in(tmp_path), want)


@pytest.mark.parametrize(
    ("mutate", "suffix", "message"),
    [
        (lambda f: f.assign(y_pred=np.where(f.index % 2, "cat", "dog")), ".parquet",
         "labels of different types"),
        (lambda f: f.assign(y_true=f["y_true"].astype(str).where(f.index != 4, "2.0")),
         ".csv", "writes one number in several ways"),
        (lambda f: f.assign(y_true=f["y_true"].map({0: "x", 1: "2", 2: "z"}),
                            y_pred=f["y_pred"].map({0: "x", 1: "2.0", 2: "z"})), ".csv",
         "y_true mixes labels that read as numbers ('2') with text labels ('x', 'z')"),
        (lambda f: f.assign(y_pred=f["y_pred"].map({0: "0", 1: "c1", 2: "2"})), ".csv",
         "y_pred mixes labels that read as numbers ('0', '2') with text labels ('c1')"),
        (lambda f: f.assign(y_pred=f["y_pred"].map({0: "c0", 1: "c1", 2: "c2"})), ".csv",
         "y_true holds numbers but y_pred holds text labels such as ['c0', 'c1', 'c2']"),
        (lambda f: f.assign(y_pred=f["y_pred"].astype(str).where(f.index != 3, "   ")), ".csv",
         "empty or blank label"),
        (lambda f: f.assign(y_pred=f["y_pred"].astype(str).where(f.index != 3, "")), ".csv",
         "missing label"),
        (lambda f: f.assign(y_true=f["y_true"].map({0: "cat", 1: " cat", 2: "eel"})), ".csv",
         "leading or trailing spaces"),
        (lambda f: f.assign(run=f["run"].map({0: "a", 1: "b", 2: "c"})), ".parquet",
         "column 'run' must hold whole-number run ids"),
        (lambda f: f.assign(run=f["run"].astype(float).where(f.index != 7)), ".parquet",
         "column 'run' has missing ids"),
        (lambda f: f.assign(run=f["run"] + 0.5), ".parquet", "whole-number run ids"),
        (lambda f: f.assign(sample=f["sample"].astype(float).where(f.index != 2)), ".parquet",
         "column 'sample' has missing ids"),
    ],
)
def test_malformed_labels_and_ids_are_named(tmp_path, capsys, mutate, suffix, message):
    code, err = run_metrics(tmp_path, capsys, mutate(numeric_table(np.random.default_rng(6))),
                            suffix)
    assert code == 2 and message in err, err
    assert not list(tmp_path.glob("pw*"))


def test_na_text_is_a_label_not_a_missing_value(tmp_path, capsys):
    frame = numeric_table(np.random.default_rng(7))
    names = {0: "NA", 1: "None", 2: "eel"}
    frame = frame.assign(y_true=frame["y_true"].map(names), y_pred=frame["y_pred"].map(names))
    assert run_metrics(tmp_path, capsys, frame, ".csv")[0] == 0
    per_sample = pd.read_parquet(tmp_path / "pw.per_sample.parquet")
    assert len(per_sample) == 50


def test_paths_are_checked_before_anything_is_written(tmp_path, capsys):
    frame = numeric_table(np.random.default_rng(8))
    source = tmp_path / "in.parquet"
    frame.to_parquet(source)
    before = source.read_bytes()
    cases = [
        ([str(source), "--out", str(source)], "is the input file"),
        ([str(source), "--out", str(tmp_path)], "write .parquet or .csv"),
        ([str(tmp_path / "nothing.csv"), "--out", str(tmp_path / "o.parquet")], "no such file"),
        ([str(tmp_path), "--out", str(tmp_path / "o.parquet")], "is a folder"),
        ([str(source), "--out", str(tmp_path / "o.txt")], "write .parquet or .csv"),
    ]
    (tmp_path / "adir.parquet").mkdir()
    cases.append(([str(source), "--out", str(tmp_path / "adir.parquet")], "is a folder"))
    for argv, message in cases:
        assert main(["metrics", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    assert source.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir.parquet", "in.parquet"]


def test_a_label_count_that_cannot_fit_in_memory_is_refused_before_allocating(tmp_path, capsys):
    """120,000 "classes" would need (k − 1) tables of C² floats (~10^12 bytes): refused with a
    message before any of them is allocated (the peak of traced memory stays that of reading
    the input, far below one table of 120,000² bytes)."""
    import tracemalloc

    rng = np.random.default_rng(9)
    n = 60_000
    y = rng.random(n)  # continuous "labels": every sample its own class
    frame = pd.concat([pd.DataFrame({"run": r, "sample": np.arange(n), "y_true": y,
                                     "y_pred": y + rng.random(n)}) for r in range(3)])
    tracemalloc.start()
    try:
        code, err = run_metrics(tmp_path, capsys, frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 2 and "distinct labels" in err and "Labels must be classes" in err
    assert peak < 120_000**2 // 10


# ------------------------------------------------------------------ the command itself
def test_version_help_and_generated_docs(capsys):
    import argparse
    import subprocess
    import sys

    from conftest import REPO
    from modelvar import __version__
    from modelvar.cli import build_parser

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"modelvar {__version__}"
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    undocumented = [f"{name} {action.option_strings or action.dest}"
                    for name, command in sub.choices.items() for action in command._actions
                    if not action.help]
    assert undocumented == []
    assert "plot" not in sub.choices  # `figures` draws every figure
    check = subprocess.run([sys.executable, str(REPO / "scripts" / "make_cli_docs.py"),
                            "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_an_error_is_printed_once(tmp_path, capsys):
    assert main(["metrics", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("no such file") == 1 and err.startswith("modelvar metrics: error:")


@pytest.mark.parametrize(("command", "module", "extra"), [
    (["plan"], "yaml", "pipeline"),
    (["config", "--get", "results_dir"], "snakemake", "pipeline"),
])
def test_a_subcommand_without_its_extra_names_the_extra(monkeypatch, capsys, command, module,
                                                         extra):
    """Issue 24: no bare ModuleNotFoundError; the extra to install, in one line."""
    for name in [m for m in sys.modules if m.startswith(f"{module}.")]:
        monkeypatch.setitem(sys.modules, name, None)  # submodules imported by earlier tests
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"pip install 'modelvar[{extra}]'" in err[0], err


def test_config_get_results_dir_prints_an_absolute_path(tmp_path, monkeypatch, capsys):
    """As docs/cli.md says (issue 24): the config's results_dir, relative to --directory."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text("results_dir: out\n")
    assert main(["config", "--get", "results_dir", "--", "--configfile", "c.yaml",
                 "--directory", "work"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "work" / "out")


# ------------------------------------------------------------------ faults as one line (issue 20)
def test_faults_of_the_file_system_and_command_line_are_one_line(tmp_path, capsys):
    """Each of these printed a traceback before: a path under a file, a value Snakemake checks
    after parsing, a folder that holds no results, a log file that cannot be written."""
    frame = numeric_table(np.random.default_rng(3))
    source = tmp_path / "in.parquet"
    frame.to_parquet(source)
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (["metrics", str(source), "--out", str(afile / "o.parquet")], "afile is a file"),
        (["plan", "--cores", "abc"], "--cores"),
        (["plan", "--calibrate", str(tmp_path)], "no tables written by the study's jobs"),
        (["--log", str(afile / "x.log"), "datasets"], "cannot be written"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)


def test_a_reader_that_leaves_early_ends_the_command_quietly(tmp_path):
    """`modelvar verify | head -1`: Python's BrokenPipeError traceback before."""
    import subprocess

    from modelvar.table_files import MANIFEST_DIR, STATE_DIR

    manifests = tmp_path / STATE_DIR / MANIFEST_DIR
    manifests.mkdir(parents=True)
    for i in range(3000):  # more output than a pipe buffers
        (tmp_path / f"t{i}.parquet").write_bytes(b"x")
    proc = subprocess.run(
        f"{sys.executable} -m modelvar verify {tmp_path} | head -1", shell=True,
        capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("checked 0 files")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_verify_names_a_corrupt_manifest(tmp_path, capsys):
    from modelvar.table_files import MANIFEST_DIR, STATE_DIR

    manifest = tmp_path / STATE_DIR / MANIFEST_DIR / "fit" / "d" / "k" / "j.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"files": [')
    assert main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "fit/d/k/j.json: job manifest cannot be read" in out


# ------------------------------------------------------------------ what it cannot score (issue 49)
def test_a_header_only_file_and_a_tab_separated_csv_are_named(tmp_path, capsys):
    header_only = tmp_path / "empty.csv"
    header_only.write_text("run,sample,y_true,y_pred\n")
    tabs = tmp_path / "tabs.csv"
    numeric_table(np.random.default_rng(3)).to_csv(tabs, index=False, sep="\t")
    semicolons = tmp_path / "semi.csv"
    numeric_table(np.random.default_rng(3)).to_csv(semicolons, index=False, sep=";")
    nothing = tmp_path / "nothing.csv"
    nothing.write_text("")
    for path, message in [
        (header_only, "empty.csv: no rows (the file holds only its header)"),
        (tabs, "tabs.csv: its header is separated by tabs, not commas"),
        (semicolons, "semi.csv: its header is separated by semicolons, not commas"),
        (nothing, "nothing.csv: the file is empty (no header, no rows)"),
    ]:
        assert main(["metrics", str(path), "--out", str(tmp_path / "o.parquet")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.glob("o*"))


def test_the_output_set_is_written_all_or_none(tmp_path, capsys, monkeypatch):
    """A disk that fills on the third table: every file of the earlier set stays as it was
    (none removed, none replaced, no temporary file left), in one line naming the file."""
    import errno
    import os

    source = tmp_path / "in.parquet"
    numeric_table(np.random.default_rng(1)).to_parquet(source)
    assert main(["metrics", str(source), "--out", str(tmp_path / "pw.parquet")]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.glob("pw*")}
    assert len(before) >= 4
    numeric_table(np.random.default_rng(2)).to_parquet(source)  # new predictions
    real, calls = pd.DataFrame.to_parquet, []

    def fills_up(self, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", fills_up)
    assert main(["metrics", str(source), "--out", str(tmp_path / "pw.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("modelvar metrics: error: cannot write ") and \
        err.endswith(": the disk is full; nothing was written there"), err
    assert len(err.splitlines()) == 1
    assert {p.name: p.read_bytes() for p in tmp_path.glob("pw*")} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "in.parquet"])


def test_a_named_error_is_one_line_and_a_bare_value_error_keeps_its_traceback(monkeypatch,
                                                                               capsys):
    """Issue 69: modelvar's own errors (each names the input at fault) end a command with one
    line; a bare ValueError (a bug, or a library's check) is no such verdict: its traceback
    comes first, then the same line."""
    from modelvar import cli
    from modelvar.planning.plan import PlanError

    for error, traceback_shown in ((PlanError("the plan is wrong"), False),
                                   (ValueError("the plan is wrong"), True)):
        def fail(args, error=error):
            raise error

        monkeypatch.setattr(cli, "cmd_plan", fail)
        assert cli.main(["plan"]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1] == "modelvar plan: error: the plan is wrong"
        assert ("Traceback (most recent call last)" in err) is traceback_shown, err
