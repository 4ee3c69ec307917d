"""Code versions from the import closure (issue 20): each rule's hash covers every modelvar module
its job imports, computed from the code (modelvar.running.code_hash), checked against what real
jobs import, for every rule; editing a module reruns exactly the jobs that import it."""

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import CONFIGS, REPO, copy_workflow, dry_run_jobs, job_counts, manifest_of, snakemake
from modelvar.planning import outputs
from modelvar.running.code_hash import code_version, import_closure, job_module, package_data

RULES = REPO / "rules"


def job_commands() -> tuple[str, ...]:
    return outputs.JOB_COMMANDS


def rule_blocks() -> dict[str, str]:
    """Each rule of the workflow's files (`use rule` copies too): its name → its text."""
    out = {}
    for path in RULES.glob("*.smk"):
        for block in re.split(r"\n(?=rule |use rule )", path.read_text()):
            name = re.match(r"(?:use rule \w+ as|rule) (\w+)", block)
            if name:
                out[name.group(1)] = block
    return out


def test_every_rule_is_in_the_table_of_rules_and_runs_its_command():
    """The rules' files agree with modelvar.planning.outputs.RULES: the same rules; each rule
    that runs `modelvar COMMAND` runs its table entry's command and carries its code version
    (code_of); its threads, resources, log, recipe and manifest come from helpers keyed by its
    own name, which read its group and command from the table (a `use rule` copy inherits its
    original's outputs). Every command is a module of modelvar.jobs."""
    blocks = rule_blocks()
    assert set(blocks) - {"all"} == {r.name for r in outputs.RULES}
    for entry in outputs.RULES:
        block = blocks[entry.name]
        command = re.search(r'modelvar_job(?:_from_file)?\(\s*"([a-z-]+) ', block)
        if block.startswith("use rule"):  # a copy: its command and outputs are its original's
            assert command is None, entry.name
        else:
            assert command and command.group(1) == entry.command, entry.name
            assert f'code=code_of("{entry.name}")' in block, entry.name
            assert f'manifest=manifest_path("{entry.name}")' in block, entry.name
        # every helper is keyed by the rule's own name; the table gives its group and command
        assert f'threads: threads_of("{entry.name}")' in block, entry.name
        assert re.search(rf'resources_of\(\s*"{entry.name}"', block), entry.name
        assert f'log_of("{entry.name}")' in block, entry.name
        named = set(re.findall(r'(?:threads_of|resources_of|code_of|log_of|recipe_of|'
                               r'manifest_path)\(\s*"(\w+)"', block))
        assert named == {entry.name}, (entry.name, named)
    for command in job_commands():
        assert import_closure(job_module(command))


def test_the_closure_follows_lazy_and_relative_imports_and_leaves_out_the_parser():
    fit = import_closure("modelvar.jobs.fit")
    # modules the issue found unhashed: the class order, the table files, the data errors
    for module in ("modelvar.labels", "modelvar.table_files", "modelvar.data.errors",
                   "modelvar.pipeline.fitting", "modelvar.models.mlp"):
        assert module in fit, module
    assert "modelvar.cli" not in fit and "modelvar.plots" not in fit
    prepare = import_closure("modelvar.jobs.prepare")
    # `from modelvar.data import load` loads modelvar.data.sources through __getattr__
    assert "modelvar.data.sources" in prepare and "modelvar.data.schema" in prepare
    assert "modelvar.models.mlp" not in prepare
    assert any(p.name == "registry.json" for p in package_data("modelvar.data.sources"))
    assert "modelvar.metrics.grouped" not in import_closure("modelvar.jobs.pairwise")


def _job_imports(log: Path) -> tuple[str | None, set[str]]:
    """(the job module, the modelvar modules imported from the start of its import on) of a
    job's log written under PYTHONPROFILEIMPORTTIME: a module's line comes when its import
    ends, after the more indented lines of what it imported, so the job's part of the log
    starts at the first of those; what came before is the argument parser's."""
    entries = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            field = line.rsplit("|", 1)[1]
            entries.append((len(field) - len(field.lstrip()), field.strip()))
    index = next((i for i, (_, name) in enumerate(entries)
                  if re.fullmatch(r"modelvar\.jobs\.\w+", name)
                  and name not in ("modelvar.jobs.common", "modelvar.jobs.metrics_job")), None)
    if index is None:
        return None, set()
    start = index
    while start > 0 and entries[start - 1][0] > entries[index][0]:
        start -= 1
    return entries[index][1], {name for _, name in entries[start:]
                               if name.split(".")[0] == "modelvar"}


@pytest.fixture(scope="module")
def every_rule_run(tmp_path_factory):
    """The working folder of a finished run of every rule (tests/configs/every-rule.yaml), its
    jobs' logs with Python's import log (PYTHONPROFILEIMPORTTIME)."""
    import yaml
    from tests.test_openml_source import serving
    from tests.test_probe_jobs import ANNEAL_PROFILE

    work = tmp_path_factory.mktemp("every-rule")
    # plus an OpenML dataset (a loopback stand-in serves it): its probe jobs run too
    config = yaml.safe_load((CONFIGS / "every-rule.yaml").read_text())
    config["datasets"]["anneal"] = {"source": "openml", "data_id": 2, "version": 1,
                                    "retries": 1, "profile": ANNEAL_PROFILE}
    config["jobs"] = {"data_probe_seconds": 1}
    with serving() as server, pytest.MonkeyPatch.context() as patch:
        config["openml"] = {"server": server.api, "cache_dir": str(work / "openml-cache")}
        (work / "every-rule.yaml").write_text(yaml.safe_dump(config))
        patch.setenv("PYTHONPROFILEIMPORTTIME", "1")
        snakemake(work, work / "every-rule.yaml", "--cores", "2", timeout=900)
    return work


@pytest.mark.workflow
def test_every_job_imports_only_modules_of_its_closure(every_rule_run):
    """The oracle: Python's own import log (PYTHONPROFILEIMPORTTIME) of every job of a
    workflow that runs every rule; each job's modelvar modules lie in its job module's static
    closure (the parser modelvar.cli and modelvar.__main__ aside)."""
    seen: dict[str, int] = {}
    for log in (every_rule_run / "results" / "logs").rglob("*.log"):
        job, imported = _job_imports(log)
        if job is None:
            continue
        command = job.removeprefix("modelvar.jobs.").replace("_", "-")
        outside = imported - set(import_closure(job))
        assert outside == set(), f"{log}: {sorted(outside)} not in the closure of {job}"
        seen[command] = seen.get(command, 0) + 1
    assert set(seen) == set(job_commands()), seen


@pytest.mark.workflow
def test_every_manifest_records_every_output_of_its_job(every_rule_run):
    """`all` asks only for the jobs' manifests (tests/test_workflow.py): a job's output that
    no later job reads is found missing through its manifest, so every job of every rule
    records each of its outputs there, with the size it wrote."""
    results = every_rule_run / "results"
    listing = snakemake(every_rule_run, every_rule_run / "every-rule.yaml", "-n", "--forceall",
                        "--cores", "1").stdout
    rules, unrecorded = set(), {}
    for rule, _, written in dry_run_jobs(listing):
        if rule == "all":
            continue
        manifest = manifest_of(written)
        body = json.loads((every_rule_run / manifest).read_text())
        recorded = {record["path"]: record["bytes"] for record in body["files"]}
        expected = {str(Path(f).relative_to("results")) for f in written if f != manifest}
        if set(recorded) != expected:
            unrecorded[manifest] = sorted(expected ^ set(recorded))
        assert all((results / path).stat().st_size == size for path, size in recorded.items())
        assert body["rule"] == rule
        rules.add(rule)
    assert unrecorded == {}
    assert len(rules) >= 14, rules


@pytest.fixture
def finished_copy(tmp_path):
    """A copy of the workflow, and the tiny study run with it."""
    workflow = copy_workflow(tmp_path / "workflow")
    work = tmp_path / "work"
    snakemake(work, CONFIGS / "tiny.yaml", "--cores", "2",
              snakefile=workflow / "Snakefile")
    return workflow, work


def _dry(workflow: Path, work: Path) -> dict[str, int]:
    proc = snakemake(work, CONFIGS / "tiny.yaml", "-n", "--cores", "1",
                     snakefile=workflow / "Snakefile")
    text = proc.stdout + proc.stderr
    return {} if "Nothing to be done" in text else job_counts(proc.stdout)


@pytest.mark.workflow
def test_an_edit_reruns_exactly_the_jobs_that_import_the_module(finished_copy):
    workflow, work = finished_copy
    src = workflow / "src" / "modelvar"

    def edit(rel: str, added: str = "\nEDITED_BY_A_TEST = 1\n") -> dict[str, int]:
        path = src / rel
        original = path.read_text()
        path.write_text(original + added)
        try:
            return _dry(workflow, work)
        finally:
            path.write_text(original)

    # a comment changes no result: nothing reruns, even in a module every job imports
    assert edit("labels.py", "\n# edited by a test\n") == {}
    # labels.py orders every dataset's classes: every job that imports it reruns
    labels = edit("labels.py")
    assert labels.get("prepare_dataset") == 1 and labels.get("fit") == 2, labels
    # the argument parser and a module no job imports: nothing reruns
    assert edit("cli.py") == {}
    assert edit("planning/plan_report.py") == {}
    # the grouped tables: only grouped-metrics jobs (and what reads their tables)
    grouped = edit("pipeline/grouped_tables.py")
    assert "fit" not in grouped and "pairwise_metrics" not in grouped
    assert grouped.get("grouped_metrics") == 2, grouped  # 2 classifiers x 1 batch of repeats
    # the code versions the workflow computes change exactly for the commands that import it
    for command in job_commands():
        closure = import_closure(job_module(command), src)
        before = code_version(command, src)
        path = src / "pipeline" / "grouped_tables.py"
        original = path.read_text()
        path.write_text(original + "\nEDITED = True\n")
        import_closure.cache_clear()
        try:
            changed = code_version(command, src) != before
        finally:
            path.write_text(original)
            import_closure.cache_clear()
        assert changed == ("modelvar.pipeline.grouped_tables" in closure), command


def test_the_facts_of_parsed_sources_are_cached_by_their_content(tmp_path, monkeypatch):
    """A later process reads each module's imports from the cache instead of parsing it; an
    edited module is parsed again (its new text has a new digest) and its new import counts; a
    damaged cache file or entry counts as absent."""
    from modelvar.running import code_hash

    root = tmp_path / "modelvar"
    shutil.copytree(REPO / "src" / "modelvar", root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("MODELVAR_CACHE_DIR", str(tmp_path / "cache"))
    parse = code_hash.source_facts

    def new_process(parser=parse):
        monkeypatch.setattr(code_hash, "_CACHE", code_hash._FactsCache())
        monkeypatch.setattr(code_hash, "source_facts", parser)
        for cached in (code_hash._facts_of, code_hash._imports_of, import_closure):
            cached.cache_clear()

    def no_parsing(text):
        raise AssertionError("parsed a source whose facts are cached")

    new_process()
    before = {c: code_version(c, root) for c in ("fit", "pairwise")}
    cache_file = code_hash.facts_cache_file()
    entries = json.loads(cache_file.read_text())
    assert len(entries) == len(set(import_closure(job_module("fit"), root))
                               | set(import_closure(job_module("pairwise"), root)))

    new_process(no_parsing)
    assert {c: code_version(c, root) for c in before} == before

    # an edit: labels.py now imports the grouped tables, which fit did not import before
    assert "modelvar.pipeline.grouped_tables" not in import_closure("modelvar.jobs.fit", root)
    labels = root / "labels.py"
    labels.write_text(labels.read_text() + "\nimport modelvar.pipeline.grouped_tables\n")
    new_process()
    assert "modelvar.pipeline.grouped_tables" in import_closure("modelvar.jobs.fit", root)
    assert code_version("fit", root) != before["fit"]

    # a damaged entry (the right digest, facts of the wrong shape) is parsed again ...
    digest = hashlib.sha256(labels.read_bytes()).hexdigest()
    entries = json.loads(cache_file.read_text())
    entries[digest]["imports"] = "modelvar.labels"
    cache_file.write_text(json.dumps(entries))
    edited = code_version("fit", root)
    new_process()
    assert code_version("fit", root) == edited
    assert json.loads(cache_file.read_text())[digest]["imports"] != "modelvar.labels"
    # ... and a file that is not JSON is none
    cache_file.write_text("{not json")
    new_process()
    assert code_version("fit", root) == edited
    new_process(no_parsing)
    assert code_version("fit", root) == edited
    # an edit of code_hash.py itself (what the facts are) starts a new cache
    monkeypatch.setattr(code_hash, "_THIS_MODULE_DIGEST", "0" * 16)
    assert code_hash.facts_cache_file() != cache_file
    new_process(no_parsing)
    with pytest.raises(AssertionError, match="parsed a source"):
        code_version("fit", root)


def test_code_versions_without_a_writable_cache_or_a_home(tmp_path, monkeypatch):
    """Where the cache cannot be written (a read-only home on a cluster node, a path that is a
    file) or no home is known, every process parses: the same code versions, no error."""
    from modelvar.running import code_hash

    def fresh():
        monkeypatch.setattr(code_hash, "_CACHE", code_hash._FactsCache())
        for cached in (code_hash._facts_of, code_hash._imports_of, import_closure):
            cached.cache_clear()

    expected = code_version("fit")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MODELVAR_CACHE_DIR", str(blocker / "cache"))
    fresh()
    assert code_version("fit") == expected
    assert not list(tmp_path.glob("**/*.tmp"))
    monkeypatch.delenv("MODELVAR_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(code_hash.Path, "home", staticmethod(no_home))
    assert code_hash.facts_cache_file() is None
    fresh()
    assert code_version("fit") == expected


def test_a_jobs_help_text_is_no_part_of_its_code_version_and_its_defaults_are(tmp_path):
    """Issue 69: each job module declares its own arguments (modelvar.cli builds the parser
    from them); their help texts change no result (NOT_RESULTS), a default does."""
    from modelvar.cli import build_parser, job_commands

    root = tmp_path / "modelvar"
    shutil.copytree(REPO / "src" / "modelvar", root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = {c: code_version(c, root) for c in ("tune", "fit")}
    tune = root / "jobs" / "tune.py"
    original = tune.read_text()
    assert 'help="stratified cross-validation folds"' in original
    tune.write_text(original.replace('help="stratified cross-validation folds"',
                                     'help="folds of the stratified cross-validation"'))
    import_closure.cache_clear()
    assert {c: code_version(c, root) for c in ("tune", "fit")} == before
    tune.write_text(original.replace('"--folds", type=int, default=3',
                                     '"--folds", type=int, default=5'))
    import_closure.cache_clear()
    after = {c: code_version(c, root) for c in ("tune", "fit")}
    import_closure.cache_clear()
    assert after["tune"] != before["tune"] and after["fit"] == before["fit"]
    # every job command is declared by its module, and the parser has each of them
    commands = job_commands()
    assert {module for module, _ in commands.values()} == {
        job_module(c).rsplit(".", 1)[1] for c in outputs.JOB_COMMANDS}
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands) <= set(sub.choices)
