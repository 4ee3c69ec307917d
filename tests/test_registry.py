"""The classifier registry (modelvar.models.registry): every list of classifiers derives from it."""

import re
from pathlib import Path

import pytest

from modelvar.models import registry
from modelvar.models.classifiers import BUILT_IN

REPO = Path(__file__).resolve().parents[1]
#: where a classifier is declared: its spec (and nowhere else in the code)
SPECS = REPO / "src/modelvar/models/classifiers.py"


def _code_files():
    yield from (REPO / "src").rglob("*.py")
    yield from (REPO / "rules").glob("*.smk")
    yield REPO / "Snakefile"
    yield from (REPO / "workflow").rglob("*.yaml")


def test_no_code_names_a_built_in_classifier_outside_its_spec():
    """A quoted name (``== "mlp"``, a dict key, a colour table) or a written-out list (a schema
    enum, a wildcard regex) anywhere but the specs is a hand-kept list."""
    names = "|".join(re.escape(n) for n in registry.built_in_names())
    quoted = re.compile(rf"""["']({names})["']""")
    listed = re.compile(rf"(?<![\w-])({names})\s*[|,]\s*({names})(?![\w-])")
    found = []
    for path in _code_files():
        if path == SPECS:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if quoted.search(line) or listed.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []


def test_the_scan_above_finds_a_hand_kept_list():
    names = "|".join(re.escape(n) for n in registry.built_in_names())
    listed = re.compile(rf"(?<![\w-])({names})\s*[|,]\s*({names})(?![\w-])")
    assert listed.search('classifier="lr-sgd|svm-sgd|xgb"')
    assert listed.search("enum: [lr-sgd, svm-sgd, xgb, mlp]")
    assert not listed.search("a classifier named lr-sgd-2, for one")


def test_wildcards_match_exactly_the_registered_classifiers():
    both = registry.wildcard(among=["lr-sgd", "mlp"])
    assert re.fullmatch(both, "lr-sgd") and re.fullmatch(both, "mlp")
    assert not re.fullmatch(both, "xgb") and not re.fullmatch(both, "lrXsgd")
    assert registry.wildcard(gpu=True, among=["lr-sgd", "mlp"]) == "mlp"
    never = registry.wildcard(gpu=True, among=["lr-sgd"])
    assert not any(re.fullmatch(never, s) for s in ("", "lr-sgd", "mlp"))
    rules = [registry.fit_rule(n) for n in registry.built_in_names()]
    assert rules == ["fit", "fit", "fit", "fit_mlp"]


def test_every_built_in_is_a_complete_spec():
    assert registry.built_in_names() == ("lr-sgd", "svm-sgd", "xgb", "mlp")
    colours = [s.colour for s in BUILT_IN]
    assert len(set(colours)) == len(colours) and None not in colours
    for spec in BUILT_IN:
        assert spec.built_in and spec.space and spec.memory_mb > 0
        assert all(re.fullmatch(registry.NAME_PATTERN, spec.name) for spec in BUILT_IN)
    with pytest.raises(ValueError, match="name of a built-in"):
        registry.register(BUILT_IN[0])
    with pytest.raises(ValueError, match=r"unknown classifier 'rf'; available: \['lr-sgd'"):
        registry.spec("rf")


# ------------------------------------------------------------------ the figure registry
def test_every_registered_figure_has_its_function_and_caption():
    from modelvar.plots import study
    from modelvar.study import figures

    for spec in figures.DATASET_FIGURES:
        assert callable(getattr(study, spec.name, None)), spec.name
        assert (REPO / "workflow" / "report" / f"{spec.name}.rst").is_file(), spec.name
    assert figures.figures_of_design("one-at-a-time") == [
        "sources_of_variance", "accuracy_by_source", "reproducibility_vs_chance"]
    assert len(figures.figures_of_design("both")) == len(figures.DATASET_FIGURES) - 1
    assert figures.tables_of(["per_sample_instability", "gross_accuracy_grid"]) == (
        "agreement", "runs")
    with pytest.raises(ValueError, match="unknown table"):
        figures.FigureSpec("x", "x", ("predictions",), "factorial")


def test_loading_the_workflow_imports_no_plotting_library(tmp_path):
    """A dry run's import trace (PYTHONPROFILEIMPORTTIME) holds no matplotlib or seaborn: the
    workflow reads the figure registry, not the plotting modules."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
         str(tmp_path), "--configfile", str(REPO / "tests/configs/tiny.yaml"), "-n"],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "modelvar.study.figures" in imported  # the trace covers the workflow's imports
    plotting = sorted(m for m in imported if m.split(".")[0] in ("matplotlib", "seaborn"))
    assert plotting == []


def _load_ours_within(tmp_path, code: str) -> str:
    """The standard output of ``snakemake --list-rules`` for a workflow that includes ours
    (the tiny test config) and then runs ``code``."""
    import os
    import subprocess
    import sys

    outer = tmp_path / "Snakefile"
    outer.write_text(f'include: "{REPO / "Snakefile"}"\n\n{code}')
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(outer), "--directory", str(tmp_path),
         "--configfile", str(REPO / "tests/configs/tiny.yaml"), "--list-rules"],
        capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_loading_the_workflow_freezes_what_it_made(tmp_path):
    """The Snakefile's last step moves what the load made (modules, config, plan, rules) out of
    the garbage collector's passes (make bench-dryrun measures the gain); a workflow that
    includes ours finds it frozen."""
    out = _load_ours_within(
        tmp_path, 'import gc\nprint("frozen objects:", gc.get_freeze_count())\n')
    frozen = int(out.split("frozen objects:")[1].split()[0])
    assert frozen > 50_000  # Snakemake's modules alone hold more


def test_the_rules_of_a_classifier_follow_its_gpu_setting():
    from modelvar.models.registry import fit_rule, on_gpu, tune_rule

    assert [(fit_rule(n), tune_rule(n)) for n in ("lr-sgd", "xgb", "mlp")] == [
        ("fit", "tune"), ("fit", "tune"), ("fit_mlp", "tune_gpu")]
    settings = {"xgb": {"gpu": True}, "mlp": {"gpu": False}}
    assert [on_gpu(n, settings) for n in ("lr-sgd", "xgb", "mlp")] == [False, True, False]
    assert (fit_rule("xgb", settings), tune_rule("xgb", settings)) == ("fit_mlp", "tune_gpu")
    assert (fit_rule("mlp", settings), tune_rule("mlp", settings)) == ("fit", "tune")


def test_the_workflow_functions_carry_their_parameters(tmp_path):
    """Snakemake asks for the parameters of every input, params and resources function of every
    job (~15,000 times in the full study's dry run): each function of our rules carries them
    (``modelvar.running.rule_functions.with_known_signature``), where Snakemake reads them
    instead of inspecting the function, and they are the function's own."""
    import json

    ours = (str(REPO / "rules"), str(REPO / "Snakefile"), str(REPO / "workflow"),
            str(REPO / "src" / "modelvar" / "running"))  # not Snakemake's (in .venv)
    out = _load_ours_within(
        tmp_path,
        "import inspect, json\n"
        "from snakemake.common import FUNC_OVERWRITE_PARAMS_ATTR, get_function_params\n"
        "found = []\n"
        "for rule in workflow.rules:\n"
        "    evaluators = [r._evaluator for r in rule.resources.values()]\n"
        "    for f in [*rule.input, *rule.params, *evaluators]:\n"
        "        code = getattr(f, '__code__', None)\n"
        f"        if code is None or not code.co_filename.startswith({ours!r}):\n"
        "            continue\n"
        "        carried = getattr(f, FUNC_OVERWRITE_PARAMS_ATTR, None)\n"
        "        found.append([rule.name, f.__qualname__, carried is not None and\n"
        "                      get_function_params(f) is carried and\n"
        "                      list(carried) == list(inspect.signature(f).parameters)])\n"
        "print('FOUND', json.dumps(found))\n")
    found = json.loads(out.split("FOUND ", 1)[1].splitlines()[0])
    assert len(found) > 30  # input functions, params lambdas, the plan's resources
    assert [f for f in found if not f[2]] == []
