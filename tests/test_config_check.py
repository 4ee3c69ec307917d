"""Fail early, all at once (issue 12): config errors with key paths, dataset problems found when
the workflow starts (dry runs too), degenerate settings warned about, what users' files are."""

import copy
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import CONFIGS, REPO, completed, job_counts, snakemake
from modelvar.data import DatasetError, load
from modelvar.data.readers import file_format
from modelvar.data.schema import peek
from modelvar.planning.config_check import (
    ConfigProblems,
    check_config,
    coerce_integers,
    schema_problems,
    workflow_schema,
)

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
VEHICLE = REPO / "src/modelvar/data/embedded/vehicle.csv"


def tiny(**changes):
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config.update(copy.deepcopy(changes))
    return config


def test_every_schema_error_with_its_key_path_and_allowed_values():
    config = tiny(colour="red", classifiers=["random-forest"])
    config["split"].update(runs=1, test_fraction=1.5)
    config["perturbation"].update(data=["none", {"sig": 9}, {"foo": 1}])
    config["datasets"]["mine"] = {"source": "file", "path": "x.csv"}
    problems = schema_problems(config, SCHEMA)
    assert problems == [
        "config: unknown key 'colour'; allowed keys: ['classifier_settings', 'classifiers', "
        "'datasets', 'design', 'figures', 'findings', 'grouped', 'hparams', 'jobs', 'metrics', "
        "'openml', 'perturbation', 'predictions', 'resources', 'results_dir', 'root_seed', "
        "'sequential', 'simulation', 'split', 'tuning']",
        "datasets.mine: missing key 'target'",
        "perturbation.data[1].sig: 9 is greater than the maximum of 6",
        "perturbation.data[2]: {'foo': 1} is not valid here; expected one of: 'none'; "
        "{sig: …}; {nn: …}; {rel: …}; {pct: …}; {sd: …}; {rsd: …}",
        "split.runs: 1 is less than the minimum of 2",
        "split.test_fraction: 1.5 is greater than or equal to the maximum of 1",
    ]


def test_an_unknown_classifier_is_named_with_the_registered_ones():
    config = tiny(classifiers=["lr-sgd", "random-forest"])
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, SCHEMA)
    assert "classifiers[1]: 'random-forest' is not a classifier; known: ['lr-sgd', 'svm-sgd', " \
        "'xgb', 'mlp']" in str(caught.value)


@pytest.mark.parametrize(("where", "speedup", "problem"), [
    ("jobs", {0: 5, 200: 40}, None),
    ("jobs", {"0": 5.5}, None),
    ("xgb", {0: 2, 15: 4.8, 1700: 24}, None),
    ("jobs", {200: 40}, "jobs.gpu_speedup: no key 0, so fits below 200 s of one core have no "
                        "speed-up; add one, e.g. {0: 5, 200: 40}"),
    ("xgb", {0: 5, "many": 40}, "classifier_settings.xgb.gpu_speedup: 'many' is not a number "
                                "of seconds; the keys say from how many seconds"),
    ("jobs", {0: 0}, "jobs.gpu_speedup[0]: 0 is less than or equal to the minimum of 0"),
    ("jobs", 0, "jobs.gpu_speedup: 0 is not valid here"),
])
def test_a_gpu_speedup_is_a_number_or_one_per_fit_size(where, speedup, problem):
    config = tiny(jobs={"gpu_speedup": speedup}) if where == "jobs" else tiny(
        classifier_settings={where: {"gpu": True, "gpu_speedup": speedup}})
    if problem is None:
        check_config(config, SCHEMA, datasets=False)
        return
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, SCHEMA, datasets=False)
    assert problem in str(caught.value)


def test_only_a_classifier_that_can_use_a_gpu_is_put_on_one():
    config = tiny(classifiers=["lr-sgd", "xgb", "mlp"],
                  classifier_settings={"lr-sgd": {"gpu": True}, "xgb": {"gpu": True},
                                       "mlp": {"gpu": False}})
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, SCHEMA)
    assert str(caught.value).count("- ") == 1
    assert "classifier_settings.lr-sgd.gpu: lr-sgd cannot fit on a GPU (those that can: xgb, " \
        "mlp)" in str(caught.value)


def test_a_one_at_a_time_gpu_speedup_is_only_for_a_classifier_that_batches_its_runs():
    ok = tiny(classifiers=["xgb", "mlp"],
              classifier_settings={"mlp": {"gpu_speedup_alone": {0: 1, 240: 10.5}}})
    check_config(ok, SCHEMA, datasets=False)
    for settings, problem in (
            ({"xgb": {"gpu": True, "gpu_speedup_alone": 3}},
             "classifier_settings.xgb.gpu_speedup_alone: xgb fits one run at a time in its fit "
             "jobs too, so its gpu_speedup already says it"),
            ({"mlp": {"gpu_speedup_alone": {240: 10}}},
             "classifier_settings.mlp.gpu_speedup_alone: no key 0")):
        with pytest.raises(ConfigProblems) as caught:
            check_config(tiny(classifiers=["xgb", "mlp"], classifier_settings=settings), SCHEMA)
        assert problem in str(caught.value)


def test_perturbation_is_optional_and_whole_floats_become_ints():
    config = tiny()
    del config["perturbation"]
    config["split"]["repeats"] = 2.0
    assert schema_problems(config, SCHEMA) == []
    coerce_integers(config, SCHEMA)
    assert config["split"]["repeats"] == 2 and isinstance(config["split"]["repeats"], int)


def test_dataset_and_setting_problems_are_reported_together(tmp_path):
    bad_csv = tmp_path / "bad.csv"
    pd.read_csv(VEHICLE).assign(colour="red").to_csv(bad_csv, index=False)
    config = tiny(datasets={
        "vehicle": {"source": "embedded"},
        "gone": {"source": "file", "path": str(tmp_path / "gone.csv"), "target": "y"},
        "odd": {"source": "file", "path": str(tmp_path / "x.xlsx"), "target": "y"},
        "notarget": {"source": "file", "path": str(VEHICLE), "target": "label"},
        "undeclared": {"source": "file", "path": str(bad_csv), "target": "Class"},
        "mistyped": {"source": "file", "path": str(bad_csv), "target": "CLASS"},
        "typo": {"source": "embedded", "name": "vehicel"},
    }, classifier_settings={"lr-sgd": {"hparams": {"speed": 1, "alpha": 5.0}},
                            "xgb": {"epochs": 3}},
       grouped={"by": {"vehicle": ["@class", "COMPACTNESS", "nosuch"]}})
    (tmp_path / "x.xlsx").write_text("x")
    with pytest.raises(ConfigProblems) as err:
        check_config(config, SCHEMA)
    text = "\n".join(err.value.problems)
    for expected in ("datasets.gone: file", "does not exist",
                     "datasets.odd: unsupported file type 'x.xlsx'",
                     "the target column 'label' not found",
                     "target column 'CLASS' not found; did you mean 'Class'?",
                     "datasets.undeclared: column(s) ['colour']",
                     "not declared categorical",
                     "datasets.typo: no embedded dataset named 'vehicel'; did you mean "
                     "'vehicle'?",
                     "grouped.by.vehicle: column 'COMPACTNESS' is numeric",
                     "grouped.by.vehicle: in vehicle, the categorical column 'nosuch' not found",
                     "classifier_settings.lr-sgd.hparams.speed: unknown hyperparameter",
                     "classifier_settings.lr-sgd.hparams.alpha: 5.0 is outside [1e-07, 0.1]",
                     "classifier_settings.xgb.epochs: xgb does not train for epochs (only mlp)"):
        assert expected in text, f"{expected}\n{text}"
    assert len(err.value.problems) == 11


def test_degenerate_settings_are_warned_about_with_what_they_imply():
    config = tiny()
    config["split"]["test_fraction"] = 0.99
    config["perturbation"]["downsample"] = [0.01, 1.0]
    warnings = check_config(config, SCHEMA).warnings
    assert any("leave about 0 training rows per run (of 846)" in w for w in warnings)
    assert any("keep a single training row per run" in w for w in warnings)
    config = tiny()
    config["split"]["test_fraction"] = 0.02
    assert any("test sets of about 17 rows" in w for w in check_config(config, SCHEMA).warnings)


def test_kept_rare_classes_are_warned_about_where_the_user_looks(tmp_path):
    """400 classes of one row each, kept: the metrics describe the two other classes only. The
    prepare job's log said so; the run's summary now does too (and the config check, where the
    class counts are known before the run)."""
    import json

    import pandas as pd

    from modelvar.pipeline.result_tables import study_summary, table_path

    counts = {**{f"c{i}": 1 for i in range(400)}, "x": 50, "y": 50}
    results = tmp_path / "results"
    (results / "datasets").mkdir(parents=True)
    (results / "datasets" / "ids.json").write_text(json.dumps({
        "class_counts": counts,
        "provenance": {"rare_classes": {"kept": {f"c{i}": 1 for i in range(400)},
                                        "min_class_size": 2}}}))
    runs = Path(table_path(results, "runs", "ids", "lr-sgd", "j"))
    runs.parent.mkdir(parents=True)
    pd.DataFrame({"cell": ["a"] * 3, "repeat": [0] * 3, "accuracy": [0.5] * 3,
                  "fit_seconds": [1.0] * 3}).to_parquet(runs)
    summary = study_summary([runs], results)
    assert ("warning: ids: 400 of its 402 classes (400 of 500 rows) have fewer than the 2 "
            "samples the split needs") in summary
    assert "describe the other 2 class(es) only (is the target an identifier?)" in summary
    config = tiny()
    config["datasets"] = {"anneal": {"source": "embedded"}}
    config["grouped"] = {}
    config["split"].update(rare_classes="keep", test_fraction=0.5)
    config.update(hparams="tuned", tuning={"trials": 2, "folds": 10})  # 20 rows per class
    warnings = check_config(config, SCHEMA).warnings
    assert any(w.startswith("anneal: 1 of its 5 classes (8 of 898 rows) have fewer than the "
                            "20 samples") for w in warnings), warnings


@pytest.mark.workflow
def test_a_dry_run_reports_all_problems_before_any_job(tmp_path, tmp_config):
    config = tmp_config("tiny.yaml", lambda c: c.update(
        datasets={"a": {"source": "file", "path": "nope.csv", "target": "y"},
                  "b": {"source": "embedded", "name": "nope"}},
        classifier_settings={"svm-sgd": {"hparams": {"loss": "squared"}}}))
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "the config has 4 problem(s)" in output
    assert "grouped.by.vehicle: 'vehicle' is not one of the study's datasets" in output
    assert "Traceback" not in output and "$schema" not in output
    assert not (tmp_path / "results").exists()


@pytest.mark.workflow
def test_repeats_written_as_a_float_run(tmp_path, tmp_config):
    """2.0 repeats plan the jobs of 2: one fit job per classifier, its batch of repeats 0-1."""
    config = tmp_config("tiny.yaml", lambda c: c["split"].update(repeats=2.0))
    proc = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert job_counts(proc.stdout)["fit"] == 2 and "job=dnone_cnone_hnone.r0-1" in proc.stdout


# ------------------------------------------------------------------ the files users have
def vehicle_frame():
    return pd.read_csv(VEHICLE)


@pytest.mark.parametrize("name", ["v.csv.gz", "v.tsv", "v.tsv.gz", "v.data", "v.txt.gz"])
def test_compressed_and_delimited_text_files(tmp_path, name):
    frame = vehicle_frame()
    path = tmp_path / name
    sep = "\t" if ".tsv" in name or ".txt" in name else ","
    text = frame.to_csv(index=False, sep=sep)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    ds = load("v", {"source": "file", "path": str(path), "target": "Class"})
    assert len(ds.y) == 846 and ds.classes == ["bus", "opel", "saab", "van"]
    assert ds.provenance["gzip"] == name.endswith(".gz")
    assert ds.provenance["delimiter"] == sep


def test_uci_data_file_without_a_header(tmp_path):
    frame = vehicle_frame()
    path = tmp_path / "vehicle.data"
    path.write_text(frame.to_csv(index=False, header=False, sep=" "))
    spec = {"source": "file", "path": str(path), "target": "Class", "header": False,
            "columns": list(frame.columns)}
    ds = load("v", spec)
    assert len(ds.y) == 846 and ds.provenance["delimiter"] == r"\s+"
    with pytest.raises(DatasetError, match="does the file lack a header row"):
        peek("v", {"source": "file", "path": str(path), "target": "Class"})
    unnamed = load("v", {**{k: v for k, v in spec.items() if k != "columns"}, "target": "V19"})
    assert unnamed.target == "V19" and len(unnamed.X.columns) == 18


def test_ambiguous_delimiter_is_refused_with_the_key_to_set(tmp_path):
    path = tmp_path / "odd.txt"
    path.write_text("a,b;c\n1,2;3\n4,5;6\n")
    with pytest.raises(DatasetError, match="cannot tell the delimiter.*set `delimiter:`"):
        file_format(path, "odd")
    assert file_format(path, "odd", {"delimiter": ";"}).delimiter == ";"


def test_gzipped_arff_and_labels_as_written(tmp_path):
    arff = (REPO / "src/modelvar/data/embedded/credit-g.arff").read_bytes()
    (tmp_path / "c.arff.gz").write_bytes(gzip.compress(arff))
    ds = load("c", {"source": "file", "path": str(tmp_path / "c.arff.gz"), "target": "class"})
    assert ds.classes == ["good", "bad"] and len(ds.y) == 1000
    (tmp_path / "kc.csv").write_text("x,defects\n1,false\n2,true\n3,true\n4,false\n")
    kc = load("kc", {"source": "file", "path": str(tmp_path / "kc.csv"), "target": "defects"})
    assert kc.classes == ["false", "true"]  # never the booleans False/True
    with pytest.raises(DatasetError, match="parquet compresses inside"):
        file_format(tmp_path / "x.parquet.gz", "x")


def test_classes_sort_naturally(tmp_path):
    labels = ["1", "10", "2", "14", "3"] * 3
    pd.DataFrame({"x": range(15), "y": labels}).to_csv(tmp_path / "a.csv", index=False)
    ds = load("a", {"source": "file", "path": str(tmp_path / "a.csv"), "target": "y"})
    assert ds.classes == ["1", "2", "3", "10", "14"]


# ------------------------------------------------------------------ rare classes
def test_a_phantom_class_from_a_cut_file_stops_prepare_or_is_kept_and_reported(tmp_path, capsys):
    import json
    import warnings

    from modelvar.cli import main
    from modelvar.data import read
    from modelvar.data.splits import RareClassWarning
    from modelvar.pipeline.dataset_overview import overview_html
    from modelvar.pipeline.fitting import fit_repeat
    from modelvar.study.cells import Cell

    text = VEHICLE.read_text().rstrip("\n")
    cut = tmp_path / "cut.csv"
    cut.write_text(text[:-1] + "\n")  # the last label 'van' becomes 'va'
    spec = json.dumps({"source": "file", "path": str(cut), "target": "Class"})
    argv = ["prepare", "--name", "cut", "--spec", spec, "--out-parquet",
            str(tmp_path / "cut.parquet"), "--out-meta", str(tmp_path / "cut.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "{'va': 1}" in err and "split.rare_classes: keep" in err
    assert not (tmp_path / "cut.parquet").exists()
    assert main([*argv, "--rare-classes", "keep"]) == 0
    meta = json.loads((tmp_path / "cut.json").read_text())
    assert meta["provenance"]["rare_classes"]["kept"] == {"va": 1}
    assert "va (1)" in overview_html([meta]) and "never tested" in overview_html([meta])
    ds = read(tmp_path / "cut.parquet", tmp_path / "cut.json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_repeat(ds, classifier="lr-sgd", cell=Cell(), repeat=0, n_runs=2,
                   test_fraction=0.25, root_seed=1)
    messages = [str(w.message) for w in caught if issubclass(w.category, RareClassWarning)]
    assert messages and "['va']" in messages[0]  # the label, not an index


def test_tuned_studies_need_a_class_per_fold(tmp_path):
    from modelvar.planning.config_check import min_class_size

    assert min_class_size(completed(tiny())) == 2
    assert min_class_size(completed(tiny(hparams="tuned", tuning={"folds": 5}))) == 7


def _schema_keys(node: dict, root: dict, prefix: tuple = ()) -> tuple[set, set]:
    """(keys, item keys) of the schema: dotted keys as tuples, ``*`` for a mapping's names;
    item keys are (parent key, option) for the options inside a list's items (``{sig: d}``)."""
    if "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[1]]
    keys, items = set(), set()
    for name, sub in node.get("properties", {}).items():
        keys.add(prefix + (name,))
        k, i = _schema_keys(sub, root, prefix + (name,))
        keys |= k
        items |= i
    for alt in node.get("oneOf", []) + node.get("anyOf", []):
        k, i = _schema_keys(alt, root, prefix)
        keys |= k
        items |= i
    if isinstance(node.get("additionalProperties"), dict):
        k, i = _schema_keys(node["additionalProperties"], root, prefix + ("*",))
        keys |= k | {prefix + ("*",)}
        items |= i
    if isinstance(node.get("items"), dict):
        k, i = _schema_keys(node["items"], root, ())
        items |= {(prefix, key[0]) for key in k}
    return keys, items


def test_every_config_key_is_documented_and_every_documented_key_exists():
    """config/README.md's table and the schema agree (issue 24): each schema key has a row (a
    section is covered by its keys' rows; NAME/CLF/RULE/DATASET stand for a mapping's names) or
    is named in its parent's row, each option inside a list's items is named in its list's row,
    and each row names a key of the schema."""
    import re

    from conftest import REPO

    rows = {}
    for line in (REPO / "config" / "README.md").read_text().splitlines():
        found = re.match(r"^\| `([A-Za-z0-9_.]+)` \|", line)
        if found:
            rows[tuple(found.group(1).split("."))] = line
    schema = workflow_schema(SCHEMA)  # with the families' levels
    keys, items = _schema_keys(schema, schema)

    def matches(schema_key, row_key):
        return len(row_key) >= len(schema_key) and all(
            s == "*" or s == r or (r.isupper() and s != "*")
            or (s == "*" and r.isupper()) for s, r in zip(schema_key, row_key, strict=False))

    def documented(key):  # its own row, or named in its parent's row ({rows, numeric, …})
        return any(matches(key, row) or (len(row) == len(key) - 1 and matches(key[:-1], row)
                                         and (key[-1] == "*" or key[-1] in rows[row]))
                   for row in rows)

    undocumented = sorted(".".join(k) for k in keys if not documented(k))
    assert undocumented == [], f"config keys without a row in config/README.md: {undocumented}"
    unnamed = sorted(f"{'.'.join(parent)}: {option}" for parent, option in items
                     if parent in rows and f"{option}" not in rows[parent])
    assert unnamed == [], f"list options not named in their row: {unnamed}"

    def exists(row_key):
        return any(len(k) == len(row_key) and all(
            s == r or (s == "*" and (r.isupper() or r.islower())) or (r.isupper() and s != "*"
                                                                        and len(k) > 1)
            for s, r in zip(k, row_key, strict=True)) for k in keys)

    unknown = sorted(".".join(r) for r in rows if not exists(r))
    assert unknown == [], f"rows of config/README.md that name no config key: {unknown}"


@pytest.mark.parametrize("files", [
    ["config/config.yaml"], ["config/preliminary.yaml"],
    ["config/full-study.yaml", "config/openml/seed-study.yaml"],
    ["config/full-study.yaml", "config/openml/kadra.yaml"],
    *[[f"tests/configs/{name}"] for name in ("every-rule.yaml", "slurm.yaml", "small.yaml",
                                             "tiny.yaml")],
])
def test_schema_defaults_are_filled_as_snakemake_validate_fills_them(files, tmp_path):
    """The workflow's check fills the schema's defaults itself (reusing the parsed schema, with
    what the registries add: workflow_schema); the config it gets is the one Snakemake's
    validate(set_default=True) gives with that schema, for every shipped config."""
    import json

    from snakemake.utils import validate

    from modelvar.planning.config_check import read_schema, workflow_schema
    from modelvar.running.workflow_config import resolve

    schema_path = REPO / "workflow/schemas/config.schema.yaml"
    schema = read_schema(schema_path)
    assert schema == yaml.safe_load(schema_path.read_text())  # libyaml: the same values
    config = resolve(["--configfile", *(str(REPO / f) for f in files)]).config
    given = copy.deepcopy(config)
    check_config(config, schema, datasets=False)
    complete = tmp_path / "schema.json"
    complete.write_text(json.dumps(workflow_schema(schema)))
    validate(given, schema=str(complete))
    assert config == given
    assert config != resolve(["--configfile", *(str(REPO / f) for f in files)]).config


def test_schema_defaults_fill_nested_sections_and_keep_given_values():
    from modelvar.planning.config_check import fill_schema_defaults

    schema = {"type": "object", "properties": {
        "split": {"type": "object", "default": {},
                  "properties": {"runs": {"type": "integer", "default": 5},
                                 "test_fraction": {"type": "number", "default": 0.25}}},
        "name": {"type": "string"}}}
    config = {"name": "x"}
    fill_schema_defaults(config, schema)
    assert config == {"name": "x", "split": {"runs": 5, "test_fraction": 0.25}}
    config = {"split": {"runs": 3}}
    fill_schema_defaults(config, schema)
    assert config == {"split": {"runs": 3, "test_fraction": 0.25}}
    assert schema["properties"]["split"]["default"] == {}  # filled a copy, not the schema's


def test_peek_counts_the_few_valued_numeric_features(tmp_path):
    """The plan's few-valued count (modelvar.data.schema.count_few_valued): numeric features of
    at most 16 distinct values, missing cells not counted, in a CSV file, a parquet file and an
    embedded dataset (vehicle: one of its 18 integer features)."""
    from modelvar.data.schema import FEW_VALUES, count_few_valued

    rows = 400
    frame = pd.DataFrame({
        "flag": np.arange(rows) % 2,
        "sixteen": np.arange(rows) % FEW_VALUES,
        "seventeen": np.arange(rows) % (FEW_VALUES + 1),
        "gappy": np.where(np.arange(rows) % 3 == 0, np.nan, np.arange(rows) % 4),
        "continuous": np.linspace(0, 1, rows),
        "colour": np.array(["red", "green", "blue", "grey"] * 100),
        "y": np.array(["a", "b"] * 200),
    })
    assert count_few_valued(frame[["flag", "sixteen", "seventeen", "gappy", "continuous"]]) == 3
    assert count_few_valued(frame[[]]) == 0
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    for name in ("d.csv", "d.parquet"):
        schema = peek("d", {"source": "file", "path": str(tmp_path / name), "target": "y",
                            "categorical": ["colour"]})
        assert schema.few_valued == 3, name
    assert peek("vehicle", {"source": "embedded"}).few_valued == 1


# ------------------------------------------------------------------ encodings (issue 49)
def windows_csv(tmp_path) -> Path:
    """A CSV as Excel on Windows saves it: cp1252, with 'café' and curly quotes."""
    frame = vehicle_frame().head(200).assign(
        shop=lambda f: np.where(np.arange(len(f)) % 2, "café", "“corner” store"))
    path = tmp_path / "shops.csv"
    path.write_bytes(frame.to_csv(index=False).encode("cp1252"))
    return path


def test_a_file_that_is_not_utf8_is_refused_with_its_offset_and_the_fix(tmp_path):
    path = windows_csv(tmp_path)
    data = path.read_bytes()
    offset = next(i for i, b in enumerate(data) if b >= 0x80)
    line = data[:offset].count(b"\n") + 1
    spec = {"source": "file", "path": str(path), "target": "Class", "categorical": ["shop"]}
    config = tiny(datasets={"shops": spec}, grouped={})
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, SCHEMA)
    text = str(caught.value)
    assert f"shops: {path} is not UTF-8 text: byte 0x{data[offset]:02x} at offset {offset:,} " \
        f"(line {line:,}, in " in text, text
    assert "set `encoding:` in its config entry to the file's encoding (cp1252 for a CSV " \
        "saved by Excel on Windows" in text
    assert "UnicodeDecodeError" not in text
    with pytest.raises(DatasetError, match="is not UTF-8 text: byte 0x"):
        load("shops", spec)  # the prepare job's read says the same


def test_a_declared_encoding_reads_the_file_as_written(tmp_path):
    path = windows_csv(tmp_path)
    spec = {"source": "file", "path": str(path), "target": "Class", "categorical": ["shop"],
            "encoding": "cp1252"}
    check_config(tiny(datasets={"shops": spec}, grouped={}), SCHEMA)
    ds = load("shops", spec)
    assert ds.categories["shop"] == ["café", "“corner” store"]
    assert ds.provenance["encoding"] == "cp1252"
    with pytest.raises(ConfigProblems, match="encoding 'klingon' is not a codec Python knows"):
        check_config(tiny(datasets={"shops": {**spec, "encoding": "klingon"}}, grouped={}),
                     SCHEMA)


def test_only_a_byte_order_mark_is_detected_and_said(tmp_path, capsys):
    frame = vehicle_frame().head(100)
    path = tmp_path / "v16.csv"
    path.write_bytes(frame.to_csv(index=False).encode("utf-16"))  # with its byte-order mark
    ds = load("v", {"source": "file", "path": str(path), "target": "Class"})
    assert len(ds.y) == 100 and ds.provenance["encoding"] == "utf-16"
    assert "v16.csv starts with a UTF-16 byte-order mark: read as UTF-16" in \
        capsys.readouterr().err
    utf8 = tmp_path / "v8.csv"  # a UTF-8 mark is UTF-8: read, nothing to say
    utf8.write_bytes(frame.to_csv(index=False).encode("utf-8-sig"))
    ds = load("v", {"source": "file", "path": str(utf8), "target": "Class"})
    assert list(ds.X.columns)[0] == frame.columns[0] and capsys.readouterr().err == ""


def test_encodings_that_would_misread_a_file_are_named(tmp_path, capsys):
    """Issue 58: rot13 passed the codec check and ended in a LookupError traceback; a UTF-16
    file declared cp1252 gave mojibake column names; a cp1252 file declared latin-1 was read
    silently with C1 control characters in its levels."""
    path = windows_csv(tmp_path)
    spec = {"source": "file", "path": str(path), "target": "Class", "categorical": ["shop"]}
    for codec in ("rot13", "base64"):
        with pytest.raises(ConfigProblems, match=f"encoding '{codec}' is not a text encoding; "
                           "e.g. utf-8, cp1252, latin-1"):
            check_config(tiny(datasets={"shops": {**spec, "encoding": codec}}, grouped={}),
                         SCHEMA)
    v16 = tmp_path / "v16.csv"
    v16.write_bytes(vehicle_frame().head(50).to_csv(index=False).encode("utf-16"))
    with pytest.raises(ConfigProblems) as caught:
        check_config(tiny(datasets={"v": {"source": "file", "path": str(v16), "target": "Class",
                                          "encoding": "cp1252"}}, grouped={}), SCHEMA)
    assert (f"v: {v16} starts with a UTF-16 byte-order mark, but its config entry declares "
            "encoding 'cp1252'; the file is UTF-16 text: set `encoding: utf-16`") in \
        str(caught.value)
    for declared in ("utf-16", "utf-16-le", None):  # what the mark says: read
        entry = {"source": "file", "path": str(v16), "target": "Class"}
        ds = load("v", {**entry, "encoding": declared} if declared else entry)
        assert len(ds.y) == 50
    capsys.readouterr()
    ds = load("shops", {**spec, "encoding": "latin-1"})
    err = capsys.readouterr().err
    assert "\x93corner\x94 store" in ds.categories["shop"]  # as declared, and said:
    line = next(i for i, ln in enumerate(path.read_bytes().splitlines(), 1) if b"\x93" in ln)
    assert (f"shops: {path} read as iso8859-1 holds the control character U+0093 "
            f"(line {line:,}), "
            "which no text means; in cp1252 that byte is '“': set `encoding: cp1252` if the "
            "file was saved on Windows") in err, err
    load("shops", {**spec, "encoding": "cp1252"})
    assert "control character" not in capsys.readouterr().err


def test_the_plans_row_count_is_what_the_prepare_job_reads(tmp_path):
    """Issue 58: a file of more rows than the schema's sample (10,000) was counted by its
    newlines less one: 19,999 for 20,000 rows without a final newline, one too many with a
    trailing blank line, one too few without a header."""
    frame = pd.DataFrame({"x": np.arange(12_000) % 7, "y": np.arange(12_000) % 2})
    body = frame.to_csv(index=False)
    no_header = frame.to_csv(index=False, header=False)
    files = {"plain.csv": (body, {}), "no_final_newline.csv": (body.rstrip("\n"), {}),
             "trailing_blank.csv": (body + "\n  \n", {}),
             "crlf.csv": (body.replace("\n", "\r\n"), {}),
             "no_header.csv": (no_header, {"header": False, "columns": ["x", "y"]})}
    for file, (text, extra) in files.items():
        (tmp_path / file).write_text(text, newline="")
        spec = {"source": "file", "path": str(tmp_path / file), "target": "y", **extra}
        assert peek("d", spec).n_rows == len(load("d", spec).y) == 12_000, file


def test_a_delimiter_that_does_not_match_the_declared_format_is_named(tmp_path):
    """Issue 58: a tab-separated file with `format: csv` was told to set `header: false`,
    even when it had; the delimiter is the cause."""
    path = tmp_path / "tabs.txt"
    vehicle_frame().head(30).to_csv(path, sep="\t", index=False)
    width = len(vehicle_frame().columns)
    for extra in ({}, {"header": False}, {"header": False, "columns": ["a", "b", "Class"]}):
        spec = {"source": "file", "path": str(path), "target": "Class", "format": "csv", **extra}
        with pytest.raises(DatasetError) as caught:
            peek("t", spec)
        message = str(caught.value)
        assert message == (f"t: {path} reads as one column with the delimiter ',', but its "
                           f"first line splits on a tab into {width} fields; set `format: tsv` "
                           "in its config entry"), (extra, message)
        assert "header" not in message
    semi = tmp_path / "semi.csv"
    vehicle_frame().head(30).to_csv(semi, sep=";", index=False)
    with pytest.raises(DatasetError, match="splits on ';' into .* set `delimiter: ';'`"):
        load("s", {"source": "file", "path": str(semi), "target": "Class"})


def test_the_readmes_own_data_example_reads_as_it_says(tmp_path, monkeypatch):
    """The README's "Your own data" config, with files of the shapes it describes: both
    datasets pass the config check and load with their declared columns and levels."""
    import re

    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Your own data"):readme.index("## Your own classifier")]
    datasets = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))["datasets"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    n = 120
    pd.DataFrame({"income": rng.normal(50, 10, n).round(1), "region": rng.choice(["N", "S"], n),
                  "purpose": rng.choice(["car", "home", "study"], n),
                  "defaulted": rng.choice(["yes", "no"], n)}).to_csv("data/loans.csv",
                                                                     index=False)
    rows = [f"{20 + i % 50}\t{60 + i % 40}\t{36.5 + i % 3}\t{'Süd' if i % 2 else 'Nord'}\t"
            f"{'home' if i % 3 else 'admitted'}" for i in range(n)]
    Path("data/triage.txt").write_bytes("\n".join(rows).encode("cp1252"))
    check_config(tiny(datasets=datasets, grouped={}), SCHEMA)
    loans, triage = (load(name, spec) for name, spec in datasets.items())
    assert len(loans.y) == len(triage.y) == n
    assert triage.categories["ward"] == ["Nord", "Süd"]
    assert sorted(triage.classes) == ["admitted", "home"]


def test_the_first_undecodable_byte_is_found_across_chunks(tmp_path):
    """A two-byte character cut by a read's chunk boundary decodes; a bad byte after it is
    found at its own offset, gzip-compressed or not."""
    from modelvar.data.readers import first_undecodable

    data = b"a" * ((1 << 20) - 1) + "é".encode() + b"\nline two \xe9\n"
    for name, raw in (("cut.csv", data), ("cut.csv.gz", gzip.compress(data))):
        (tmp_path / name).write_bytes(raw)
        offset, line, byte, _ = first_undecodable(tmp_path / name, name.endswith(".gz"),
                                                  "utf-8")
        assert (offset, line, byte) == (data.index(b"\xe9"), 2, 0xE9)
    assert first_undecodable(tmp_path / "cut.csv", False, "cp1252") is None


def test_special_files_are_named_for_what_they_are(tmp_path):
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path, kind in [(Path("/dev/zero"), "a character device"),
                       (fifo, "a FIFO (named pipe)"), (tmp_path, "a folder")]:
        spec = {"source": "file", "path": str(path), "target": "y"}
        for read in (peek, load):
            with pytest.raises(DatasetError) as caught:
                read("d", spec)
            assert str(caught.value) == f"d: {path} is {kind}, not a data file"



def test_classes_left_with_one_training_row_are_warned_about_at_any_downsample(tmp_path):
    """200 classes of two rows each: the split tests one and trains on the other, so every
    run sees one example of each, at downsample 1 too (the file is small: its classes are
    counted at the config check)."""
    rng = np.random.default_rng(0)
    labels = [f"c{i}" for i in range(200) for _ in range(2)] + ["big"] * 100
    path = tmp_path / "ids.csv"
    pd.DataFrame({"a": rng.random(len(labels)), "b": rng.random(len(labels)),
                  "label": labels}).to_csv(path, index=False)
    config = tiny(datasets={"ids": {"source": "file", "path": str(path), "target": "label"}},
                  grouped={})
    config["perturbation"]["downsample"] = [1.0]
    warnings = check_config(config, SCHEMA).warnings
    assert ("ids: 200 class(es) (c0, c1, c2, c3, c4, … (200 in all)) keep a single training "
            "row per run: a classifier sees one example of each") in warnings, warnings
