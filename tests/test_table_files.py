"""Atomic table writes, manifests, checked reads and verification (issue 12)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from modelvar.table_files import (
    STATE_DIR,
    Manifest,
    TableReadError,
    read_parquet,
    verify,
    write_parquet,
)


class Unwritable:
    """An object pyarrow cannot serialise: makes to_parquet fail half-way."""


def test_failed_write_leaves_no_temporary_file_and_keeps_the_old_table(tmp_path):
    path = tmp_path / "t.parquet"
    write_parquet(pd.DataFrame({"a": [1, 2, 3]}), path)
    before = path.read_bytes()
    with pytest.raises(Exception):  # noqa: B017  (pyarrow's own error type)
        write_parquet(pd.DataFrame({"a": [Unwritable()]}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_temporary_files_are_hidden_from_partitioned_readers(tmp_path, monkeypatch):
    part = tmp_path / "summary" / "dataset=a" / "part-0.parquet"
    write_parquet(pd.DataFrame({"x": np.arange(5)}), part)
    # a writer killed before its rename leaves its temporary file behind …
    import modelvar.table_files as tf

    monkeypatch.setattr(Path, "replace", lambda self, target: (_ for _ in ()).throw(
        KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        write_parquet(pd.DataFrame({"x": np.arange(5)}), part)
    monkeypatch.undo()
    # … it was removed on the way out; a stray one (kill -9) carries a hidden name
    assert [p.name for p in part.parent.iterdir()] == ["part-0.parquet"]
    stray = part.parent / f".part-0.parquet.abc{tf.TMP_SUFFIX}"
    stray.write_bytes(part.read_bytes())
    assert len(pd.read_parquet(tmp_path / "summary")) == 5  # not 10: the stray is not data


def results_with_manifest(tmp_path):
    root = tmp_path / "results"
    manifest = Manifest(root / STATE_DIR / "manifests" / "fit" / "a.json", rule="fit")
    with manifest:
        manifest.write_parquet(pd.DataFrame({"x": np.arange(100.0)}), root / "a" / "t1.parquet")
        manifest.write_parquet(pd.DataFrame({"y": np.arange(50)}), root / "a" / "t2.parquet")
        manifest.write_text("{}", root / "a" / "meta.json")
    return root


def test_manifest_records_every_file_with_size_rows_and_sha256(tmp_path):
    root = results_with_manifest(tmp_path)
    body = json.loads((root / STATE_DIR / "manifests" / "fit" / "a.json").read_text())
    files = {f["path"]: f for f in body["files"]}
    assert set(files) == {"a/t1.parquet", "a/t2.parquet", "a/meta.json"}
    assert files["a/t1.parquet"]["rows"] == 100 and files["a/meta.json"]["rows"] is None
    assert len(files["a/t2.parquet"]["sha256"]) == 64
    problems, checked = verify(root)
    assert checked == 3 and problems == []


def test_verify_names_each_bad_table(tmp_path):
    root = results_with_manifest(tmp_path)
    t1, t2 = root / "a" / "t1.parquet", root / "a" / "t2.parquet"
    data = bytearray(t1.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, damaged content
    t1.write_bytes(bytes(data))
    t2.write_bytes(t2.read_bytes()[:100])  # truncated
    (root / "a" / "meta.json").unlink()
    (root / "a" / "extra.parquet").write_bytes(t2.read_bytes())
    (root / "a" / ".t1.parquet.modelvar-x1y2.tmp").write_text("half")
    (root / "a" / ".draft.tmp").write_text("a user's, hidden: not a table and not ours")
    problems = {p.path: p for p in verify(root)[0]}
    assert "content differs" in problems["a/t1.parquet"].problem
    assert "size 100 bytes" in problems["a/t2.parquet"].problem
    assert problems["a/meta.json"].problem == "missing"
    assert "not recorded" in problems["a/extra.parquet"].problem
    assert "stray temporary file" in problems["a/.t1.parquet.modelvar-x1y2.tmp"].problem
    assert "a/.draft.tmp" not in problems
    assert problems["a/t2.parquet"].rule == "fit"
    assert f"--force {root / 'a' / 't2.parquet'} all" in problems["a/t2.parquet"].command
    quick = {p.path for p in verify(root, quick=True)[0]}
    assert "a/t1.parquet" not in quick  # --quick skips the sha256 comparison
    assert {"a/t2.parquet", "a/meta.json"} <= quick


def test_unreadable_table_error_names_the_file_and_the_fix(tmp_path):
    root = results_with_manifest(tmp_path)
    (root / STATE_DIR / "invocation.json").write_text(json.dumps(
        {"cwd": str(tmp_path), "options": ["--configfile", "/abs/study.yaml"]}))
    t2 = root / "a" / "t2.parquet"
    t2.write_bytes(t2.read_bytes()[:100])
    with pytest.raises(TableReadError) as err:
        read_parquet(t2)
    message = str(err.value)
    assert str(t2) in message and "truncated or corrupt" in message
    assert (f"cd {tmp_path} && snakemake --configfile /abs/study.yaml --cores all --force "
            "results/a/t2.parquet all") in message
    with pytest.raises(TableReadError, match="no such table"):
        read_parquet(root / "a" / "nothing.parquet")


def test_verify_cli_exit_status(tmp_path, capsys):
    from modelvar.cli import main

    root = results_with_manifest(tmp_path)
    assert main(["verify", str(root)]) == 0
    (root / "a" / "t1.parquet").unlink()
    assert main(["verify", str(root)]) == 1
    out = capsys.readouterr().out
    assert "a/t1.parquet: missing (written by rule fit)" in out and "fix: " in out
    assert main(["verify", str(tmp_path)]) == 2  # not a results folder


def test_damaged_json_metadata_is_named(tmp_path, capsys):
    from modelvar.cli import main

    meta = tmp_path / "d.json"
    meta.write_text('{"name": "d", "classes": [')
    job = ["--results", str(tmp_path), "--dataset", "d", "--classifier", "xgb", "--job", "j"]
    code = main(["pairwise", "--predictions", str(tmp_path / "p.parquet"), "--meta",
                 str(tmp_path / "d.json"), *job])
    err = capsys.readouterr().err
    assert code == 2 and "d.json: cannot be read" in err
    meta.write_text('{"name": "d", "classes": ["a", "b"]}')
    assert main(["pairwise", "--predictions", str(tmp_path / "p.parquet"), "--meta", str(meta),
                 *job]) == 2
    assert "p.parquet: no such table" in capsys.readouterr().err
    pd.DataFrame({"run": [0]}).to_parquet(tmp_path / "p.parquet")
    assert main(["pairwise", "--predictions", str(tmp_path / "p.parquet"), "--meta", str(meta),
                 *job]) == 2
    assert "not a predictions file of a modelvar fit job" in capsys.readouterr().err
    meta.write_text('{"name": "d", "classes": [')
    assert main(["pairwise", "--predictions", str(tmp_path / "p.parquet"), "--meta", str(meta),
                 *job]) == 2
    err = capsys.readouterr().err
    assert f"{meta}: cannot be read, it is truncated or corrupt (JSONDecodeError" in err


def test_table_stream_gathers_small_batches_into_row_groups(tmp_path):
    import pyarrow.parquet as pq

    from modelvar.table_files import Manifest, TableStream

    manifest = Manifest(None, rule="test")
    stream = TableStream(tmp_path / "t.parquet", manifest=manifest, row_group_rows=100)
    for i in range(250):  # one-row batches, as a metrics job writes agreement rows
        stream.write({"repeat": [i], "value": [i / 2]})
    stream.write({"repeat": [], "value": []})  # an empty batch changes nothing
    assert stream.close() == 250
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [100, 100, 50]
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.column("repeat").to_pylist() == list(range(250))
    assert table.column("value").to_pylist() == [i / 2 for i in range(250)]
