"""numba kernels compiled once (issue 55): set-up compiles them into numba's cache, and a fit
job's log says whether its kernels were loaded or compiled."""

from __future__ import annotations

import subprocess
import sys

from modelvar.models.kernel_cache import KernelUse

FIT = """
import numpy as np
from modelvar.models.ovr_sgd import OvRSGDClassifier
from modelvar.models.kernel_cache import kernel_summary, kernel_use
rng = np.random.default_rng(1)
X, y = rng.normal(size=(200, 6)), rng.integers(0, 5, 200)
assert kernel_use() is None  # nothing imported before the first many-class fit
OvRSGDClassifier(loss="hinge").fit(X, y).predict(X)
print(kernel_summary())
"""


def test_a_fit_in_a_new_process_loads_every_kernel_from_the_cache():
    """After scripts/setup-venv.sh (its `python -m modelvar.models.kernel_cache`, run here
    again: it loads or compiles), a new process fitting a five-class SGD model compiles
    nothing."""
    warm = subprocess.run([sys.executable, "-m", "modelvar.models.kernel_cache"],
                          capture_output=True, text=True, timeout=600)
    assert warm.returncode == 0, warm.stderr
    assert "numba kernels:" in warm.stdout
    fit = subprocess.run([sys.executable, "-c", FIT], capture_output=True, text=True,
                         timeout=600)
    assert fit.returncode == 0, fit.stderr
    line = fit.stdout.strip().splitlines()[-1]
    assert line.startswith("numba kernels: ") and line.endswith(", 0 compiled"), line


FIT_JOB = """
import logging, sys
from pathlib import Path
from modelvar.data import load
from modelvar.pipeline.fitting import fit_job
from modelvar.study.cells import Cell
logging.basicConfig(level=logging.INFO, stream=sys.stdout)
out = Path(sys.argv[2])
data = load("many", {"source": "file", "path": sys.argv[1], "target": "y"})
fit_job(data, classifier="lr-sgd", cells=[Cell()], repeats=[0], n_runs=2, test_fraction=0.25,
        root_seed=1, predictions_out=out / "p.parquet", runs_out=out / "r.parquet")
"""


def test_a_many_class_fit_job_says_its_kernels_came_from_the_cache(tmp_path):
    """A fit job of lr-sgd on 24 classes (numba's kernels from 20 classes on), in a new
    process after set-up: its log says every kernel was loaded, none compiled."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(480, 5)), columns=[f"x{i}" for i in range(5)])
    frame["y"] = [f"c{i % 24}" for i in range(480)]
    frame.to_csv(tmp_path / "many.csv", index=False)
    subprocess.run([sys.executable, "-m", "modelvar.models.kernel_cache"], check=True,
                   capture_output=True, timeout=600)
    job = subprocess.run([sys.executable, "-c", FIT_JOB, str(tmp_path / "many.csv"),
                          str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert job.returncode == 0, job.stderr
    lines = [line for line in job.stdout.splitlines() if "numba kernels:" in line]
    assert len(lines) == 1 and "loaded from the cache" in lines[0], job.stdout[-2000:]
    assert lines[0].endswith(", 0 compiled"), lines[0]


def test_the_log_line_of_a_job_that_compiled():
    line = KernelUse(loaded=1, compiled=5, cache="/shared/cache").line()
    assert "5 compiled in this job" in line and "/shared/cache" in line
    assert "setup-venv.sh" in line
