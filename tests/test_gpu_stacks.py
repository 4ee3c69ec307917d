"""GPU results a function of the config (issue 50, item 3): the MLP runs that train together as
one batched model (a stack) are fixed by the design and the data's shape alone, never by how
the plan sizes jobs. On a GPU a run's predictions depend on its stack; these tests run on the
CPU, where batching is forced on (``batch_mlp=True``) and the stacks are what would be trained."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import completed
from modelvar.models import mlp
from modelvar.planning.plan import plan_study
from test_plan import openml, study


def test_the_stacks_are_the_configs_runs_in_blocks_the_data_allows():
    assert mlp.stack_size(1000, 10, runs=10) == 10
    # 312,141 pool rows x 60 columns (dionis): 13 runs' training values fit the cap
    assert mlp.stack_size(312_141, 60, runs=30) == mlp.MAX_STACKED_VALUES // (312_141 * 60)
    assert mlp.stack_size(10**8, 100, runs=5) == 1
    assert [list(s) for s in mlp.stacks(5, 2)] == [[0, 1], [2, 3], [4]]


def _mlp_jobs(config: dict) -> list[tuple]:
    plan = plan_study(completed(config), {})
    return [(job.cells, job.repeats, job.runs)
            for job in plan.datasets["big"].classifiers["mlp"].fit_jobs]


def _stacks_trained(jobs, runs: int, size: int) -> set[tuple]:
    """(cell, repeat, stack) of every stack a job holds a run of; asserts each job holds whole
    stacks (no stack is split across jobs)."""
    out = set()
    for cells, repeats, (start, stop) in jobs:
        assert start % size == 0 and (stop % size == 0 or stop == runs), (start, stop, size)
        out |= {(cell, repeat, run // size) for cell in cells for repeat in repeats
                for run in range(start, stop)}
    return out


def test_the_stacks_do_not_change_with_job_sizing_speed_up_or_cost_model(tmp_path):
    from modelvar.planning.cost_model import SHIPPED

    runs = 30
    base = study(classifiers=["mlp"], split={"test_fraction": 0.25, "repeats": 2, "runs": runs},
                 datasets={"big": openml(400_000, 60, 0, 355)})
    slow = json.loads(SHIPPED.read_text())
    for regimes in slow["classifiers"].values():
        for regime in regimes:
            regime["intercept"] += np.log(25.0)  # every fit 25x dearer
    (tmp_path / "slow.json").write_text(json.dumps(slow))
    variants = {
        "target 30 min": {"target_minutes": 30},
        "target 5 min": {"target_minutes": 5},
        "target 1 week": {"target_minutes": 10080},
        "GPU 40x": {"target_minutes": 30, "gpu_speedup": 40},
        "cost model 25x": {"target_minutes": 30, "cost_model": str(tmp_path / "slow.json")},
    }
    size = mlp.stack_size(300_000, 60, runs)
    assert 1 < size < runs  # the case where a stack could straddle jobs
    layouts, trained = set(), []
    for jobs in variants.values():
        layout = _mlp_jobs({**base, "jobs": jobs})
        layouts.add(tuple(layout))
        trained.append(_stacks_trained(layout, runs, size))
    assert len(layouts) >= 3  # the job sizing did change ...
    assert all(t == trained[0] for t in trained)  # ... and the stacks did not


@pytest.fixture(scope="module")
def vehicle():
    from modelvar.data import load
    from modelvar.data.arrays import DataArrays

    return DataArrays.from_dataset(load("vehicle", {"source": "embedded"}))


def test_a_job_holding_part_of_a_stack_trains_it_whole_and_records_it(vehicle, monkeypatch):
    """Runs 0-3 of a repeat in stacks of 2: a job with run 1 alone (as a rerun of a split job)
    trains runs 0 and 1 together, as the job with all four does, and records the stack."""
    from modelvar.pipeline import fitting
    from modelvar.study.cells import Cell

    pool, _ = fitting.split_test_set(vehicle.y, 0.25, root_seed=3, dataset="vehicle", repeat=0,
                                     labels=vehicle.classes)
    d = 18  # vehicle's encoded columns
    monkeypatch.setattr(mlp, "MAX_STACKED_VALUES", 2 * len(pool) * d)
    stacked: list[list[int]] = []
    together = fitting._fit_mlp_together

    def spy(group, *args):
        stacked.append([r.run for r in group])
        return together(group, *args)

    monkeypatch.setattr(fitting, "_fit_mlp_together", spy)
    kw = dict(classifier="mlp", cell=Cell(model_seed="per-run"), repeat=0, n_runs=4,
              test_fraction=0.25, root_seed=3, epochs=1, batch_mlp=True)
    whole = fitting.fit_repeat_arrays(vehicle, runs=[0, 1, 2, 3], **kw)
    assert stacked == [[0, 1], [2, 3]]
    stacked.clear()
    part = fitting.fit_repeat_arrays(vehicle, runs=[1], **kw)
    assert stacked == [[0, 1]]
    assert [r["stack"] for r in whole.run_rows] == ["[0, 1]", "[0, 1]", "[2, 3]", "[2, 3]"]
    assert [r["stack"] for r in part.run_rows] == ["[0, 1]"]
    np.testing.assert_array_equal(part.proba[0], whole.proba[1])
    alone = fitting.fit_repeat_arrays(vehicle, runs=[1], **{**kw, "batch_mlp": False})
    assert [r["stack"] for r in alone.run_rows] == ["[1]"]
    np.testing.assert_array_equal(alone.proba[0], whole.proba[1])  # on the CPU, bit for bit
