"""The perturbation-family registry (issue 21): every built-in's grammar round-trips, and a new
family declared once — one registry entry plus its function — reaches the config check, the
cells, the fit job's runs table, the metric tables, the findings tables and page, and the
figures."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from modelvar.study import families
from modelvar.study.cells import Cell, cell_label, grid, level_value


@pytest.mark.parametrize("name,entry,level_id,words", [
    ("data", {"rel": 0.2}, "rel0p2", "rel 0.2"),
    ("data", {"sig": 1}, "sig1", "sig 1"),
    ("data", "none", "dnone", "none"),
    ("categorical", {"label": 0.1, "missing": "as_level"}, "labelmiss0p1",
     "label 0.1 (missing as a level)"),
    ("categorical", {"sample": 0.05, "missing": "keep"}, "sample0p05", "sample 0.05"),
    ("hparam", {"sig": 2}, "hsig2", "sig 2"),
    ("downsample", 0.5, "down050", "50 %"),
    ("model_seed", "per-run", "seedrun", "per run"),
])
def test_each_built_in_level_goes_from_config_to_id_to_words_and_back(name, entry, level_id,
                                                                      words):
    family = families.family(name)
    level = family.from_config(entry)
    assert family.to_id(level) == level_id
    assert family.from_id(level_id) == level
    assert level_value(level_id) == words


def test_bad_levels_name_their_family():
    with pytest.raises(ValueError, match=r"data perturbation: rel must be in \(0, 1\)"):
        Cell(data=("rel", 1.5))
    with pytest.raises(ValueError, match="perturbation.categorical: bad level"):
        families.family("categorical").from_config({"label": 0.1, "missing": "sometimes"})
    with pytest.raises(ValueError, match="bad downsample level 'down1000'"):
        families.family("downsample").from_id("down1000")
    with pytest.raises(ValueError, match="unknown perturbation family"):
        Cell(labels=("flip", 0.1))


def test_registering_checks_the_name_the_stage_and_the_ids():
    flip = label_noise_family()
    with pytest.raises(ValueError, match="taken"):
        families.register(replace(flip, name="data"))
    with pytest.raises(ValueError, match="taken"):
        families.register(replace(flip, name="Label-Noise"))
    with pytest.raises(ValueError, match="perturb function"):
        families.register(replace(flip, perturb=None))
    with pytest.raises(ValueError, match="read as 'data'"):
        families.register(replace(flip, levels=families.KindLevels(
            {"rel": families.Bound()}, none_id="dnone")))
    assert "label" not in families.names()
    with pytest.raises(ValueError, match="built-in"):
        families.unregister("data")


# ------------------------------------------------------------------ a new family, declared once
def flip_labels(rows: families.TrainingRows, level, rng):
    """Label noise: each training label, with probability p, becomes another class drawn
    uniformly."""
    _, p = level
    chosen = rng.random(len(rows.y)) < p
    y = rows.y.copy()
    shift = rng.integers(1, rows.n_classes, chosen.sum())
    y[chosen] = (y[chosen] + shift) % rows.n_classes
    return replace(rows, y=y), {"changed_frac": float(np.mean(y != rows.y))}


def label_noise_family() -> families.Family:
    return families.Family(
        "label", "label noise",
        families.KindLevels({"flip": families.Bound(0, 1)}, none_id="lnone"),
        perturb=flip_labels,
        strength=(families.Strength("label_changed_frac", "changed_frac", "label_changed_frac",
                                    "label_changed_frac", unit="of labels"),))


@pytest.fixture
def label_noise():
    family = families.register(label_noise_family(), before="hparam")
    try:
        yield family
    finally:
        families.unregister("label")


def test_a_new_family_gets_its_config_key_and_its_part_of_every_cell_id(label_noise):
    from modelvar.planning.config_check import schema_problems

    assert families.names() == ("data", "categorical", "label", "hparam", "downsample",
                                "model_seed")
    cells = grid({"label": ["none", {"flip": 0.2}], "downsample": [0.5]})
    assert [c.id for c in cells] == ["dnone_cnone_lnone_hnone_down050_seedfix",
                                     "dnone_cnone_flip0p2_hnone_down050_seedfix"]
    assert Cell.parse(cells[1].id) == cells[1] and cells[1].label == ("flip", 0.2)
    assert cell_label(cells[1].id, ["label"]) == "label flip 0.2"
    import yaml
    from tests.conftest import REPO

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    problems = schema_problems({"perturbation": {"label": [{"flip": 2}]}}, schema)
    assert any(p.startswith("perturbation.label[0].flip: 2 is greater than") for p in problems)
    assert not any("label" in p for p in schema_problems(
        {"perturbation": {"label": [{"flip": 0.2}]}}, schema))


def test_a_new_family_declared_once_reaches_the_runs_table_findings_and_figures(
        label_noise, tmp_path):
    """The only code this family has is its entry and flip_labels; everything below reads the
    registry."""
    from modelvar.data import load
    from modelvar.data.arrays import read_arrays
    from modelvar.data.canonical import write
    from modelvar.findings.report import findings_html
    from modelvar.findings.study import compute_findings
    from modelvar.pipeline.fitting import fit_job
    from modelvar.pipeline.metric_tables import TABLES, metrics_job
    from modelvar.pipeline.result_tables import partition, read_tables
    from modelvar.plots.findings import sources_figure
    from modelvar.plots.study import sources_of_variance
    from modelvar.study.design import cell_roles, dataset_cells, reach_of

    perturbation = {"label": [{"flip": 0.3}], "model_seed": ["fixed"]}
    meta = write(load("vehicle", {"source": "embedded"}), tmp_path / "vehicle.parquet",
                 tmp_path / "vehicle.json")
    data = read_arrays(tmp_path / "vehicle.parquet", tmp_path / "vehicle.json")
    cells, collapsed = dataset_cells(perturbation, "one-at-a-time", reach_of(meta))
    assert [c.id for c in cells] == ["dnone_cnone_lnone_hnone_down100_seedfix",
                                     "dnone_cnone_flip0p3_hnone_down100_seedfix"]
    assert collapsed == []
    agg = tmp_path / "aggregated"
    where = partition("vehicle", "lr-sgd")
    fit_job(data, classifier="lr-sgd", cells=cells, repeats=[0, 1, 2], n_runs=4,
            test_fraction=0.25, root_seed=3, predictions_out=tmp_path / "p.parquet",
            runs_out=agg / "runs" / where / "job.parquet")
    runs = read_tables([agg / "runs" / where / "job.parquet"])
    flipped = runs[runs["label"] == "flip0p3"]
    # the realised strength: about 30 % of the training labels changed, none in the control
    assert flipped["label_changed_frac"].between(0.25, 0.35).all()
    assert (runs.loc[runs["label"] == "lnone", "label_changed_frac"] == 0).all()
    assert "label-perturbation" in flipped["streams"].iloc[0]
    metrics_job([tmp_path / "p.parquet"],
                {t: agg / t / where / "job.parquet" for t in TABLES})
    findings = compute_findings(
        summary_paths=[agg / "summary" / where / "job.parquet"],
        agreement_paths=[agg / "agreement" / where / "job.parquet"],
        runs_paths=[agg / "runs" / where / "job.parquet"], metas={"vehicle": meta},
        roles={("vehicle", "lr-sgd"): cell_roles(perturbation, "one-at-a-time",
                                                 reach_of(meta))},
        collapsed={("vehicle", "lr-sgd"): []}, weak_below=0.5)
    sources = findings.tables["sources"]
    row = sources[sources["source"] == "label"].iloc[0]
    assert row["level"] == "label flip 0.3" and 0.25 < row["label_changed_frac"] < 0.35
    assert row["disagreement"] > 0  # noisy labels move lr-sgd's predictions
    assert list(sources["source"]) == ["control", "label", "test set"]
    strength = findings.tables["strength"]
    assert list(strength["level"]) == ["label flip 0.3"]
    page = findings_html(sources, findings.tables["study_sources"],
                         findings.tables["components"], findings.tables["study_components"],
                         findings.tables["claims"], notes=findings.notes, strength=strength,
                         figures={})
    assert "label flip 0.3" in page and "of labels" in page
    # the page reads top-down: the sentences, grouped by question, before the folded tables
    question = page.index("<i>Which source moved accuracy most?</i>")
    table = page.index("<details><summary><b>Sources of variance, one at a time</b></summary>")
    assert question < table and "<table" not in page[:table]
    summary = read_tables([agg / "summary" / where / "job.parquet"])
    roles = {"lr-sgd": cell_roles(perturbation, "one-at-a-time", reach_of(meta))}
    sources_figure(sources, [tmp_path / "headline.png"])
    sources_of_variance(summary, read_tables([agg / "agreement" / where / "job.parquet"]),
                        runs, roles, "vehicle", [tmp_path / "sources.png"])
    assert (tmp_path / "headline.png").stat().st_size > 0
    assert (tmp_path / "sources.png").stat().st_size > 0
