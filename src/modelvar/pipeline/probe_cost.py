"""What a declared classifier's fit costs, for the plan, when the cost model has no constants
for it: its declared ``seconds_per_fit``, else a few probe fits when the plan is first made.

**Probes.** For each dataset shape of the study (d encoded columns, C classes; training rows n),
the classifier is fitted on synthetic data of that shape at n₁ = min(n, 250) and
n₂ = min(n, 1,000) rows (the best of two fits each); the cost model's power law
(:func:`modelvar.pipeline.cost_model.fit`: seconds = e^b0 · n^b1 · d^b2 · C^b3) is fitted to
those times. The data: X standard normal, y the argmax of X·W plus noise (W standard normal, d × C),
from the stream ``(cost-probe, classifier)``, so that trees and margins have something to learn.

**Cached**, because every load of the workflow (a SLURM job step too) must make the same plan:
the fitted constants go to ``RESULTS/.modelvar/probe-costs.json``, keyed by the declaration and
the shapes probed; a changed declaration or new shapes are probed again. Measured on the machine
that makes the plan (the head node): recalibrate from a finished run for the cluster's own times
(``modelvar plan --calibrate``).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from modelvar.pipeline.cost_model import FitCost, fit
from modelvar.seeding import stream
from modelvar.table_files import write_text

PROBE_ROWS = (250, 1000)
CACHE = Path(".modelvar", "probe-costs.json")


def declared_cost(seconds_per_fit: float) -> FitCost:
    """A constant cost: ``seconds_per_fit`` whatever the shape."""
    return FitCost(float(np.log(seconds_per_fit)), (0.0, 0.0, 0.0, 0.0))


def _best_seconds(model_of, X, y, n_classes: int, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        model = model_of()
        start = time.perf_counter()
        model.fit(X, y, n_classes)
        model.predict(X)
        best = min(best, time.perf_counter() - start)
    return best


def probe(name: str, shapes: list[tuple[int, int, int]]) -> FitCost:
    """Fit the registered classifier ``name`` on synthetic data of each (n_train, d, C) shape
    (module docstring) and return the fitted power law."""
    from modelvar.models.registry import make_classifier

    rng = stream(0, "cost-probe", classifier=name).generator()
    samples = []
    for n_train, d, n_classes in shapes:
        W = rng.standard_normal((d, n_classes))
        for rows in sorted({min(n_train, r) for r in PROBE_ROWS}):
            rows = max(rows, 2 * n_classes)
            X = rng.standard_normal((rows, d))
            y = np.argmax(X @ W + rng.standard_normal((rows, n_classes)), axis=1)
            y[:n_classes] = np.arange(n_classes)  # every class present
            seconds = _best_seconds(lambda: make_classifier(name, seed=0), X, y, n_classes)
            samples.append((rows, d, n_classes, 1, seconds))
    return fit({name: np.array(samples)}, source="probe fits", regimes={name: ()},
               with_overhead=False).classifiers[name][0]


def probed_cost(name: str, declaration: dict, shapes: list[tuple[int, int, int]],
                results_dir: str | Path) -> tuple[FitCost, str]:
    """The cached probe of ``name`` for these shapes, else a new one (written to the cache);
    with a note for the plan saying where the cost comes from."""
    shapes = sorted({(int(n), int(d), int(c)) for n, d, c in shapes})
    key = hashlib.sha256(json.dumps([declaration, shapes], sort_keys=True).encode()).hexdigest()
    path = Path(results_dir) / CACHE
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        cache = {}
    cache = cache if isinstance(cache, dict) else {}
    entry = cache.get(name)
    if isinstance(entry, dict) and entry.get("key") == key:
        cost = FitCost.from_dict(entry)
        return cost, f"probe fits of {entry['when']}, cached in {path}"
    cost = probe(name, shapes)
    when = time.strftime("%Y-%m-%d %H:%M")
    cache[name] = {"key": key, **cost.as_dict(), "when": when, "shapes": shapes}
    write_text(json.dumps(cache, sort_keys=True, indent=1) + "\n", path)
    return cost, f"probe fits made now ({when}), cached in {path}"
