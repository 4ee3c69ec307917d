"""Checking a workflow config before any job runs: every problem at once, each with its key path.

The workflow calls :func:`check_config` while it loads (dry runs included), so a bad config or a
bad dataset stops the run before its first job, with one message listing everything wrong:

1. **Schema** (``workflow/schemas/config.schema.yaml``, JSON Schema): every violation, as
   ``key.path: what is wrong`` with the allowed values or keys, never a schema dump. A ``oneOf``
   (dataset sources, perturbation levels) is resolved to the alternative the entry means (by its
   ``source``, or by its key such as ``sig``), and that alternative's errors are reported.
   Whole numbers written as floats where an integer is expected (``repeats: 2.0``) become ints.
   The ``perturbation`` families' levels are checked against their grammars in
   :mod:`modelvar.study.families` (:func:`workflow_schema`), and a family the config leaves
   out gets its control level.
2. **The study**: each dataset is peeked (:mod:`modelvar.data.schema`: missing or unreadable
   files, unsupported types, absent target or categorical columns, undeclared non-numeric columns,
   unknown embedded names); grouping columns exist and are categorical; ``classifier_settings``
   name registered classifiers and known hyperparameters with values in range, ``epochs`` only
   for classifiers that train for epochs; classes too rare for the split (where the data is
   already known) when ``split.rare_classes`` is ``stop``. Classifier names are checked against
   the registry (:mod:`modelvar.models.registry`) right after the schema.
3. **Warnings** for degenerate settings, saying what they imply (``test_fraction: 0.99``: a
   handful of training rows; ``downsample: 0.01``: classes with a single training sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from modelvar.data.canonical import DatasetError
from modelvar.data.errors import not_found_message
from modelvar.data.schema import DatasetSchema, peek
from modelvar.data.splits import kept_rare_classes_warning, rare_classes, training_rows
from modelvar.labels import sort_labels
from modelvar.planning.plan import SPEEDUP_SETTINGS
from modelvar.study.groups import CLASS_GROUPING, grouping_columns

#: below these sizes results are warned about (too few rows to learn from or to measure on)
MIN_TRAIN_ROWS = 30
MIN_TEST_ROWS = 30


class ConfigProblems(ValueError):
    """The config (or a dataset it names) has problems; the message lists them all."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"the config has {len(problems)} problem(s) (validation failed; "
                         f"nothing was run):\n{lines}")


@dataclass
class CheckedStudy:
    schemas: dict[str, DatasetSchema] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- 1. schema
def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "config"


def _branch_summary(branch: dict) -> str:
    if "const" in branch:
        return repr(branch["const"])
    props = branch.get("properties", {})
    consts = {k: v["const"] for k, v in props.items() if "const" in v}
    if consts:
        return ", ".join(f"{k}: {v}" for k, v in consts.items())
    required = branch.get("required", [])
    return "{" + ", ".join(f"{k}: …" for k in required) + "}" if required else str(branch)


def _chosen_branch(instance, branches: list[dict]) -> int | None:
    """The alternative an entry means: by its const-valued keys (``source: file``), else by its
    required keys (``{sig: 9}`` means the ``sig`` alternative), else the only alternative that
    is a mapping (a classifier's declaration, beside a name)."""
    if not isinstance(instance, dict):
        return None
    by_const = [i for i, b in enumerate(branches)
                if any("const" in v for v in b.get("properties", {}).values())]
    if by_const:
        hits = [i for i in by_const
                if all(instance.get(k) == v["const"]
                       for k, v in branches[i].get("properties", {}).items() if "const" in v)]
        return hits[0] if len(hits) == 1 else None
    hits = [i for i, b in enumerate(branches)
            if b.get("required") and all(k in instance for k in b["required"])]
    if len(hits) == 1:
        return hits[0]
    objects = [i for i, b in enumerate(branches) if b.get("type") == "object"]
    return objects[0] if len(objects) == 1 else None  # the only alternative a mapping can be


def _describe(error) -> list[str]:
    where = _path(error.absolute_path)
    if error.validator in ("oneOf", "anyOf"):
        branches = error.validator_value
        chosen = _chosen_branch(error.instance, branches)
        if chosen is not None:
            inner = [e for e in error.context if e.relative_schema_path[0] == chosen]
            if inner:
                return [m for e in inner for m in _describe(e)]
        options = "; ".join(_branch_summary(b) for b in branches)
        return [f"{where}: {error.instance!r} is not valid here; expected one of: {options}"]
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) \
            else []
        return [f"{where}: unknown key {k!r}; allowed keys: {allowed}" for k in extra] or [
            f"{where}: {error.message}"]
    if error.validator == "required":
        return [f"{where}: missing key {error.message.split(' ')[0]}"]
    return [f"{where}: {error.message}"]


def workflow_schema(schema: dict) -> dict:
    """The config schema with what the registries declare: every perturbation family's level
    grammar (:func:`modelvar.study.families.schema_properties`) under ``perturbation``, whose
    other keys are then unknown; the pairwise metrics (:mod:`modelvar.metrics.registry`) that
    ``grouped.metrics`` may name; the class distributions
    (:data:`modelvar.simulation.class_distributions.DISTRIBUTIONS`) that
    ``simulation.distributions`` may name, all of them by default. The schema file holds the
    rest; applying this twice is harmless."""
    import copy

    from modelvar.metrics import registry as metrics
    from modelvar.simulation.class_distributions import DISTRIBUTIONS
    from modelvar.study import families

    out = copy.deepcopy(schema)
    section = out["properties"]["perturbation"]
    section["properties"] = {**families.schema_properties(), **section.get("properties", {})}
    section["additionalProperties"] = False
    grouped = out["properties"]["grouped"]["properties"]["metrics"]
    grouped["items"] = {"enum": list(metrics.names())}
    distributions = out["properties"]["simulation"]["properties"]["distributions"]
    distributions["items"] = {"enum": list(DISTRIBUTIONS)}
    distributions["default"] = list(DISTRIBUTIONS)
    return out


def fill_family_defaults(config: dict) -> None:
    """Give every family that the config's ``perturbation`` does not list its control level
    (:func:`fill_schema_defaults` does it for the schema file's own defaults)."""
    from modelvar.study import families

    section = config.setdefault("perturbation", {})
    for name, levels in families.defaults().items():
        section.setdefault(name, levels)


def safe_yaml_loader():
    """PyYAML's safe loader (no code runs), parsed by libyaml where PyYAML has it: the same
    values as the pure-Python parser, ~8x faster (each load of the workflow reads its config
    files and the schema)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_schema(path: str | Path) -> dict:
    """The config schema file (YAML), read with :func:`safe_yaml_loader` (libyaml where PyYAML
    has it: every load of the workflow, each dry run and each job step, reads it)."""
    import yaml

    return yaml.load(Path(path).read_text(), Loader=safe_yaml_loader())


def fill_schema_defaults(config: dict, schema: dict) -> None:
    """Fill in the ``default`` of every property the config leaves out, in place, as Snakemake's
    ``validate(config, schema, set_default=True)`` does: its validator (jsonschema's recipe,
    which Snakemake's cites) sets a ``properties`` keyword's missing defaults before checking
    the properties, so the properties of a default get theirs too, and so does every branch of
    a ``oneOf`` that is tried. Problems are :func:`schema_problems`' to report: a config that
    fails the schema still gets its defaults. Here the parsed schema is reused: Snakemake's
    reads the schema file again at each load of the workflow."""
    import copy

    from jsonschema import Draft202012Validator, validators

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, dict) and "default" in subschema:
                    if name not in instance:  # a copy: the config never shares the schema's
                        instance[name] = copy.deepcopy(subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    filling = validators.extend(Draft202012Validator, {"properties": set_defaults})
    for _ in filling(schema).iter_errors(config):  # a config that fails still gets its defaults
        pass


def schema_problems(config: dict, schema: dict) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(workflow_schema(schema))
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    return [m for e in errors for m in _describe(e)]


def coerce_integers(instance, schema: dict, root: dict | None = None):
    """Return ``instance`` with integral floats turned into ints wherever the schema expects an
    integer (``repeats: 2.0`` → 2); the instance must already be valid."""
    root = root or schema
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if schema.get("type") == "integer" and isinstance(instance, float) and instance.is_integer():
        return int(instance)
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, []):
            if isinstance(instance, dict) and set(branch.get("required", [])) <= set(instance):
                instance = coerce_integers(instance, branch, root)
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for k, v in instance.items():
            sub = props.get(k, extra if isinstance(extra, dict) else None)
            if sub is not None:
                instance[k] = coerce_integers(v, sub, root)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        instance[:] = [coerce_integers(v, schema["items"], root) for v in instance]
    return instance


# ----------------------------------------------------------------------------- 2. the study
def min_class_size(config: dict) -> int:
    """The smallest class the split needs: 2 (one test, one training row); with tuning, enough
    that the tuning pool holds one per cross-validation fold."""
    need = 2
    if config["hparams"] == "tuned":
        folds = config["tuning"]["folds"]
        test_fraction = config["split"]["test_fraction"]
        need = max(need, math.ceil(folds / (1 - test_fraction)))
    return need


def _hparam_problems(config: dict) -> list[str]:
    from modelvar.models import registry

    problems = []
    for clf, settings in config["classifier_settings"].items():
        where = f"classifier_settings.{clf}"
        if clf not in registry.names():
            problems.append(f"{where}: {clf!r} is not a classifier; known: "
                            f"{list(registry.names())}")
            continue
        spec = registry.spec(clf)
        if "epochs" in settings and spec.epochs is None:
            trains = [n for n in registry.names() if registry.spec(n).epochs is not None]
            problems.append(f"{where}.epochs: {clf} does not train for epochs (only "
                            f"{', '.join(trains)})")
        if settings.get("gpu") and not spec.gpu_capable:
            can = [n for n in registry.names() if registry.spec(n).gpu_capable]
            own = "" if clf in registry.built_in_names() else (
                "; a classifier of your own can when its declaration names the constructor "
                "argument the device goes to, `device_param`")
            problems.append(f"{where}.gpu: {clf} cannot fit on a GPU (those that can: "
                            f"{', '.join(can)}){own}")
        if "gpu_speedup_alone" in settings and not spec.batched:
            problems.append(f"{where}.gpu_speedup_alone: {clf} fits one run at a time in its fit "
                            "jobs too, so its gpu_speedup already says it; this key is for a "
                            "classifier whose fit jobs train their runs together (mlp)")
        hps = {h.name: h for h in spec.space}
        for name, value in settings.get("hparams", {}).items():
            h = hps.get(name)
            if h is None:
                problems.append(f"{where}.hparams.{name}: unknown hyperparameter of {clf}; "
                                f"known: {sorted(hps)}")
            elif problem := h.problem(value):
                problems.append(f"{where}.hparams.{name}: {problem}")
    return problems


def _grouping_problems(config: dict, schemas: dict[str, DatasetSchema]) -> list[str]:
    problems = []
    for dataset, groupings in config["grouped"]["by"].items():
        where = f"grouped.by.{dataset}"
        if dataset not in config["datasets"]:
            problems.append(f"{where}: {dataset!r} is not one of the study's datasets "
                            f"{sorted(config['datasets'])}")
            continue
        schema = schemas.get(dataset)
        if schema is None or not schema.known:
            continue
        categorical = schema.columns_of("categorical")
        for grouping in groupings:
            for column in grouping_columns(grouping):
                if column == CLASS_GROUPING:
                    continue
                if column not in schema.feature_types:
                    problems.append(f"{where}: " + not_found_message(
                        f"in {dataset}, the categorical column", column,
                        [*categorical, CLASS_GROUPING]))
                elif column not in categorical:
                    problems.append(f"{where}: column {column!r} is numeric: group by a "
                                    f"categorical column {categorical} or {CLASS_GROUPING!r}")
    return problems


def study_problems(config: dict, *, hparams: bool = True) -> tuple[list[str], CheckedStudy]:
    """The datasets' problems (each peeked), the groupings', the classifiers' hyperparameter
    settings' (with ``hparams``: where every classifier's declaration is sound) and the
    sequential schedule's."""
    study = CheckedStudy()
    problems: list[str] = []
    cache = config["openml"]["cache_dir"]
    stop_rare = config["split"]["rare_classes"] == "stop"
    need = min_class_size(config)
    for name, spec in config["datasets"].items():
        try:
            schema = peek(name, spec, openml_cache=cache)
        except DatasetError as exc:
            problems.append(f"datasets.{name}: {str(exc).removeprefix(f'{name}: ')}")
            continue
        study.schemas[name] = schema
        rare = rare_classes(schema.class_counts or {}, need)
        if rare and stop_rare:
            problems.append(
                f"datasets.{name}: class(es) {rare} have fewer than the {need} samples the split "
                "needs; set split.rare_classes: keep to keep them in every training pool (never "
                "tested), or fix the data")
    problems += _grouping_problems(config, study.schemas)
    problems += _hparam_problems(config) if hparams else []
    sequential = config["sequential"]
    if sequential["enabled"] and sequential["max_repeats"] < config["split"]["repeats"]:
        problems.append(f"sequential.max_repeats: {sequential['max_repeats']} is below the first "
                        f"round's repeats (split.repeats: {config['split']['repeats']})")
    return problems, study


# ----------------------------------------------------------------------------- 3. warnings
def unseeded_warnings(config: dict) -> list[str]:
    """A classifier that takes no model seed (a declared one without ``seed_param``) is the
    same model with a seed per run as with a fixed one: say so when the study varies it (the
    plan collapses its per-run cells, :func:`modelvar.study.design.classifier_design`)."""
    from modelvar.models import registry

    levels = config["perturbation"]["model_seed"]
    if "per-run" not in levels:
        return []
    return [f"{name}: it takes no model seed (no seed_param), so model seed per run cannot act "
            "on it: its per-run levels collapse to a fixed seed (no duplicate fits)"
            for name in registry.classifier_names(config) if not registry.spec(name).seeded]


def study_warnings(config: dict, study: CheckedStudy) -> list[str]:
    split = config["split"]
    test_fraction = split["test_fraction"]
    smallest = min(config["perturbation"]["downsample"])
    warnings = unseeded_warnings(config)
    for name, schema in study.schemas.items():
        warnings += schema.warnings
        if schema.n_rows is None:
            continue
        n_test = schema.n_rows * test_fraction
        n_train = schema.n_rows * (1 - test_fraction) * smallest
        if n_train < MIN_TRAIN_ROWS:
            warnings.append(
                f"{name}: test_fraction {test_fraction} and downsample {smallest} leave about "
                f"{n_train:.0f} training rows per run (of {schema.n_rows})")
        if n_test < MIN_TEST_ROWS:
            warnings.append(f"{name}: test_fraction {test_fraction} gives test sets of about "
                            f"{n_test:.0f} rows: metrics on them vary a lot between repeats")
        need = min_class_size(config)
        rare = rare_classes(schema.class_counts or {}, need)
        if rare and split["rare_classes"] == "keep":
            warnings.append(kept_rare_classes_warning(name, rare, schema.class_counts, need))
        if schema.class_counts:
            single = sort_labels(c for c, n in schema.class_counts.items() if n >= 2 and
                                 math.ceil(training_rows(n, test_fraction) * smallest) == 1)
            if single:
                at = f"at downsample {smallest}, " if smallest < 1 else ""
                shown = ", ".join(map(str, single[:5])) + (
                    f", … ({len(single)} in all)" if len(single) > 5 else "")
                warnings.append(f"{name}: {at}{len(single)} class(es) ({shown}) keep a single "
                                "training row per run: a classifier sees one example of each")
    return warnings


def classifier_problems(config: dict) -> list[str]:
    """Every classifier the config names must be registered (:mod:`modelvar.models.registry`):
    a built-in, or one the config declares (checked here: it imports, it has ``fit`` and
    ``predict``, its constructor takes its parameters, its ranges are in order)."""
    from modelvar.models import registry

    listed = config.get("classifiers")
    if not isinstance(listed, list):
        return []  # the schema reports it
    problems = registry.declare(config)
    known = registry.names()
    return problems + [
        f"classifiers[{i}]: {name!r} is not a classifier; known: {list(known)} (or declare "
        "your own: `- name: …, estimator: package.module.Class`, docs/developing.md)"
        for i, name in enumerate(listed) if isinstance(name, str) and name not in known]


def gpu_speedup_problems(config: dict) -> list[str]:
    """A ``gpu_speedup`` mapping (``jobs.gpu_speedup``, ``classifier_settings.NAME.gpu_speedup``
    and ``.gpu_speedup_alone``):
    its keys are seconds of a fit on one core (whole numbers ≥ 0), one of them 0, so that every
    fit has a speed-up (the schema checks the values and the sections' types)."""
    def section(value):
        return value if isinstance(value, dict) else {}

    found = {"jobs.gpu_speedup": section(config.get("jobs")).get("gpu_speedup")}
    for clf, settings in section(config.get("classifier_settings")).items():
        for key in SPEEDUP_SETTINGS:
            found[f"classifier_settings.{clf}.{key}"] = section(settings).get(key)
    problems = []
    for where, value in found.items():
        if not isinstance(value, dict):
            continue
        bad = [k for k in value if not (isinstance(k, int) and k >= 0)
               and not (isinstance(k, str) and k.isdigit())]
        if bad:
            problems.append(f"{where}: {bad[0]!r} is not a number of seconds; the keys say from "
                            "how many seconds of a fit on one core each speed-up holds, e.g. "
                            "{0: 5, 200: 40}")
        elif not any(int(k) == 0 for k in value):
            problems.append(f"{where}: no key 0, so fits below {min(int(k) for k in value):,} s "
                            "of one core have no speed-up; add one, e.g. {0: 5, 200: 40}")
    return problems


def _checkout() -> Path | None:
    """The repository this package runs from, when it runs from a checkout (src layout)."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "Snakefile").is_file() and (root / "src" / "modelvar").is_dir() \
        else None


CHECKOUT = _checkout()


def results_dir_problems(config: dict, workdir: Path | None = None) -> list[str]:
    """``results_dir`` must be a folder of its own: not the working directory, the file
    system's root or a folder that holds the working directory (runs write there and remove
    tables that a changed config no longer plans); and, when the workflow runs from outside
    modelvar's checkout, not a folder inside the checkout (a run from elsewhere is a study of
    its own, whose results, caches and locks would mix with the code; from the checkout,
    its ``results/`` is the README's default)."""
    value = config.get("results_dir", "results")  # before the check: the raw config
    if not isinstance(value, str) or not value.strip():
        return []  # the schema reports it
    workdir = (workdir or Path.cwd()).resolve()
    folder = (workdir / value).resolve()
    if folder == workdir or workdir.is_relative_to(folder):
        what = "the working directory" if folder == workdir else \
            f"{folder}, which holds the working directory"
        return [f"results_dir: {value!r} is {what}: runs write there and delete tables a "
                "changed config no longer plans; give the results a folder of their own "
                "(e.g. results)"]
    checkout = CHECKOUT
    if checkout is not None and folder.is_relative_to(checkout) and \
            not workdir.is_relative_to(checkout):
        return [f"results_dir: {value!r} is {folder}, inside modelvar's checkout {checkout}, "
                f"while the workflow runs from {workdir}: give the results a folder outside "
                "the checkout (e.g. results, here), or run from the checkout"]
    return []


def with_defaults(config: dict, schema: dict) -> dict:
    """``config`` completed in place, as the workflow sees it after :func:`check_config`:
    every perturbation family it leaves out at its control level, every other key it leaves
    out at the schema's default (:func:`workflow_schema`). Also for configs built by hand
    (tests, benchmarks), which the check would refuse for lacking required keys."""
    fill_family_defaults(config)
    fill_schema_defaults(config, workflow_schema(schema))
    return config


def check_config(config: dict, schema: dict, *, datasets: bool = True) -> CheckedStudy:
    """Schema and study checks (raising :class:`ConfigProblems` with every problem), then the
    warnings. ``config`` is completed in place: integral floats become ints, and every key the
    config leaves out gets its default from the schema (:func:`fill_schema_defaults`; a
    default lives in the schema only, so code after the check reads ``config[key]``).
    ``datasets=False`` skips peeking at the datasets (a job step, after the main process
    checked them)."""
    shape = schema_problems(config, schema)
    declared = classifier_problems(config)
    problems = shape + declared + results_dir_problems(config) + gpu_speedup_problems(config)
    if shape:  # a config of the wrong shape: what follows cannot read it
        raise ConfigProblems(problems)
    coerce_integers(config, workflow_schema(schema))
    with_defaults(config, schema)
    if not datasets:
        if problems:
            raise ConfigProblems(problems)
        return CheckedStudy()
    # the datasets are checked whatever the classifiers' declarations say: every problem at
    # once (a classifier's hyperparameter ranges only where its declaration is sound)
    found, study = study_problems(config, hparams=not declared)
    if problems + found:
        raise ConfigProblems(problems + found)
    study.warnings = study_warnings(config, study)
    return study
