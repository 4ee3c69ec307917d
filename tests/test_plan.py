"""The study design (control, one-at-a-time, collapsed families) and the plan of jobs: every fit
exactly once, no job past the target unless one fit is, metrics jobs over whole repeats
(issues 13, 14, 15)."""

import copy
import math
import re
from itertools import product

import pytest

from conftest import REPO, completed
from modelvar.data.schema import profile_problems
from modelvar.models import mlp
from modelvar.planning import repeat_batches
from modelvar.planning.outputs import job_counts
from modelvar.planning.plan import PlanError, gpu_speedup_at, plan_study, probability_form
from modelvar.planning.plan_report import dataset_totals, format_plan
from modelvar.study.cells import Cell
from modelvar.study.design import Reach, active_sources, control, dataset_cells

GRID = {"data": ["none", {"rel": 0.2}], "categorical": ["none", {"label": 0.1}],
        "hparam": ["none", {"rel": 0.1}], "downsample": [0.5, 1.0], "model_seed": ["per-run"]}


def ids(cells):
    return [c.id for c in cells]


def test_one_at_a_time_is_the_control_and_each_source_alone():
    cells, collapsed = dataset_cells(GRID, "one-at-a-time")
    assert collapsed == []
    assert ids(cells) == [
        "dnone_cnone_hnone_down100_seedfix",  # the control
        "rel0p2_cnone_hnone_down100_seedfix", "dnone_label0p1_hnone_down100_seedfix",
        "dnone_cnone_hrel0p1_down100_seedfix", "dnone_cnone_hnone_down050_seedfix",
        "dnone_cnone_hnone_down100_seedrun"]
    assert control().id == cells[0].id and active_sources(control()) == []
    assert [active_sources(c) for c in cells[1:]] == [["data"], ["categorical"], ["hparam"],
                                                     ["downsample"], ["model_seed"]]


def test_both_adds_only_what_the_grid_lacks():
    factorial, _ = dataset_cells(GRID, "factorial")
    both, _ = dataset_cells(GRID, "both")
    assert len(factorial) == 2 * 2 * 2 * 2 * 1
    assert ids(both)[:len(factorial)] == ids(factorial)
    # the seed-per-run alone cell is in the grid already; the five fixed-seed cells are not
    assert len(both) == len(factorial) + 5 and len(set(ids(both))) == len(both)
    grid_with_control = {**GRID, "model_seed": ["fixed", "per-run"]}
    full, _ = dataset_cells(grid_with_control, "factorial")
    assert len(dataset_cells(grid_with_control, "both")[0]) == len(full)  # nothing to add


@pytest.mark.parametrize(("reach", "collapsed", "n"), [
    (Reach(numeric=True, categorical=False), ["categorical"], 8 + 4),   # vehicle
    (Reach(numeric=False, categorical=True), ["data"], 8 + 4),          # kr-vs-kp, car
    (Reach(numeric=True, categorical=True), [], 16 + 5),
])
def test_families_that_cannot_act_collapse_to_none(reach, collapsed, n):
    cells, found = dataset_cells(GRID, "both", reach)
    assert found == collapsed and len(cells) == n
    for family in collapsed:
        assert all(getattr(c, family) is None for c in cells)
    assert len(set(ids(cells))) == len(cells)  # no duplicate cells, so no duplicate fits


@pytest.mark.parametrize("design", ["factorial", "one-at-a-time", "both"])
@pytest.mark.parametrize("reach", [Reach(), Reach(numeric=True, categorical=False),
                                   Reach(numeric=False, categorical=True)])
def test_cells_asked_again_are_those_worked_out_and_a_caller_cannot_change_them(design, reach):
    from modelvar.study.design import _dataset_cells

    first, collapsed = dataset_cells(GRID, design, reach)
    worked_out, worked_collapsed = _dataset_cells(GRID, design, reach)
    assert ids(first) == ids(worked_out) and collapsed == worked_collapsed
    first.clear()
    collapsed.append("data")
    again, collapsed_again = dataset_cells(GRID, design, reach)
    assert ids(again) == ids(worked_out) and collapsed_again == worked_collapsed
    # the same levels in another key order and as tuples: the same cells
    reordered = {k: tuple(v) for k, v in reversed(list(GRID.items()))}
    assert ids(dataset_cells(reordered, design, reach)[0]) == ids(worked_out)


def test_cells_asked_again_after_a_family_is_registered_have_its_part():
    from tests.test_families import label_noise_family

    from modelvar.study import families

    before = ids(dataset_cells(GRID, "factorial")[0])
    families.register(label_noise_family(), before="hparam")
    try:
        with_label = ids(dataset_cells(GRID, "factorial")[0])
    finally:
        families.unregister("label")
    assert with_label == [i.replace("_h", "_lnone_h", 1) for i in before]
    assert ids(dataset_cells(GRID, "factorial")[0]) == before


def openml(rows, numeric, categorical, classes):
    return {"source": "openml", "data_id": 1,
            "profile": {"rows": rows, "numeric": numeric, "categorical": categorical,
                        "classes": classes}}


def study(**over):
    config = {
        "datasets": {"small": openml(800, 10, 2, 2), "big": openml(400_000, 60, 0, 355),
                     "cats": openml(3000, 0, 36, 2)},
        "classifiers": ["lr-sgd", "xgb", "mlp"],
        "split": {"test_fraction": 0.25, "repeats": 10, "runs": 10},
        "perturbation": copy.deepcopy(GRID), "design": "both", "jobs": {"target_minutes": 30},
    }
    config.update(over)
    return config


JOB_ID = re.search(r'job=r"([^"]+)"', (REPO / "rules" / "common.smk").read_text()).group(1)


def _one_fit_seconds(config, dataset, classifier) -> float:
    """The estimated seconds of one fit of the first job's cells (from the shipped cost model)."""
    job = plan_study(completed(config), {}).datasets[dataset].classifiers[classifier].fit_jobs[0]
    return job.seconds / (len(job.cells) * len(job.repeats) * (job.runs[1] - job.runs[0]))


def test_every_fit_is_in_exactly_one_job_of_at_most_the_target():
    # the target: 5 fits of big's cells (a repeat's 10 runs must split), whatever the shipped
    # cost model says a fit costs
    target = 5 * _one_fit_seconds(study(), "big", "lr-sgd")
    config = study(jobs={"target_minutes": target / 60})
    plan = plan_study(completed(config), {})
    for name, ds in plan.datasets.items():
        for clf, cp in ds.classifiers.items():
            fits = [(cell, r, k) for job in cp.fit_jobs for cell in job.cells
                    for r in job.repeats for k in range(*job.runs)]
            want = list(product(ids(ds.cells), range(10), range(10)))
            assert sorted(fits) == sorted(want), (name, clf)
            for job in cp.fit_jobs:
                assert re.fullmatch(JOB_ID, job.id), job.id
                # or a single fit, or one stack of the MLP's batched runs (never split:
                # tests/test_gpu_stacks.py)
                stack = mlp.stack_size(ds.shape.n_rows - math.ceil(ds.shape.n_rows * 0.25),
                                       ds.shape.d, 10) if clf == "mlp" else 1
                assert job.seconds <= target * 1.0001 or job.fits == 1 or (
                    len(job.cells) == len(job.repeats) == 1
                    and job.runs[1] - job.runs[0] <= stack), (name, clf, job)
            # each fit job is read by one metrics job, which gets whole repeats: every run of
            # each of its repeats, for all its cells
            read = [f for m in cp.metrics_jobs for f in m.fit_jobs]
            assert sorted(read) == sorted(job.id for job in cp.fit_jobs)
            for m in cp.metrics_jobs:
                assert re.fullmatch(JOB_ID, m.id)
                fits = [plan.fit_job(name, clf, f) for f in m.fit_jobs]
                assert {job.cells for job in fits} == {m.cells}
                for r in m.repeats:
                    runs = sorted(k for job in fits if r in job.repeats
                                  for k in range(*job.runs))
                    assert runs == list(range(10))
    small = plan.datasets["small"].classifiers["lr-sgd"]
    # cheap: every chunk in one group, its repeats in consecutive batches of several (issue 67:
    # a process's start-up paid once per batch), each batch one fit job and one metrics job
    batches = [job.repeats for job in small.fit_jobs]
    assert [r for b in batches for r in b] == list(range(10))
    assert len(batches) < 10 and len(batches[0]) > 1
    group = small.fit_jobs[0].id.split(".")[0]
    assert "+" in group
    assert [job.id for job in small.fit_jobs] == [
        f"{group}.r{b[0]}" + (f"-{b[-1]}" if len(b) > 1 else "") for b in batches]
    assert [m.id for m in small.metrics_jobs] == [job.id for job in small.fit_jobs]
    big = plan.datasets["big"].classifiers["lr-sgd"]
    assert any(".k" in job.id for job in big.fit_jobs)  # dear: runs split across jobs
    assert plan.datasets["big"].collapsed == ["categorical"]
    assert plan.datasets["cats"].collapsed == ["data"]
    assert plan.datasets["big"].probabilities == "compact"
    assert plan.datasets["small"].probabilities == "dense"


def test_the_plan_says_why_it_has_its_fit_jobs():
    """Full study item of issue 67 (the job count says why): the report's line counts the
    batches of whole repeats by their repeats and the parts of split repeats, which add up to
    the fit jobs of every rule, and the metrics jobs."""
    target = 5 * _one_fit_seconds(study(), "big", "lr-sgd")  # big's repeats split
    config = study(jobs={"target_minutes": target / 60})
    plan = plan_study(completed(config), {})
    text = format_plan(plan, config)
    line = re.search(r"  why ([\d,]+) fit jobs \((\d+) dataset x classifier blocks\): ([\d,]+) "
                     r"batches of whole repeats \((.*?)\), each sized to at least 20 fit-job "
                     r"start-ups \(2\.8 s each\) .*?; ([\d,]+) parts of repeats longer than "
                     r"jobs.target_minutes, split by cells and runs; a metrics job per batch or "
                     r"split repeat \(([\d,]+)\)", text)
    assert line, text
    n_jobs, blocks, batches, counted, parts, metrics = line.groups()
    jobs = [job for ds in plan.datasets.values() for cp in ds.classifiers.values()
            for job in cp.fit_jobs]
    split = [job for job in jobs if ".k" in job.id or ".c" in job.id.split("+")[-1]]
    counts = job_counts("results", config, plan)
    as_int = {k: int(v.replace(",", "")) for k, v in dict(
        n=n_jobs, batches=batches, parts=parts, metrics=metrics).items()}
    assert as_int["n"] == counts["fit"] + counts["fit_mlp"] == len(jobs)
    assert int(blocks) == 3 * 3
    assert as_int["parts"] == len(split) > 0
    assert as_int["batches"] + as_int["parts"] == as_int["n"]
    assert as_int["metrics"] == counts["pairwise_metrics"]
    one = sum(len(job.repeats) == 1 for job in jobs if job not in split)
    several = [len(job.repeats) for job in jobs if len(job.repeats) > 1]
    span = f"{min(several)}" + (f"-{max(several)}" if max(several) > min(several) else "")
    assert counted == f"{one:,} of one repeat, {len(several):,} of {span} repeats"


def test_a_chunk_whose_one_run_is_too_long_is_split_by_cells():
    # the target: 1.5 fits of one cell (from the shipped cost model), so one run of a chunk of
    # cells is too long for a job
    target = 1.5 * _one_fit_seconds(study(), "big", "lr-sgd")
    plan = plan_study(completed(study(jobs={"target_minutes": target / 60})), {})
    jobs = plan.datasets["big"].classifiers["lr-sgd"].fit_jobs
    assert any(".c1." in job.id for job in jobs)
    assert all(len(job.cells) * (job.runs[1] - job.runs[0]) == 1
               or job.seconds <= target * 1.0001 for job in jobs)


def test_one_hot_columns_cost_xgb_less_than_numeric_ones_and_the_sgd_alike():
    """The plan gives the cost model each dataset's one-hot share of its encoded columns: 30
    one-hot columns (10 categorical features of 3 levels) against 30 numeric ones."""
    config = study(datasets={"numeric": openml(3000, 30, 0, 2), "cats": openml(3000, 0, 10, 2)})
    plan = plan_study(completed(config), {})
    fit_s = {(name, clf): cp.fit_seconds for name, ds in plan.datasets.items()
             for clf, cp in ds.classifiers.items()}
    assert plan.datasets["numeric"].shape.d == plan.datasets["cats"].shape.d == 30
    assert fit_s["cats", "xgb"] < 0.8 * fit_s["numeric", "xgb"]
    cells = {name: len(ds.cells) for name, ds in plan.datasets.items()}
    per_fit = {name: fit_s[name, "lr-sgd"] / cells[name] for name in cells}
    # lr-sgd's passes cost the same per column of either kind; what differs is the epochs to
    # converge (one-hot weights 0.65-0.95 calibrated, 2026-11-25): alike, within 20 %
    assert 0.8 < per_fit["cats"] / per_fit["numeric"] < 1.25


def test_few_valued_columns_cost_xgb_less_unless_noise_fills_them():
    """A profile's ``few_valued`` numeric features (word counts, flags: at most 16 distinct
    values) cost xgb φ of continuous ones (its histograms have a bin per value), the others
    alike; a data-noise cell gives them continuous values, so its fits cost as before."""
    from modelvar.planning import plan as plan_module
    from modelvar.planning.cost_model import load

    few = openml(3000, 30, 0, 2)
    few["profile"]["few_valued"] = 30
    config = study(datasets={"continuous": openml(3000, 30, 0, 2), "few": few})
    plan = plan_study(completed(config), {})
    cost = load()
    phi = cost.few_valued["xgb"]
    # 30 few-valued columns of 30 cost xgb φ of continuous ones beside its row's own cost d0
    d0 = cost.regime("xgb", 3000, 2, 30).column_offset
    factor = (d0 + 30 * phi) / (d0 + 30)
    assert phi < 0.5 and factor < 0.75
    shapes = {name: ds.shape for name, ds in plan.datasets.items()}
    assert shapes["few"].n_few_valued == 30 and shapes["continuous"].n_few_valued == 0
    noisy = 0
    for clf, cell in product(("xgb", "lr-sgd"), plan.datasets["few"].cells):
        few_s, continuous_s = (plan_module._fit_seconds(cost, clf, cell, shapes[name], config,
                                                        1, None) - plan_module.FIT_OVERHEAD_SECONDS
                               for name in ("few", "continuous"))
        noisy += plan_module.adds_noise(cell.data)
        if clf == "xgb" and not plan_module.adds_noise(cell.data):
            assert few_s / continuous_s == pytest.approx(factor), cell.id
        else:
            assert few_s / continuous_s == pytest.approx(1.0, abs=0.03), (clf, cell.id)
    assert noisy  # the design has noisy cells
    few["profile"]["few_valued"] = 31
    with pytest.raises(PlanError, match=r"few\.profile: few_valued \(31\) counts numeric "
                                        r"features, of which it has 30"):
        plan_study(completed(config), {})


def test_plan_needs_a_profile_for_openml_and_respects_settings():
    config = study()
    del config["datasets"]["small"]["profile"]
    with pytest.raises(PlanError, match="small: an OpenML dataset needs a `profile`"):
        plan_study(completed(config), {})
    def form(n_classes, **predictions):
        return probability_form(n_classes, completed(study(predictions=predictions)))

    assert form(11) == "compact" and form(10) == "dense"
    assert form(3, probabilities="compact") == "compact"
    assert form(500, max_dense_classes=1000) == "dense"


def test_the_plan_report_names_totals_and_biggest_items():
    config = study()
    plan = plan_study(completed(config), {})
    text = format_plan(plan, config)
    # OpenML datasets: a probe job per dataset x CPU classifier after the download
    assert "jobs per rule: prepare_dataset 3, design 3, probe_data 6, fit " in text
    assert "total: " in text and "biggest items:" in text and "CPU time: big" in text
    assert "(data collapsed)" in text and "(categorical collapsed)" in text
    mlp_hours = re.search(r"MLP ([\d.,]+ (?:h|min)) on one CPU core; GPU speed-up unmeasured",
                          text)
    assert mlp_hours, text
    # per classifier: the CPU ones' shares of the CPU fitting and tuning, summing to the
    # datasets' own per-classifier hours
    by_clf = re.search(r"fitting and tuning by classifier: (.*)", text).group(1)
    shares = dict(re.findall(r"(lr-sgd|xgb) [\d.,]+ (?:h|min) \((\d+) %\)", by_clf))
    assert set(shares) == {"lr-sgd", "xgb"} and 99 <= sum(map(int, shares.values())) <= 101
    assert re.search(r"mlp [\d.,]+ (?:h|min) \(MLP time\)", by_clf), by_clf
    totals = dataset_totals(plan, config)
    xgb = sum(t.per_classifier["xgb"] for t in totals)
    lr = sum(t.per_classifier["lr-sgd"] for t in totals)
    assert int(shares["xgb"]) == round(100 * xgb / (xgb + lr))
    config["jobs"] = {**config.get("jobs", {}), "gpu_speedup": 8.0}
    on_gpu = format_plan(plan_study(completed(config), {}), config)
    assert "on one GPU (jobs.gpu_speedup: 8 x one CPU core)" in on_gpu
    assert "unmeasured" not in on_gpu
    counts = job_counts("results", config, plan)
    assert counts["fit_mlp"] == len(plan.datasets["big"].classifiers["mlp"].fit_jobs) + sum(
        len(plan.datasets[d].classifiers["mlp"].fit_jobs) for d in ("small", "cats"))


def test_a_gpu_speedup_by_the_size_of_the_fit():
    """jobs.gpu_speedup as {from seconds of one core: speed-up} (a small fit leaves a GPU idle):
    the MLP's small fits get the first, its big ones the second; the report says so."""
    assert gpu_speedup_at(8.0, 5) == 8.0
    by_size = {0: 2.0, 100: 50.0, 1000: 80.0}
    assert [gpu_speedup_at(by_size, s) for s in (0, 99.9, 100, 999, 5000)] == \
        [2.0, 2.0, 50.0, 50.0, 80.0]

    def mlp_seconds(speedup):
        config = study(jobs={"target_minutes": 30, "gpu_speedup": speedup})
        plan = plan_study(completed(config), {})
        return plan, config, {name: sum(j.seconds for j in ds.classifiers["mlp"].fit_jobs)
                              for name, ds in plan.datasets.items()}

    _, _, on_cpu = mlp_seconds(1)
    plan, config, on_gpu = mlp_seconds({"0": 2, "100": 50})  # keys as a JSON config has them
    assert 1.5 < on_cpu["small"] / on_gpu["small"] <= 2.0  # seconds a fit; + fixed costs
    assert 40 < on_cpu["big"] / on_gpu["big"] <= 50.0  # minutes a fit
    assert "on one GPU (jobs.gpu_speedup: 2 x one CPU core for fits below 100 s of one core, " \
        "50 x from 100 s)" in format_plan(plan, config)


def test_xgb_put_on_a_gpu_leaves_the_cpu_hours_for_the_gpu_ones():
    """classifier_settings.xgb.gpu: its fit jobs move to the GPU rule, its hours (at its own
    speed-up) to the GPU's; the CPU's are what is left."""
    config = study()
    cpu_plan = plan_study(completed(config), {})
    cpu_totals = dataset_totals(cpu_plan, config)
    before = job_counts("results", config, cpu_plan)
    config["classifier_settings"] = {"xgb": {"gpu": True, "gpu_speedup": {0: 2, 1000: 20}}}
    gpu_plan = plan_study(completed(config), {})
    totals = dataset_totals(gpu_plan, config)
    xgb_cpu = sum(t.per_classifier["xgb"] for t in cpu_totals)
    xgb_gpu = sum(t.per_classifier["xgb"] for t in totals)

    def xgb_metrics(plan):  # its metrics jobs stay on the CPU, regrouped with its batches
        return sum(j.seconds for ds in plan.datasets.values()
                   for j in ds.classifiers["xgb"].metrics_jobs)

    assert sum(t.cpu_seconds for t in totals) == pytest.approx(
        sum(t.cpu_seconds for t in cpu_totals) - xgb_cpu - xgb_metrics(cpu_plan)
        + xgb_metrics(gpu_plan), rel=1e-9)
    assert 2 < xgb_cpu / xgb_gpu < 20
    counts = job_counts("results", config, gpu_plan)
    xgb_jobs = sum(len(ds.classifiers["xgb"].fit_jobs) for ds in gpu_plan.datasets.values())
    assert counts["fit"] == before["fit"] - sum(
        len(ds.classifiers["xgb"].fit_jobs) for ds in cpu_plan.datasets.values())
    assert counts["fit_mlp"] == before["fit_mlp"] + xgb_jobs
    text = format_plan(gpu_plan, config)
    assert "GPU (jobs.gpu_speedup, classifier_settings.NAME.gpu_speedup: xgb 2 x one CPU core " \
        "for fits below 1,000 s of one core, 20 x from 1,000 s; mlp unmeasured: 1 x one CPU " \
        "core)" in text
    assert re.search(r"xgb [\d.,]+ (?:h|min) \(GPU time\)", text), text


def test_the_mlp_tuning_one_fit_at_a_time_takes_its_own_gpu_speedup():
    """The MLP's gpu_speedup is that of its batched fit jobs; its tuning fits one trial at a
    time, at classifier_settings.mlp.gpu_speedup_alone (default 1: one core's speed), which
    divides exactly its tuning hours; the report says which speed-up its tuning took."""
    from modelvar.planning.plan_report import tuning_seconds

    def mlp_hours(**settings):
        config = study(hparams="tuned", tuning={"trials": 4, "folds": 3},
                       jobs={"target_minutes": 30, "gpu_speedup": 40})
        config["classifier_settings"] = {"mlp": settings} if settings else {}
        plan = plan_study(completed(config), {})
        tune = {name: tuning_seconds(plan, config, name, "mlp") for name in plan.datasets}
        fit = sum(ds.classifiers["mlp"].fit_seconds for ds in plan.datasets.values())
        return tune, fit, format_plan(plan, config)

    one_core, fit, text = mlp_hours()
    assert "mlp tuning one fit at a time: at one CPU core's speed (its gpu_speedup_alone " \
        "unmeasured)" in text
    alone, fit_alone, text = mlp_hours(gpu_speedup_alone=4)
    assert fit_alone == fit  # the fit jobs keep the batched speed-up
    for name in one_core:
        assert alone[name] == pytest.approx(one_core[name] / 4)
    assert "mlp tuning one fit at a time: 4 x one CPU core (classifier_settings.mlp." \
        "gpu_speedup_alone)" in text
    by_size, _, _ = mlp_hours(gpu_speedup_alone={0: 1, 100: 10})
    fits = 4 * 3
    for name in one_core:
        per_fit = one_core[name] / fits
        assert by_size[name] == pytest.approx(one_core[name] / (10 if per_fit >= 100 else 1))
    assert by_size["small"] == pytest.approx(one_core["small"])  # small fits: one core's speed
    assert by_size["big"] == pytest.approx(one_core["big"] / 10)


def test_a_profile_that_would_change_the_plan_stops_the_prepare_job():
    profile = {"rows": 1000, "numeric": 5, "categorical": 0, "classes": 2}
    problems, warnings = profile_problems("d", profile, n_rows=1000, n_numeric=5,
                                          n_categorical=0, n_classes=2)
    assert problems == warnings == []
    problems, warnings = profile_problems("d", profile, n_rows=1500, n_numeric=6,
                                          n_categorical=3, n_classes=4)
    assert len(problems) == 2 and "3 categorical" not in problems[0]
    assert any("categorical" in p for p in problems) and any("4" in p for p in problems)
    assert len(warnings) == 2  # rows and the numeric count only change estimates
    # a declared few-valued count is checked too (estimates only); an undeclared one is not
    assert profile_problems("d", profile, n_rows=1000, n_numeric=5, n_categorical=0,
                            n_classes=2, n_few_valued=3) == ([], [])
    problems, warnings = profile_problems("d", {**profile, "few_valued": 5}, n_rows=1000,
                                          n_numeric=5, n_categorical=0, n_classes=2,
                                          n_few_valued=3)
    assert problems == [] and len(warnings) == 1
    assert "5 few-valued numeric features" in warnings[0] and "has 3" in warnings[0]


def test_cell_ids_of_the_design_parse_back():
    cells, _ = dataset_cells(GRID, "both")
    assert [Cell.parse(c.id) for c in cells] == cells


def test_noop_families_collapse_on_vehicle_and_on_all_categorical_car(tmp_path):
    """vehicle has no categorical features, car no numeric ones: their no-op levels give no
    cells, no fits, and one warning each; anneal (both kinds) keeps every cell."""
    import yaml

    from modelvar.planning.config_check import check_config

    config = {"root_seed": 1, "datasets": {n: {"source": "embedded"}
                                           for n in ("vehicle", "car", "anneal")},
              "classifiers": ["lr-sgd"], "split": {"repeats": 2, "runs": 3},
              "perturbation": {"data": ["none", {"rel": 0.2}],
                               "categorical": ["none", {"label": 0.1}]},
              "design": "factorial"}
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    study = check_config(config, schema)
    plan = plan_study(config, study.schemas)
    cells = {name: ids(ds.cells) for name, ds in plan.datasets.items()}
    assert cells["vehicle"] == ["dnone_cnone_hnone_down100_seedfix",
                                "rel0p2_cnone_hnone_down100_seedfix"]
    assert cells["car"] == ["dnone_cnone_hnone_down100_seedfix",
                            "dnone_label0p1_hnone_down100_seedfix"]
    assert len(cells["anneal"]) == 4
    fits = {name: ds.classifiers["lr-sgd"].fits for name, ds in plan.datasets.items()}
    assert fits == {"vehicle": 2 * 2 * 3, "car": 2 * 2 * 3, "anneal": 4 * 2 * 3}
    warnings = plan.warnings()
    assert len(warnings) == 2
    assert warnings[0].startswith("vehicle: no categorical features")
    assert warnings[1].startswith("car: no numeric features")


def test_plan_jobs_lists_every_job_with_its_rule(capsys):
    """`modelvar plan --jobs` (issue 24): one line per fit, metrics and grouped-metrics job,
    as many per rule as the plan counts, each fit line with its fits."""
    from modelvar.cli import main

    assert main(["plan", "--jobs", "--", "--configfile",
                 str(REPO / "tests" / "configs" / "tiny.yaml")]) == 0
    out = capsys.readouterr().out
    listing = out[out.index("\nrule "):].strip().splitlines()[1:]
    by_rule: dict[str, int] = {}
    fits = 0
    for line in listing:
        rule = line.split()[0]
        by_rule[rule] = by_rule.get(rule, 0) + 1
        if rule == "fit":
            fits += int(line.split()[7].replace(",", ""))
    expected = re.search(r"jobs per rule: (.*?);", out).group(1)
    counts = {rule: int(n.replace(",", "")) for rule, n in
              (item.rsplit(" ", 1) for item in expected.split(", "))}
    assert by_rule == {r: counts[r] for r in ("fit", "pairwise_metrics", "grouped_metrics")}
    assert fits == int(re.search(r"total: ([\d,]+) fits", out).group(1).replace(",", ""))


def test_repeats_are_additive(tmp_path):
    """Issues 54 and 67: once a run has recorded its batches of repeats, a repeat's jobs do not
    depend on how many repeats the study has: four repeats are the three's jobs (the same cells,
    runs and estimate) plus jobs of repeat 3 alone, and fewer repeats keep the first ones' jobs
    unchanged; without a record the batches are planned afresh."""
    target = 5 * _one_fit_seconds(study(), "big", "lr-sgd")

    def jobs(repeats, record=False):
        config = study(jobs={"target_minutes": target / 60}, results_dir=str(tmp_path))
        config["split"]["repeats"] = repeats
        plan = plan_study(completed(config), {})
        if record:
            repeat_batches.record(tmp_path, plan.batches())
        return {(name, clf, job.id): job for name, ds in plan.datasets.items()
                for clf, cp in ds.classifiers.items()
                for job in [*cp.fit_jobs, *cp.metrics_jobs]}

    unrecorded_four = jobs(4)
    three = jobs(3, record=True)
    four = jobs(4, record=True)
    assert set(three) < set(four)
    assert all(four[key] == job for key, job in three.items())
    added = [four[key] for key in set(four) - set(three)]
    assert added and all(job.repeats == (3,) for job in added)
    # planned afresh, repeat 3 joins a batch of the first three (what the record prevents)
    assert set(unrecorded_four) != set(four)
    # seven repeats after four: the recorded batches kept, 4-6 batched together
    seven = jobs(7, record=True)
    assert set(four) < set(seven)
    assert any(job.repeats == (4, 5, 6) for key, job in seven.items() if key not in four)
    # two repeats: the batch holding repeat 1 is cut to it, nothing beyond it planned
    two = jobs(2)
    assert all(max(job.repeats) < 2 for job in two.values())
    assert {job.repeats for job in two.values()} >= {(0, 1)}
