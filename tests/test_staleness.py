"""What decides that a job runs again, without Snakemake's metadata or trustworthy file times
(issue 20): job recipes, dataset content digests, clock skew, damaged tables, regrouped and
foreign files in a results partition."""

import json
import os
import shutil
import time

import pandas as pd
import pytest

from modelvar.pipeline import result_tables
from modelvar.running import job_recipes
from modelvar.table_files import (
    MANIFEST_DIR,
    STATE_DIR,
    Manifest,
    forget_damaged,
    manifests,
    recorded_paths,
    verify,
)


def job(results, rule, key, *tables):
    """Write ``tables`` (relative paths) as one job with its manifest; return the manifest."""
    manifest_path = results / STATE_DIR / MANIFEST_DIR / rule / f"{key}.json"
    with Manifest(manifest_path, rule=rule) as manifest:
        for i, rel in enumerate(tables):
            manifest.write_parquet(pd.DataFrame({"x": range(i + 3)}), results / rel)
    return manifest_path


# ----------------------------------------------------------------------------- recipes
def test_a_recipe_is_rewritten_only_when_it_changes(tmp_path):
    wildcards = {"dataset": "d", "classifier": "k", "job": "j"}
    path = job_recipes.record_recipe(tmp_path, "fit", wildcards, {"root_seed": 1})
    assert path == tmp_path / STATE_DIR / "recipes" / "fit" / "d" / "k" / "j" / "recipe.json"
    old = time.time() - 1000
    os.utime(path, (old, old))
    job_recipes.record_recipe(tmp_path, "fit", wildcards, {"root_seed": 1})
    assert path.stat().st_mtime == pytest.approx(old)  # same recipe: the job stays up to date
    job_recipes.record_recipe(tmp_path, "fit", wildcards, {"root_seed": 2})
    assert path.stat().st_mtime > old + 900  # changed: a newer input, so the job reruns
    assert job_recipes.recipe_path(tmp_path, "findings", {}).parent.name == "findings"
    # a dry run of another config leaves the record alone and writes its recipe aside
    aside = job_recipes.record_recipe(tmp_path, "fit", wildcards, {"root_seed": 3},
                                      dry_run=True)
    assert aside != path and aside.is_file() and '"root_seed": 2' in path.read_text()
    assert job_recipes.record_recipe(tmp_path, "fit", wildcards, {"root_seed": 2},
                                     dry_run=True) == path
    job_recipes.forget_dry_run(tmp_path)
    assert not aside.exists() and path.exists()


def test_a_dry_run_writes_no_recipe_of_a_new_job(tmp_path):
    """A job without a recipe runs in any case: a dry run gives it one shared input, newer than
    any output, instead of a folder and a recipe of its own."""
    output = tmp_path / "out.txt"
    output.write_text("made before")
    old = time.time() - 1000
    os.utime(output, (old, old))
    new_jobs = [job_recipes.record_recipe(tmp_path, "fit", {"dataset": "d", "job": str(i)},
                                          {"root_seed": 1}, dry_run=True) for i in range(3)]
    assert len(set(new_jobs)) == 1 and new_jobs[0].is_file()
    assert new_jobs[0].stat().st_mtime > output.stat().st_mtime  # the job shows as to run
    assert not (tmp_path / STATE_DIR / "recipes").exists()
    # a real run writes the job's own recipe; a dry run then finds it
    path = job_recipes.record_recipe(tmp_path, "fit", {"dataset": "d", "job": "0"},
                                     {"root_seed": 1})
    assert path != new_jobs[0] and path.is_file()
    assert job_recipes.record_recipe(tmp_path, "fit", {"dataset": "d", "job": "0"},
                                     {"root_seed": 1}, dry_run=True) == path
    job_recipes.forget_dry_run(tmp_path)
    assert not new_jobs[0].exists() and path.exists()


def test_a_recipe_given_as_a_function_is_evaluated_only_where_it_is_compared(tmp_path):
    """The workflow passes the rule's params as a function: a dry run's new job never calls it
    (its recipe is not written), a recorded job's recipe does, with the values' own result."""
    calls = []

    def values():
        calls.append(1)
        return {"root_seed": 1}

    wildcards = {"dataset": "d", "job": "0"}
    new_job = job_recipes.record_recipe(tmp_path, "fit", wildcards, values, dry_run=True)
    assert calls == [] and new_job.name == job_recipes.NEW_IN_DRY_RUN
    path = job_recipes.record_recipe(tmp_path, "fit", wildcards, values)
    assert calls == [1] and path.read_text() == job_recipes.record_recipe(
        tmp_path / "b", "fit", wildcards, {"root_seed": 1}).read_text()
    assert job_recipes.record_recipe(tmp_path, "fit", wildcards, values, dry_run=True) == path
    assert calls == [1, 1]
    # the shared input, once made, is not looked for again in this process; forget_dry_run
    # removes it and the next new job makes it again
    job_recipes.forget_dry_run(tmp_path)
    assert not new_job.exists()
    again = job_recipes.record_recipe(tmp_path, "fit", {"dataset": "d", "job": "1"}, values,
                                      dry_run=True)
    assert again == new_job and again.is_file()


def test_a_dataset_copied_with_an_older_time_gets_a_new_digest(tmp_path):
    """`cp -p` / rsync -a / tar / unzip keep the modification time; the change time and the
    content digest still tell."""
    source = tmp_path / "data.csv"
    source.write_text("a,y\n1,0\n")
    first = job_recipes.source_digest(source, tmp_path / "results")
    assert job_recipes.source_digest(source, tmp_path / "results") == first  # cached
    replacement = tmp_path / "new.csv"
    replacement.write_text("a,y\n2,0\n")
    os.utime(replacement, (1e9, 1e9))  # 2001
    shutil.copy2(replacement, source)
    assert source.stat().st_mtime == 1e9
    assert job_recipes.source_digest(source, tmp_path / "results") != first


def test_files_modelvar_wrote_dated_in_the_future_are_set_to_the_present(tmp_path):
    """Only modelvar's own files (recorded by a manifest, or in .modelvar) are re-timed: a
    user's file dated in the future keeps its time (issue 66, S1)."""
    now = time.time()
    future, present = tmp_path / "a" / "future.parquet", tmp_path / "present.parquet"
    recipe = tmp_path / ".modelvar" / "recipes" / "fit" / "recipe.json"
    users = tmp_path / "notes" / "plan.txt"
    for path in (future, present, recipe, users):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    for path in (future, recipe, users):
        os.utime(path, (now + 86400, now + 86400))
    os.utime(present, (now - 10, now - 10))
    assert sorted(job_recipes.clamp_future_times(tmp_path, [future, present], now=now)) == \
        sorted([future, recipe])
    assert future.stat().st_mtime == pytest.approx(now)
    assert recipe.stat().st_mtime == pytest.approx(now)
    assert present.stat().st_mtime == pytest.approx(now - 10)
    assert users.stat().st_mtime == pytest.approx(now + 86400)  # a user's: left as it is
    assert job_recipes.clamp_future_times(tmp_path / "none", []) == []


# ----------------------------------------------------------------------------- damaged tables
def test_a_job_with_a_damaged_table_or_manifest_is_forgotten(tmp_path):
    ok = job(tmp_path, "fit", "d/k/a", "predictions/a.parquet")
    cut = job(tmp_path, "fit", "d/k/b", "predictions/b.parquet")
    gone = job(tmp_path, "fit", "d/k/c", "predictions/c.parquet")
    corrupt = tmp_path / STATE_DIR / MANIFEST_DIR / "findings" / "job.json"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text('{"files": [')
    with open(tmp_path / "predictions/b.parquet", "r+b") as fh:
        fh.truncate(10)
    (tmp_path / "predictions/c.parquet").unlink()
    lines = forget_damaged(tmp_path)
    assert sorted(lines) == [
        "findings/job: its manifest cannot be read; the job runs again",
        "fit/d/k/b: predictions/b.parquet has 10 bytes, the job wrote "
        f"{(tmp_path / 'predictions/a.parquet').stat().st_size}; the job runs again",
        "fit/d/k/c: predictions/c.parquet is missing; the job runs again"]
    assert ok.exists() and not gone.exists() and not cut.exists() and not corrupt.exists()


def test_a_same_size_change_is_found_and_a_copied_file_is_not_a_change(tmp_path):
    """Issue 58: a table damaged in place with its size kept survived a resume ("Nothing to
    be done"). A file whose times are not its job's — its modification time neither the
    recorded one nor its job's touch (Snakemake touches a finished job's outputs, its manifest
    among them, at once), or its change time long after it — is compared by content: changed,
    its job runs again; the same bytes (a folder copied without its times), its manifest
    records the new times and keeps its own (Snakemake compares it with what follows), and
    the load says why jobs may run again."""
    changed = job(tmp_path, "fit", "d/k/a", "predictions/a.parquet")
    copied = job(tmp_path, "fit", "d/k/b", "predictions/b.parquet")
    touched = job(tmp_path, "fit", "d/k/c", "predictions/c.parquet")
    later = time.time() + 5
    table = tmp_path / "predictions/a.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte in the middle: size, footer and row count kept
    table.write_bytes(bytes(data))
    os.utime(table, (later, later))  # changed after the job's end
    other = tmp_path / "predictions/b.parquet"
    other.write_bytes(other.read_bytes())
    os.utime(other, (later, later))
    for path in (touched, tmp_path / "predictions/c.parquet"):  # as Snakemake's touch: now
        os.utime(path)
    manifest_time = copied.stat().st_mtime_ns
    notes: list[str] = []
    assert forget_damaged(tmp_path, notes=notes) == [
        "fit/d/k/a: predictions/a.parquet was changed since the job wrote it (same size, other "
        "content); the job runs again"]
    assert not changed.exists() and copied.exists() and touched.exists()
    assert copied.stat().st_mtime_ns == manifest_time
    recorded = {m.name: body["files"][0]["mtime_ns"] for m, body in manifests(tmp_path)}
    assert recorded["b.json"] == other.stat().st_mtime_ns  # hashed once, then trusted
    assert recorded["c.json"] != (tmp_path / "predictions/c.parquet").stat().st_mtime_ns
    assert len(notes) == 1 and notes[0].startswith("1 file(s) hold what their jobs wrote, with "
                                                   "other times than those jobs gave them")
    assert forget_damaged(tmp_path) == []  # the next load: a stat, nothing read


def test_a_same_size_change_with_its_time_set_back_is_found(tmp_path, monkeypatch):
    """Issue 66, A06: a same-size change whose modification time was set back to the ns
    (os.utime) passed a resume; its change time, which no tool can set, gives it away. A copy
    that keeps times (cp -a) is read once, then trusted: the next loads read nothing."""
    import shutil

    import modelvar.table_files as table_files

    job(tmp_path, "fit", "d/k/a", "predictions/a.parquet")
    table = tmp_path / "predictions/a.parquet"
    times = table.stat()
    time.sleep(2.1)  # a change later than the job's touch window
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    os.utime(table, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert table.stat().st_mtime_ns == times.st_mtime_ns
    assert forget_damaged(tmp_path) == [
        "fit/d/k/a: predictions/a.parquet was changed since the job wrote it (same size, other "
        "content); the job runs again"]
    # a copy with its times: read once (its change time is the copy's), then trusted
    job(tmp_path, "fit", "d/k/b", "predictions/b.parquet")
    time.sleep(2.1)
    copy = tmp_path.parent / f"{tmp_path.name}-copy"
    shutil.copytree(tmp_path, copy, copy_function=shutil.copy2)
    reads = []
    real = table_files.sha256_file
    monkeypatch.setattr(table_files, "sha256_file", lambda p: reads.append(p) or real(p))
    assert forget_damaged(copy) == [] and len(reads) == 1
    assert forget_damaged(copy) == [] and len(reads) == 1  # the next load reads nothing


def test_a_copy_that_lost_its_times_is_read_once_and_said(tmp_path):
    """Issue 66, M4: a copy without times (cp -r) planned 8 of 10 jobs with no word why. Its
    files all carry the copy's time, long after their jobs wrote them: each is read once, and
    the load says why jobs may run again; the next load says nothing."""
    import shutil

    study = tmp_path / "study"
    manifest = job(study, "fit", "d/k/a", "predictions/a.parquet")
    body = json.loads(manifest.read_text())
    hours_ago = time.time_ns() - 2 * 3600 * 10**9  # a study of two hours ago, as its jobs left it
    for record in body["files"]:
        record["mtime_ns"] = hours_ago
        os.utime(study / record["path"], ns=(hours_ago, hours_ago))
    manifest.write_text(json.dumps(body))
    os.utime(manifest, ns=(hours_ago, hours_ago))
    notes: list[str] = []
    assert forget_damaged(study, notes=notes) == [] and notes == []
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, copy_function=shutil.copy)  # new times, like cp -r
    assert forget_damaged(copy, notes=notes) == []
    assert len(notes) == 1 and notes[0].startswith("1 file(s) hold what their jobs wrote")
    notes.clear()
    assert forget_damaged(copy, notes=notes) == [] and notes == []


def test_files_no_job_wrote_are_moved_out_of_the_partitions_by_a_run(tmp_path, monkeypatch):
    """Issue 58: a copied table, notes and a .tmp stayed in a partition with no word, and
    pandas.read_parquet of the folder read double rows or failed. A dry run (or a load beside a
    running run) names them; a run moves them to .modelvar/strays, keeping every byte."""
    from modelvar.running import run_lock

    ours = f"predictions/{PART}/j.r0.parquet"
    job(tmp_path, "fit", "d/k/j", ours)
    folder = tmp_path / f"predictions/{PART}"
    shutil.copy(tmp_path / ours, folder / "j.r0 copy.parquet")
    (folder / "notes.txt").write_text("my notes")
    (folder / "j.r1.parquet.tmp").write_bytes(b"half")
    (folder / ".j.r2.parquet.abc.tmp").write_bytes(b"")  # hidden: readers skip it
    import pyarrow as pa

    with pytest.raises(pa.ArrowInvalid):  # notes.txt is no parquet file
        pd.read_parquet(tmp_path / "predictions")
    problems, _ = verify(tmp_path)
    assert sorted(p.path for p in problems if "not recorded" in p.problem) == [
        f"predictions/{PART}/j.r0 copy.parquet", f"predictions/{PART}/j.r1.parquet.tmp",
        f"predictions/{PART}/notes.txt"]
    lines = job_recipes.check_results_at_load(tmp_path, dry_run=True)
    assert len(lines) == 1 and "3 file(s) in the results' table folders were not written by " \
        "any job" in lines[0] and "(not now: a dry run)" in lines[0], lines
    monkeypatch.setattr(run_lock, "results_in_use", lambda results: True)
    assert "(not now: another run is using the folder)" in \
        job_recipes.check_results_at_load(tmp_path)[0]
    monkeypatch.undo()
    assert (folder / "notes.txt").exists()
    lines = job_recipes.check_results_at_load(tmp_path)
    assert len(lines) == 1 and lines[0].startswith("warning: moved 3 file(s) that no job wrote")
    strays = tmp_path / STATE_DIR / "strays" / f"predictions/{PART}"
    assert (strays / "notes.txt").read_text() == "my notes"
    assert sorted(p.name for p in folder.iterdir()) == [".j.r2.parquet.abc.tmp", "j.r0.parquet"]
    assert len(pd.read_parquet(tmp_path / "predictions")) == 3  # the job's rows, once
    (folder / "notes.txt").write_text("newer notes")  # moved again: the first copy is kept
    job_recipes.check_results_at_load(tmp_path)
    assert (strays / "notes.txt").read_text() == "my notes"
    assert (strays / "notes.txt.1").read_text() == "newer notes"
    assert job_recipes.check_results_at_load(tmp_path) == []


def test_verify_lists_problems_upstream_first(tmp_path):
    fit = job(tmp_path, "fit", "d/k/a", "predictions/a.parquet")
    job(tmp_path, "findings", "job", "aggregated/study/s.parquet")
    job(tmp_path, "pairwise_metrics", "d/k/a", "aggregated/summary/a.parquet")
    job(tmp_path, "prepare_dataset", "d", "datasets/d.parquet")
    del fit
    for rel in ("aggregated/study/s.parquet", "aggregated/summary/a.parquet",
                "predictions/a.parquet", "datasets/d.parquet"):
        with open(tmp_path / rel, "ab") as fh:
            fh.write(b"more")
    from modelvar.planning.outputs import RULES

    problems, _ = verify(tmp_path, rule_order=[r.name for r in RULES])  # as modelvar verify
    assert [p.rule for p in problems] == ["prepare_dataset", "fit", "pairwise_metrics",
                                          "findings"]


# ----------------------------------------------------------------------------- partitions
PART = "dataset=d/classifier=k"


def test_regrouped_tables_stay_until_their_replacements_exist_then_are_set_aside(tmp_path):
    old = f"predictions/{PART}/old.parquet"
    job(tmp_path, "fit", "d/k/old", old)
    content = (tmp_path / old).read_bytes()
    planned = [tmp_path / f"predictions/{PART}/new1.parquet",
               tmp_path / f"predictions/{PART}/new2.parquet"]
    job(tmp_path, "fit", "d/k/new1", planned[0].relative_to(tmp_path))
    # one replacement of two exists (an interrupted run): the old table stays
    aside = result_tables.set_aside_stale(tmp_path, planned, [("d", "k")])
    assert aside.jobs == [] and aside.foreign == []
    assert (tmp_path / old).exists()
    job(tmp_path, "fit", "d/k/new2", planned[1].relative_to(tmp_path))
    aside = result_tables.set_aside_stale(tmp_path, planned, [("d", "k")])
    assert aside.files == [tmp_path / old] and aside.foreign == []
    assert not (tmp_path / old).exists()
    assert [m.name for m, _ in manifests(tmp_path)] == ["new1.json", "new2.json"]
    # nothing deleted: the job and its table are kept, as they were
    kept = tmp_path / result_tables.SET_ASIDE_DIR / old
    assert kept.read_bytes() == content
    assert (tmp_path / result_tables.SET_ASIDE_DIR / STATE_DIR / MANIFEST_DIR / "fit" / "d" /
            "k" / "old.json").is_file()


def test_a_set_aside_job_planned_again_is_restored_with_its_times(tmp_path):
    """Fewer repeats set a repeat's jobs aside; the config that plans them again gets them back
    (files first, the manifest last), their times kept, so nothing is refitted (issue 66,
    P3)."""
    kept = f"predictions/{PART}/r3.parquet"
    manifest = job(tmp_path, "fit", "d/k/r3", kept)
    planned = [tmp_path / f"predictions/{PART}/r0.parquet"]
    job(tmp_path, "fit", "d/k/r0", planned[0].relative_to(tmp_path))
    old = time.time() - 5000
    os.utime(tmp_path / kept, (old, old))
    aside = result_tables.set_aside_stale(tmp_path, planned, [("d", "k")])
    assert aside.jobs == [manifest] and not manifest.exists()
    assert result_tables.planned_set_aside(tmp_path, [manifest]) == 1
    # a job planned again whose files are all set aside comes back
    assert result_tables.restore_set_aside(tmp_path, [manifest]) == [manifest.resolve()]
    assert manifest.is_file() and (tmp_path / kept).stat().st_mtime == pytest.approx(old)
    assert not (tmp_path / result_tables.SET_ASIDE_DIR / kept).exists()
    assert result_tables.planned_set_aside(tmp_path, [manifest]) == 0
    # one that is in place already (a rerun wrote it) is left alone
    result_tables.set_aside_stale(tmp_path, planned, [("d", "k")])
    job(tmp_path, "fit", "d/k/r3", kept)
    assert result_tables.restore_set_aside(tmp_path, [manifest]) == []
    assert (tmp_path / result_tables.SET_ASIDE_DIR / kept).is_file()


def test_a_users_file_in_a_partition_is_neither_read_nor_deleted(tmp_path):
    ours = f"aggregated/runs/{PART}/j.parquet"
    job(tmp_path, "fit", "d/k/j", ours)
    mine = tmp_path / f"aggregated/runs/{PART}/mine.parquet"
    pd.DataFrame({"x": [100, 101]}).to_parquet(mine)
    frame = result_tables.read_table(tmp_path, "runs")
    assert len(frame) == 3 and 100 not in set(frame["x"])  # pd.read_parquet would give 5
    aside = result_tables.set_aside_stale(tmp_path, [tmp_path / ours], [("d", "k")])
    assert aside.files == [] and aside.foreign == [mine] and mine.exists()
    assert (tmp_path / ours).resolve() in recorded_paths(tmp_path)
