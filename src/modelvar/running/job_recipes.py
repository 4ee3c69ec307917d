"""What decides each job's results, recorded in the results folder itself.

Snakemake decides that a job must run again from its records in the working directory's
``.snakemake/metadata`` (a job's params and code) and from file times. Both can fail a
reproducible study: the metadata is lost (a new clone, ``rm -rf .snakemake``, a second clone
driving the same results folder) and a file copied with its times (``cp -p``, ``rsync -a``,
``tar``, ``unzip``) can replace a dataset with older-dated content. So every job also has a
*recipe*, an input file ``RESULTS/.modelvar/recipes/RULE/WILDCARDS…/recipe.json`` that the
workflow (re)writes while it builds the jobs, and only when its content changes:

* the rule's params that do not come from file paths (config values, the plan's cells, the
  code version of the job's import closure);
* for a dataset read from a file, the sha256 of the file's content (:func:`source_digest`).

A changed recipe is a newer input, so Snakemake reruns the job, and by file times all that
depends on it, whatever its metadata says. Files dated in the future (a clock skew) would defeat
that comparison: :func:`clamp_future_times` sets those modelvar wrote to the present first.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from modelvar.table_files import STATE_DIR, sha256_file, write_text

RECIPE_DIR = "recipes"
DRY_RUN_DIR = "recipes-of-dry-runs"
#: In :data:`DRY_RUN_DIR`: the one input that a dry run gives every job without a recipe
NEW_IN_DRY_RUN = "new-jobs.txt"
SOURCE_DIGESTS = "source-digests.json"
#: Seconds a file's time may lie ahead of the clock before it counts as dated in the future
FUTURE_SLACK = 60.0


def recipe_path(results_dir: str | Path, rule: str, wildcards: dict[str, str]) -> Path:
    """``RESULTS/.modelvar/recipes/RULE/W1/W2/…/recipe.json`` (wildcard values in the rule's
    order): a folder per job, because Snakemake lists a folder once to learn which of its
    files exist, and a recipe written into an already listed folder would count as missing."""
    parts = [str(value) for value in wildcards.values()]
    return Path(results_dir, STATE_DIR, RECIPE_DIR, rule, *parts, "recipe.json")


def record_recipe(results_dir: str | Path, rule: str, wildcards: dict[str, str],
                  recipe: dict | Callable[[], dict], *, dry_run: bool = False) -> Path:
    """Write the job's recipe unless the file already holds it (its time then stays, and the
    job stays up to date); return its path. A dry run changes no recipe that exists: a changed
    one goes to :data:`DRY_RUN_DIR` instead (removed by the next load, see
    :func:`forget_dry_run`), so that the dry run shows the job as one to run, and a later run
    of the unchanged config still finds its jobs up to date. A dry run writes no missing recipe
    either: the job gets :data:`NEW_IN_DRY_RUN` instead, one file for all such jobs, written by
    the first of them and newer than any output (the load removed the last one), so the dry run
    shows the job as one to run, as the recipe a real run writes would. A full study's first dry
    run so creates one file, not a folder and a file per job.
    ``recipe`` may be a function giving the values, called only where they are compared or
    written (not for a dry run's new job: the workflow's recipes evaluate the rule's params)."""
    path = recipe_path(results_dir, rule, wildcards)
    missing = False
    try:
        recorded = path.read_text()
    except FileNotFoundError:
        if dry_run:
            return new_in_dry_run(results_dir)
        recorded, missing = None, True
    except (OSError, UnicodeDecodeError):
        recorded = None  # a new job (or one of an older modelvar): it runs in any case
    if callable(recipe):
        recipe = recipe()
    text = json.dumps({"rule": rule, "wildcards": wildcards, "recipe": recipe}, sort_keys=True,
                      indent=1, default=str) + "\n"
    if missing and _create(path, text):
        return path
    if recorded == text:
        return path
    if dry_run and recorded is not None:
        path = Path(results_dir, STATE_DIR, DRY_RUN_DIR, path.relative_to(
            Path(results_dir, STATE_DIR, RECIPE_DIR)))
    write_text(text, path)
    return path


def new_in_dry_run(results_dir: str | Path) -> Path:
    """The input a dry run gives the jobs that have no recipe yet (:func:`record_recipe`),
    created by the first of them. It lies alone in :data:`DRY_RUN_DIR`, which Snakemake lists
    only when it looks for this file, after the file is made."""
    path = Path(results_dir, STATE_DIR, DRY_RUN_DIR, NEW_IN_DRY_RUN)
    if path not in _MADE_IN_DRY_RUN:  # one check per process, not per job
        if not path.is_file():
            _create(path, "Jobs new to this results folder: a dry run writes no recipe of "
                    "theirs (modelvar.running.job_recipes); they run in any case.\n")
        _MADE_IN_DRY_RUN.add(path)
    return path


#: the :func:`new_in_dry_run` files this process made or found (:func:`forget_dry_run` empties it)
_MADE_IN_DRY_RUN: set[Path] = set()


def _create(path: Path, text: str) -> bool:
    """Write a new recipe in place, without the temporary file and rename of an atomic write
    (a third of the system calls: the first dry run of a large study writes thousands). Safe
    for a file that did not exist: a reader that finds it half-written sees another recipe,
    and rewriting a new job's recipe changes nothing (the job runs in any case). False when
    the file appeared meanwhile (another process made it: the caller compares)."""
    try:
        handle = open(path, "x")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = open(path, "x")
        except FileExistsError:
            return False
    except FileExistsError:
        return False
    with handle:
        handle.write(text)
    return True


def forget_dry_run(results_dir: str | Path) -> None:
    """Remove the recipes that earlier dry runs wrote aside."""
    shutil.rmtree(Path(results_dir, STATE_DIR, DRY_RUN_DIR), ignore_errors=True)
    _MADE_IN_DRY_RUN.clear()


def inputs_digest(inputs, results_dir: str | Path) -> dict:
    """The count and sha256 of a job's input files (``inputs``: paths, lists of paths, or a
    mapping of them, as an input function gives them), each named relative to
    ``results_dir``, sorted: what changes when the set of tables a job reads changes (fewer
    repeats), whatever the files' times."""
    import hashlib

    def flat(value):
        if isinstance(value, dict):
            for item in value.values():
                yield from flat(item)
        elif isinstance(value, list | tuple):
            for item in value:
                yield from flat(item)
        else:
            yield os.path.relpath(str(value), str(results_dir))

    names = sorted(flat(inputs))
    return {"count": len(names),
            "sha256": hashlib.sha256("\n".join(names).encode()).hexdigest()}


def source_digest(path: str | Path, results_dir: str | Path) -> str:
    """sha256 of a dataset file's content, cached in ``RESULTS/.modelvar/source-digests.json``
    by the file's identity: size, inode, modification and change times in ns. A copy that
    keeps the modification time still gets a new change time (no tool can set it), so a
    replaced file is always read again."""
    stat = os.stat(path)
    key = f"{stat.st_size}:{stat.st_ino}:{stat.st_mtime_ns}:{stat.st_ctime_ns}"
    cache_file = Path(results_dir, STATE_DIR, SOURCE_DIGESTS)
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    name = str(Path(path).resolve())
    entry = cache.get(name) if isinstance(cache, dict) else None
    if isinstance(entry, dict) and entry.get("key") == key:
        return entry["sha256"]
    digest = sha256_file(path)
    cache = cache if isinstance(cache, dict) else {}
    cache[name] = {"key": key, "sha256": digest}
    write_text(json.dumps(cache, sort_keys=True, indent=1) + "\n", cache_file)
    return digest


def clamp_future_times(results_dir: str | Path, own: Iterable[Path],
                       now: float | None = None) -> list[Path]:
    """Set the times of the files modelvar wrote — ``own`` (the files the job manifests
    record) and everything in ``RESULTS/.modelvar`` (manifests, recipes) — that lie more than
    :data:`FUTURE_SLACK` seconds ahead of the clock to the present; return them. Any other
    file (a user's, dated as the user chose) keeps its times."""
    now = time.time() if now is None else now
    state = Path(results_dir) / STATE_DIR
    ours = [Path(folder, name) for folder, _dirs, files in os.walk(state) for name in files] \
        if state.is_dir() else []
    moved = []
    for path in [*ours, *own]:
        try:
            if path.lstat().st_mtime > now + FUTURE_SLACK:
                os.utime(path, (now, now), follow_symlinks=False)
                moved.append(path)
        except FileNotFoundError:  # removed meanwhile, or a recorded file that is gone
            continue
    return moved


def check_results_at_load(results_dir: str | Path, *, dry_run: bool = False,
                          planned: list[str] | None = None) -> list[str]:
    """What every load of the workflow (its main process) does to the results folder before
    Snakemake compares anything, and what to tell the user of it: a job whose files are not
    what it wrote (missing, truncated, replaced, changed in place) loses its manifest, the
    output ``all`` asks for, so that the run redoes it (:func:`modelvar.table_files.
    forget_damaged`); the records of an earlier dry run are forgotten; files dated in the
    future are set to the present (:func:`clamp_future_times`); files in the results'
    partitions that no job wrote are moved to ``RESULTS/.modelvar/strays/``
    (:func:`modelvar.pipeline.result_tables.move_strays`), and the jobs of the ``planned``
    manifests that an earlier config set aside are moved back
    (:func:`modelvar.pipeline.result_tables.restore_set_aside`), by a run that executes and
    while no other run holds the folder; a dry run, or a load beside a running run, names
    them."""
    from modelvar.pipeline.result_tables import (
        SET_ASIDE_DIR,
        STRAYS_DIR,
        move_strays,
        planned_set_aside,
        restore_set_aside,
        stray_files,
    )
    from modelvar.running.run_lock import results_in_use
    from modelvar.table_files import forget_damaged, manifests, recorded_paths

    # the manifests are read once: a job forgotten as damaged still wrote its files (they are
    # redone, not strays)
    found = manifests(Path(results_dir).resolve())
    notes: list[str] = []
    lines = [f"missing or damaged output: {line}"
             for line in forget_damaged(results_dir, found, notes)] + notes
    forget_dry_run(results_dir)
    recorded = recorded_paths(results_dir, found)
    future = clamp_future_times(results_dir, recorded)
    if future:
        lines.append(f"warning: {len(future)} file(s) modelvar wrote in {results_dir} were "
                     f"dated in the future (clock skew?), e.g. {future[0]}; set to the present")
    busy = dry_run or results_in_use(results_dir)
    if planned:
        if busy and (waiting := planned_set_aside(results_dir, planned)):
            lines.append(f"{waiting} job(s) this config plans were set aside by an earlier "
                         f"config ({Path(results_dir) / SET_ASIDE_DIR}): a run restores them "
                         "instead of fitting them again (not now: "
                         f"{'a dry run' if dry_run else 'another run is using the folder'})")
        elif not busy and (restored := restore_set_aside(results_dir, planned)):
            lines.append(f"restored {len(restored)} job(s) that an earlier config had set "
                         f"aside, e.g. {restored[0].stem}: they are not fitted again")
            recorded = recorded_paths(results_dir)  # the restored files are the jobs' again
    strays = stray_files(results_dir, recorded)
    if strays:
        where = Path(results_dir) / STRAYS_DIR
        shown = ", ".join(str(p) for p in strays[:3]) + (", …" if len(strays) > 3 else "")
        if busy:
            why = "a dry run" if dry_run else "another run is using the folder"
            lines.append(f"warning: {len(strays)} file(s) in the results' table folders were "
                         f"not written by any job ({shown}); a run moves them to {where} "
                         f"(not now: {why}); pandas.read_parquet of a folder would read them")
        else:
            move_strays(results_dir, strays)
            lines.append(f"warning: moved {len(strays)} file(s) that no job wrote out of the "
                         f"results' table folders ({shown}) to {where}, where they are kept: "
                         "pandas.read_parquet of a folder would have read them")
    return lines
