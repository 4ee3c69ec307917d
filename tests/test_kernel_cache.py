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


def test_the_log_line_of_a_job_that_compiled():
    line = KernelUse(loaded=1, compiled=5, cache="/shared/cache").line()
    assert "5 compiled in this job" in line and "/shared/cache" in line
    assert "setup-venv.sh" in line
