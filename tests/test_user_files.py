"""Nothing of the user's is touched (issue 66): a run deletes, moves and re-times only what it
wrote; a config change deletes no fitted result; the safety checks run where they were meant
to; a problem is refused only where it cannot work, and said in one line, all at once."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import CONFIGS, SCHEMA_PATH, completed, job_counts, snakemake

# ------------------------------------------------------------------ S1: a folder of the user's


def _user_files(folder: Path) -> dict[Path, tuple[bytes, int]]:
    """A results folder that already holds a user's files: hidden temporaries of their own, a
    note dated in the future; returns each with its bytes and modification time."""
    future = time.time() + 86400
    files = {folder / ".draft.tmp": b"my draft", folder / "sub" / ".backup.tmp": b"backup",
             folder / "notes" / "plan.txt": b"to do"}
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.utime(folder / "notes" / "plan.txt", (future, future))
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}


@pytest.mark.workflow
def test_a_run_in_a_folder_of_the_users_touches_none_of_their_files(tmp_path):
    """S1: a results_dir that holds a user's files (``.draft.tmp``, ``sub/.backup.tmp``, a note
    dated in the future) is used as it is: the run removes only its own temporaries of an
    interrupted write (``.NAME.modelvar-RANDOM.tmp``), re-times nothing of the user's and
    writes no ``.gitignore`` into a folder it did not make; a folder it makes gets one."""
    folder = tmp_path / "mine"
    before = _user_files(folder)
    ours = folder / "predictions" / ".j.parquet.modelvar-abc123.tmp"  # a killed write's
    ours.parent.mkdir(parents=True)
    ours.write_bytes(b"half")
    config = tmp_path / "c.yaml"
    config.write_text((CONFIGS / "tiny.yaml").read_text().replace("results_dir: results",
                                                                  f"results_dir: {folder}"))
    proc = snakemake(tmp_path, config, "--cores", "2")
    for path, (data, mtime) in before.items():
        assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime, path
    assert not ours.exists()
    assert "removed 1 temporary file(s) of interrupted writes" in proc.stderr
    assert not (folder / ".gitignore").exists()  # not a folder modelvar made
    assert (folder / "findings" / "findings.html").is_file()
    fresh = tmp_path / "fresh.yaml"
    fresh.write_text(config.read_text().replace(f"results_dir: {folder}",
                                                f"results_dir: {tmp_path / 'made'}"))
    snakemake(tmp_path, fresh, "--cores", "2", "-n")  # a dry run makes and marks the folder
    snakemake(tmp_path, fresh, "--cores", "2", "--until", "prepare_dataset")
    assert (tmp_path / "made" / ".gitignore").read_text().endswith("*\n")


def test_only_modelvars_own_temporaries_are_removed(tmp_path):
    from modelvar.table_files import is_own_temporary, remove_stray_temporaries, write_text

    write_text("x", tmp_path / "a" / "done.txt")  # a write of modelvar's: no temporary left
    mine = [tmp_path / ".draft.tmp", tmp_path / "a" / ".b.parquet.1234.tmp"]
    ours = tmp_path / "a" / ".done.txt.modelvar-k2j3.tmp"
    for path in [*mine, ours]:
        path.write_text("x")
    assert remove_stray_temporaries(tmp_path) == [ours]
    assert all(p.exists() for p in mine)
    assert is_own_temporary(".summary.parquet.modelvar-a_b9.tmp")
    assert not is_own_temporary(".modelvar-x.tmp") and not is_own_temporary("x.modelvar-a.tmp")


# ------------------------------------------------------------------ P3: a config change
def _repeats(config: Path, n: int) -> None:
    body = yaml.safe_load(config.read_text())
    body["split"]["repeats"] = n
    config.write_text(yaml.safe_dump(body))


def test_a_restored_job_is_the_jobs_again_not_a_stray(tmp_path):
    """The load that restores a set-aside job leaves its files in place: they are recorded by
    the restored manifest, so the stray check after it does not move them (it once did, and
    the job was fitted again while its tables sat in .modelvar/strays)."""
    import numpy as np

    from modelvar.pipeline.result_tables import (
        SET_ASIDE_DIR,
        STRAYS_DIR,
        partition,
        set_aside_stale,
    )
    from modelvar.running.job_recipes import check_results_at_load
    from modelvar.table_files import STATE_DIR, Manifest

    results = tmp_path / "results"
    tables = {}
    for repeat in (0, 1):
        manifest = results / STATE_DIR / "manifests" / "fit" / "d" / "c" / f"j.r{repeat}.json"
        paths = [results / root / partition("d", "c") / f"j.r{repeat}.parquet"
                 for root in ("predictions", "aggregated/runs")]
        with Manifest(manifest, rule="fit") as m:
            for path in paths:
                m.write_parquet(pd.DataFrame({"x": np.arange(10.0) + repeat}), path)
        tables[repeat] = (manifest, paths)
    kept = {p: p.read_bytes() for p in tables[1][1]}
    aside = set_aside_stale(results, tables[0][1], [("d", "c")])  # a config of one repeat
    assert len(aside.jobs) == 1 and not any(p.exists() for p in tables[1][1])
    assert (results / SET_ASIDE_DIR / "predictions" / partition("d", "c") / "j.r1.parquet"
            ).is_file()
    lines = check_results_at_load(results, planned=[str(tables[r][0]) for r in (0, 1)])
    assert any("restored 1 job(s)" in line for line in lines), lines
    assert not any("no job wrote" in line for line in lines), lines
    assert {p: p.read_bytes() for p in kept} == kept and tables[1][0].is_file()
    assert not (results / STRAYS_DIR).exists()


@pytest.mark.workflow
def test_fewer_repeats_set_fits_aside_and_more_repeats_bring_them_back(tmp_path):
    """P3: a finished 3-repeat study set to 2 repeats sets the jobs of its batch of 3 repeats
    aside (it deleted their tables, saying "the config regrouped the fits") and fits a batch of
    2; its Findings describe 2 repeats, on the folder and on a ``cp -a`` copy of it (the
    findings job's recipe holds its inputs); set back to 3 repeats, the study refits nothing:
    the recorded batch comes back, its 6 jobs (2 fit, 2 metrics, 2 grouped) restored."""
    from modelvar.pipeline.result_tables import SET_ASIDE_DIR

    config = tmp_path / "c.yaml"
    config.write_text((CONFIGS / "tiny.yaml").read_text())
    _repeats(config, 3)
    snakemake(tmp_path, config, "--cores", "2")
    results = tmp_path / "results"
    third = sorted(results.glob("predictions/**/*.r0-2.parquet"))
    assert len(third) == 2  # a fit job of each classifier for its batch of 3 repeats
    content = {p: p.read_bytes() for p in third}
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copytree(results, copy / "results", copy_function=shutil.copy2, symlinks=True)
    shutil.copy(config, copy / "c.yaml")
    _repeats(config, 2)
    proc = snakemake(tmp_path, config, "--cores", "2")
    assert "set aside" in proc.stderr and "nothing was deleted" in proc.stderr
    for path, data in content.items():
        assert not path.exists()
        assert (results / SET_ASIDE_DIR / path.relative_to(results)).read_bytes() == data
    sources = pd.read_parquet(results / "aggregated/study/sources.parquet")
    assert set(sources["repeats"]) == {2}
    # the same change on a copy without Snakemake's records: the findings still follow it
    _repeats(copy / "c.yaml", 2)
    dry = snakemake(copy, copy / "c.yaml", "--cores", "2", "-n")
    assert job_counts(dry.stdout).get("findings") == 1, dry.stdout[-3000:]
    # back to 3 repeats: the set-aside jobs come back, nothing is fitted again (a dry run
    # restores nothing: it says that a run will)
    _repeats(config, 3)
    dry = snakemake(tmp_path, config, "--cores", "2", "-n")
    assert "6 job(s) this config plans were set aside by an earlier config" in dry.stderr
    proc = snakemake(tmp_path, config, "--cores", "2")
    assert "restored 6 job(s) that an earlier config had set aside" in proc.stderr
    ran = job_counts(proc.stderr)
    assert not {"fit", "pairwise_metrics", "grouped_metrics"} & set(ran)
    assert ran.get("findings") == 1
    assert all(p.read_bytes() == data for p, data in content.items())
    assert set(pd.read_parquet(results / "aggregated/study/sources.parquet")["repeats"]) == {3}


def _sequential_state(results: Path, schedule=(3, 3, 9)) -> None:
    from modelvar.study.rounds import ROUNDS_FILE, Block, Rounds, Schedule

    state = Rounds(2, {"vehicle|lr-sgd": Block(6, [3, 6])}, Schedule(*schedule))
    (results / ROUNDS_FILE).parent.mkdir(parents=True)
    (results / ROUNDS_FILE).write_text(state.to_json())


def test_a_fixed_config_or_another_schedule_on_a_sequential_study_is_refused(tmp_path):
    """Q6 and Q3: a fixed config pointed at a sequential study's folder, or a sequential one
    whose schedule is not the recorded one (a raised maximum after a block stopped), is
    named before any job, with what would be valid."""
    from modelvar.study.rounds import design_problem

    results = tmp_path / "results"
    _sequential_state(results)
    config = completed({"root_seed": 1, "results_dir": str(results),
                        "datasets": {"vehicle": {"source": "embedded"}},
                        "classifiers": ["lr-sgd"], "split": {"repeats": 3, "runs": 2}})
    problem = design_problem(config)
    assert "holds a sequential study" in problem and "round 2, 1 dataset × classifier" in problem
    assert "study of fixed repeats" in problem and "another results_dir" in problem
    config["sequential"].update(enabled=True, step=3, max_repeats=9)
    assert design_problem(config) is None  # the recorded schedule
    config["sequential"]["max_repeats"] = 30
    problem = design_problem(config)
    assert "planned at round 1 with split.repeats 3, sequential.step 3, " \
        "sequential.max_repeats 9" in problem and "sequential.max_repeats 30" in problem
    assert design_problem({**config, "results_dir": str(tmp_path / "none")}) is None


# ------------------------------------------------------------------ checks where meant
def test_run_sh_s_command_line_executes_jobs():
    """Strays moved, the load's memory check: run.sh always passes --report with
    --report-after-run, which runs the jobs first (it was treated as a dry run)."""
    from modelvar.running.workflow_config import executes_jobs

    assert executes_jobs(["--cores", "1", "--report", "r.html", "--report-after-run"])
    assert not executes_jobs(["--cores", "1", "--report", "r.html"])
    assert not executes_jobs(["--cores", "1", "-n"])


def _tiny(tmp_path, **changes) -> dict:
    from modelvar.planning.config_check import check_config, read_schema
    from modelvar.planning.plan import plan_study

    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["results_dir"] = str(tmp_path / "results")
    config.update(changes)
    study = check_config(config, read_schema(SCHEMA_PATH))
    return config, plan_study(config, study.schemas)


def test_the_memory_check_refuses_an_expected_need_and_warns_of_a_budget(tmp_path,
                                                                          monkeypatch):
    """U1: the tiny study was refused under ulimit -v 3000000 because the check added the
    findings job's declared 4,000 MB, while every job runs under it. The check compares the
    limit with what a job is expected to use; a budget above it is a warning naming it."""
    from modelvar.running import address_space

    config, plan = _tiny(tmp_path)
    startup, _ = address_space.startup_bytes(
        address_space.startup_modules(config["classifiers"]))
    expected, which = address_space.largest_job_mb(config, plan)
    budget, _ = address_space.largest_job_mb(config, plan, budget=True)
    assert budget == 4000 > expected and "expected to use" in which
    between = startup + (expected + 500) * 2**20
    monkeypatch.setattr(address_space, "address_space_limit", lambda: between)
    problem, warnings = address_space.address_space_check(config, plan)
    assert problem is None and len(warnings) == 1
    assert "below the scheduler budget of a findings job (resources.aggregate.mem_mb 4,000)" \
        in warnings[0] and "the run goes on" in warnings[0]
    monkeypatch.setattr(address_space, "address_space_limit",
                        lambda: startup + (expected - 100) * 2**20)
    problem, warnings = address_space.address_space_check(config, plan)
    assert problem.startswith("the address-space limit") and warnings == []


@pytest.mark.workflow
def test_the_address_space_check_comes_before_any_probe_fit(tmp_path):
    """A22: under ulimit -v 800000 a fresh study's probe fits ran before the check, and the
    only output was OpenBLAS's. Now the check comes first, on a plan made without probe fits:
    one line, no probe."""
    import resource
    import subprocess
    import sys

    config = tmp_path / "c.yaml"
    body = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    body["jobs"] = {"data_probe_seconds": 5}  # the plan probes the data
    config.write_text(yaml.safe_dump(body))

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (800_000 * 1024, 800_000 * 1024))

    from conftest import REPO

    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                           "--configfile", str(config), "--cores", "1"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, preexec_fn=limited)
    assert proc.returncode != 0
    assert "probing" not in proc.stderr, proc.stderr[-2000:]
    lines = [ln for ln in proc.stderr.splitlines() if "address-space limit" in ln]
    assert len(lines) == 1 and lines[0].startswith("modelvar: the address-space limit")


# ------------------------------------------------------------------ recorded caches
def test_a_data_factor_outside_the_plausible_range_is_probed_again(tmp_path, monkeypatch,
                                                                   capsys):
    """D3: a data-probes.json factor edited to 1e9 was trusted (24 fit jobs with 609,976-minute
    limits). A cached factor outside the plausible range is probed again; a measured one
    outside it is bounded by it."""
    from modelvar.planning import data_probe

    calls = []

    def fake(classifier, *args, **kwargs):
        calls.append(classifier)
        return data_probe.DataFactor(factor=2.0, rows=256, fits=2, cpu=0.5)

    monkeypatch.setattr(data_probe, "probe_factor", fake)
    config, plan = _tiny(tmp_path, jobs={"data_probe_seconds": 5})
    assert calls == ["lr-sgd", "svm-sgd"]  # probed once each, then cached
    cache = tmp_path / "results" / data_probe.CACHE
    body = json.loads(cache.read_text())
    body["vehicle/lr-sgd"]["factor"]["factor"] = 1e9
    cache.write_text(json.dumps(body))
    capsys.readouterr()
    _, plan = _tiny(tmp_path, jobs={"data_probe_seconds": 5})
    assert calls == ["lr-sgd", "svm-sgd", "lr-sgd"]  # the edited entry only
    assert plan.data_factors[("vehicle", "lr-sgd")] == 2.0
    assert "1e+09, outside [0.0333333, 30]: probed again" in capsys.readouterr().err
    monkeypatch.setattr(data_probe, "probe_factor", lambda *a, **k: data_probe.DataFactor(
        factor=480.0, rows=256, fits=1, cpu=0.1))
    (tmp_path / "results" / data_probe.CACHE).unlink()
    _, plan = _tiny(tmp_path, jobs={"data_probe_seconds": 5})
    assert plan.data_factors[("vehicle", "lr-sgd")] == data_probe.PLAUSIBLE_FACTOR


def test_a_config_change_of_cells_is_said_before_any_job(tmp_path):
    """A14c: a design change (both → factorial) regroups fit jobs that held the dropped cells
    beside others, whose fits run again: said before any job, with how many."""
    from modelvar.planning.outputs import design_change_lines, design_path
    from modelvar.study.design import ClassifierDesign, DatasetDesign

    config, plan = _tiny(tmp_path)
    clf = plan.datasets["vehicle"].classifiers["lr-sgd"]
    cells = sorted({c for job in clf.fit_jobs for c in job.cells})
    assert design_change_lines(config["results_dir"], config, plan) == []
    path = Path(design_path(config["results_dir"], "vehicle"))
    path.parent.mkdir(parents=True)
    old = cells + ["rel0p2_cnone_hnone_down100_seedfix"]
    path.write_text(DatasetDesign("vehicle", {"lr-sgd": ClassifierDesign(
        tuple(old), {c: ("one-at-a-time",) for c in old})}).to_json())
    lines = design_change_lines(config["results_dir"], config, plan)
    assert len(lines) == 1 and lines[0].startswith(
        "vehicle, lr-sgd: the config's cells differ from those the study fitted (1 dropped, "
        f"0 added): {len(clf.fit_jobs)} of its {len(clf.fit_jobs)} fit jobs run")


# ------------------------------------------------------------------ said once, said all
def test_every_config_problem_at_once_a_wrong_classifier_hides_no_dataset_problem(tmp_path):
    from modelvar.planning.config_check import ConfigProblems, check_config, read_schema

    csv = tmp_path / "m.csv"
    csv.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{'' if i == 5 else 'pq'[i % 2]}\n"
                                       for i in range(60)))
    config = {"root_seed": 1, "results_dir": str(tmp_path / "out"),
              "datasets": {"miss": {"source": "file", "path": str(csv), "target": "y"},
                           "gone": {"source": "file", "path": str(tmp_path / "no.csv"),
                                    "target": "y"}},
              "classifiers": ["lr-sgd", {"name": "rf", "estimator":
                                         "sklearn.ensemble.RandomForestClassifer"}],
              "split": {"repeats": 2, "runs": 2}}
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, read_schema(SCHEMA_PATH))
    said = str(caught.value)
    assert "the config has 3 problem(s)" in said
    assert "classifiers[1].estimator: 'sklearn.ensemble.RandomForestClassifer' does not " \
        "import" in said
    assert "datasets.miss: target 'y' has 1 missing value(s) in the first 60 rows" in said
    assert "datasets.gone: file" in said and "does not exist" in said


def test_a_header_only_file_and_an_index_column_are_said_in_one_line(tmp_path):
    from modelvar.data.errors import DatasetError
    from modelvar.data.readers import read_file
    from modelvar.data.schema import peek

    header = tmp_path / "h.csv"
    header.write_text("a,b,y\n")
    with pytest.raises(DatasetError, match=r"^h: .*h.csv has no data rows \(a header alone\)$"):
        peek("h", {"source": "file", "path": str(header), "target": "y"})
    indexed = tmp_path / "r.csv"  # R's write.csv: a blank-named row index first
    indexed.write_text('"","a","y"\n' + "".join(f'"{i + 1}",{i * 0.5},{"pq"[i % 2]}\n'
                                                for i in range(40)))
    spec = {"source": "file", "path": str(indexed), "target": "y"}
    schema = peek("r", spec)
    assert len(schema.warnings) == 1 and schema.warnings[0].startswith(
        "r: its first column 'Unnamed: 0' counts 1, 2, 3, … like a row index")
    assert "datasets.r.drop: ['Unnamed: 0']" in schema.warnings[0]
    dropped = {**spec, "drop": ["Unnamed: 0"]}
    assert peek("r", dropped).warnings == []
    assert "Unnamed: 0" not in read_file(indexed, "r", "y", spec=dropped).X.columns
    with pytest.raises(DatasetError, match="drop names the target 'y'"):
        read_file(indexed, "r", "y", spec={**spec, "drop": ["y"]})


def test_a_dotted_config_key_points_to_the_way_that_works():
    from modelvar.running.workflow_config import ConfigError, resolve

    with pytest.raises(ConfigError, match=r"--config split.repeats=4: --config sets top-level "
                       r"keys only .* more.yaml holding \{split: \{repeats: 4\}\}"):
        resolve(["--configfile", str(CONFIGS / "tiny.yaml"), "--config", "split.repeats=4"])
