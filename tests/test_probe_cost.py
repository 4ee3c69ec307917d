"""Probe fits of a declared classifier without ``seconds_per_fit`` (issue 45): within a budget
of CPU seconds, a line per fit as it goes, extrapolated to the study's rows with the cost
model's power law, and a busy machine does not change the estimate."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from modelvar import timing
from modelvar.models import registry
from modelvar.planning import probe_cost
from modelvar.planning.probe_cost import ProbeShape

# a slow estimator whose fit costs 2e-5 CPU seconds per row × column × class, on a counter that
# stands in for the CPU clock (so the test measures nothing and takes no time)
SLOW_SOURCE = textwrap.dedent('''
    import numpy as np

    CLOCK = {"cpu": 0.0}


    class Slow:
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            CLOCK["cpu"] += 2e-5 * X.shape[0] * X.shape[1] * len(self.classes_)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])
''')
# a really slow one: sorting copies of the data, single-threaded, ~proportional to rows
SORTER_SOURCE = textwrap.dedent('''
    import numpy as np


    class Sorter:
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            for _ in range(40):
                np.sort(X + 0.0, axis=0)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])
''')


@pytest.fixture
def declared(tmp_path, monkeypatch):
    """Register the estimators above as the classifiers ``slow`` and ``sorter``."""
    (tmp_path / "probe_estimators.py").write_text(SLOW_SOURCE + SORTER_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    problems = registry.declare({"classifiers": [
        {"name": "slow", "estimator": "probe_estimators.Slow"},
        {"name": "sorter", "estimator": "probe_estimators.Sorter"}]})
    assert problems == []
    import probe_estimators

    yield probe_estimators
    registry.declare({"classifiers": []})
    sys.modules.pop("probe_estimators", None)


def test_a_slow_estimators_probe_stays_within_its_budget_and_says_what_it_does(declared,
                                                                              monkeypatch):
    clock = declared.CLOCK
    monkeypatch.setattr(timing, "cpu", lambda: clock["cpu"])
    lines = []
    shapes = [ProbeShape(20_000, 216, 10, ("big",)), ProbeShape(5_000, 20, 3, ("small",))]
    cost, note = probe_cost.probe("slow", shapes, budget=10.0, say=lines.append)
    # a line per fit, cheapest shape first, before the fit
    assert lines[0] == ("probing slow on the shape of small (5,000 rows × 20 × 3 classes): "
                        "fit 1 of ≤ 8, 64 rows (0.0 of 10 s CPU used)")
    assert any(line.startswith("probing slow on the shape of big (20,000 rows × 216 × 10 "
                               "classes): fit 1 of ≤ 10, 64 rows") for line in lines)
    assert clock["cpu"] <= 10.0
    assert note.startswith(f"{len(lines)} probe fits on 2 shape(s)")
    # the power law extrapolates to the study's rows: 2e-5 · n · d · C
    for n, d, c in ((20_000, 216, 10), (5_000, 20, 3), (1_000, 216, 10)):
        assert cost.seconds(n, d, c) == pytest.approx(2e-5 * n * d * c, rel=1e-6)


def test_a_probe_grows_to_the_studys_rows_while_its_budget_lasts(declared, monkeypatch):
    """Issue 55: probes stopped at 2,048 rows with most of the budget unspent and extrapolated
    12x; now they grow towards the study's rows (here all the way: 5,000)."""
    clock = declared.CLOCK
    monkeypatch.setattr(timing, "cpu", lambda: clock["cpu"])
    lines = []
    probe_cost.probe("slow", [ProbeShape(5_000, 20, 3, ("small",))], budget=40.0,
                     say=lines.append)
    assert lines[-1].startswith("probing slow on the shape of small (5,000 rows × 20 × 3 "
                                "classes): fit 8 of ≤ 8, 5,000 rows")
    assert ProbeShape(10**7, 1000, 2).sizes()[-1] == probe_cost.MAX_CELLS // 1000


def test_a_budget_too_small_for_two_row_counts_takes_the_cost_as_linear(declared,
                                                                        monkeypatch):
    clock = declared.CLOCK
    monkeypatch.setattr(timing, "cpu", lambda: clock["cpu"])
    lines = []
    cost, note = probe_cost.probe("slow", [ProbeShape(20_000, 216, 10, ("big",))], budget=1.0,
                                  say=lines.append)
    assert len(lines) == 1 and "one row count each, so the cost is taken as linear" in note
    assert cost.seconds(20_000, 216, 10) == pytest.approx(2e-5 * 20_000 * 216 * 10, rel=1e-6)


def test_the_plan_probes_once_and_points_at_seconds_per_fit(declared, tmp_path, monkeypatch):
    clock = declared.CLOCK
    monkeypatch.setattr(timing, "cpu", lambda: clock["cpu"])
    lines = []
    shapes = [ProbeShape(2_000, 50, 4, ("a",)), ProbeShape(2_000, 50, 4, ("b",))]
    cost, note = probe_cost.probed_cost("slow", {"estimator": "x"}, shapes, tmp_path / "r",
                                        budget=5.0, say=lines.append)
    assert lines[0].startswith("slow declares no seconds_per_fit: timing probe fits")
    assert "the shape of a, b (2,000 rows × 50 × 4 classes)" in lines[1]
    assert note.startswith("probe fits made now") and "seconds_per_fit" in note
    spent = clock["cpu"]
    again, note = probe_cost.probed_cost("slow", {"estimator": "x"}, shapes, tmp_path / "r",
                                         budget=5.0, say=lines.append)
    assert again == cost and clock["cpu"] == spent and note.startswith("probe fits of ")
    # another budget is another probe
    probe_cost.probed_cost("slow", {"estimator": "x"}, shapes, tmp_path / "r", budget=2.0,
                           say=lines.append)
    assert clock["cpu"] > spent


def test_a_dataset_removed_probes_nothing_and_one_added_probes_only_its_shape(declared,
                                                                              tmp_path,
                                                                              monkeypatch):
    """Issue 67: the probes of a declared classifier are cached per shape, so a config that
    loses a dataset is planned from the cache, and a new dataset's shape is the only one
    probed; the cost is fitted to the samples of the study's own shapes."""
    clock = declared.CLOCK
    monkeypatch.setattr(timing, "cpu", lambda: clock["cpu"])
    a, b, c = (ProbeShape(2_000, 50, 4, ("a",)), ProbeShape(4_000, 20, 2, ("b",)),
               ProbeShape(1_000, 80, 3, ("c",)))

    def probed(shapes):
        lines = []
        cost, note = probe_cost.probed_cost("slow", {"estimator": "x"}, shapes,
                                            tmp_path / "r", budget=5.0, say=lines.append)
        return cost, note, [line for line in lines if line.startswith("probing")]

    both, _, lines = probed([a, b])
    assert {line.split(" on the shape of ")[1].split(" (")[0] for line in lines} == {"a", "b"}
    _, note, lines = probed([a])  # b removed: nothing probed
    assert lines == [] and note.startswith("probe fits of ")
    _, note, lines = probed([a, b, c])  # c added: only c's shape
    assert lines and all(" on the shape of c " in line for line in lines)
    assert note.startswith("probe fits made now")
    again, _, lines = probed([a, b])
    assert lines == [] and again == both  # the same samples, the same fitted cost
    assert probe_cost.probed_cost("slow", {"estimator": "x"}, [a, c], tmp_path / "r",
                                  budget=5.0, probe_now=False)[1].startswith("probe fits of ")


def test_a_busy_machine_does_not_change_a_probes_estimate(declared):
    """The probe timed with both cores busy (two spinning processes, stopped afterwards)
    estimates within 1.5x of the probe timed without them: it counts CPU seconds."""
    shapes = [ProbeShape(50_000, 200, 2, ("a",))]

    def estimate() -> float:
        cost, _ = probe_cost.probe("sorter", shapes, budget=3.0, say=lambda line: None)
        return cost.seconds(50_000, 200, 2)

    idle = estimate()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        busy = estimate()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"probe estimate idle {idle:.2f} s, busy {busy:.2f} s ({busy / idle:.2f}x)")
    assert 1 / 1.5 <= busy / idle <= 1.5, (idle, busy)
