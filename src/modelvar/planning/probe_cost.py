"""What a declared classifier's fit costs, for the plan, when the cost model has no constants
for it: its declared ``seconds_per_fit``, else probe fits when the plan is first made.

**Probes.** For each dataset shape of the study (d encoded columns, C classes; n training rows),
the classifier is fitted on synthetic data of d columns and C classes at growing row counts
(:data:`FIRST_ROWS` (at least 2·C), doubling, up to the study's n, within the budget and
:data:`MAX_CELLS` values of synthetic data; issue 55: a cap of 2,048 rows left 87 % of a
budget unspent and extrapolated 12× to the study's rows), and the cost
model's power law (:func:`modelvar.planning.cost_model.fit`: seconds = e^b0 · n^b1 · d^b2 · C^b3)
is fitted to those times, which extrapolates to the study's n. Each fit is timed in **CPU
seconds** (:mod:`modelvar.timing`: all the process's threads, so an estimator that runs several
threads is charged for each, and a busy machine does not inflate the estimate); a fit under
:data:`REPEAT_BELOW` CPU seconds is timed twice and the faster kept.

**A budget.** The probes of one classifier stop at ``budget`` CPU seconds (config
``jobs.probe_budget_seconds``): each shape, cheapest first, gets an equal share of what is left,
and the next (doubled) row count is fitted only if its expected cost — the last fit's, times the
growth seen between the last two — fits in that share. A shape whose first fit already used its
share keeps that one row count; if no shape got two, the cost is taken as linear in the rows.
Each fit prints a line as it goes (``probing …: fit 2 of ≤ 5 …``), and the note in the plan says
what was probed and points at ``seconds_per_fit``, the way to skip probing.

The data: X standard normal, y the argmax of X·W plus noise (W standard normal, d × C), from the
stream ``(cost-probe, classifier)``, so that trees and margins have something to learn.

**Cached**, because every load of the workflow (a SLURM job step too) must make the same plan:
the fitted constants go to ``RESULTS/.modelvar/probe-costs.json``, keyed by the declaration, the
shapes probed, the budget and the fit jobs' threads (the probes run with as many, as a fit job
runs the estimator); a change of any of them is probed again. Measured on the machine that makes
the plan (the head node): recalibrate from a finished run for the cluster's own times
(``modelvar plan --calibrate``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from modelvar.models.user import EstimatorContractError
from modelvar.planning.cost_model import FitCost, fit
from modelvar.seeding import stream
from modelvar.table_files import write_text
from modelvar.timing import Stopwatch

#: the smallest row count probed (at least 2·C, so that every class has rows)
FIRST_ROWS = 64
#: the most values (rows × columns) of synthetic data a probe draws (256 MiB of float64): the
#: rows probed stop there, or where the budget ends, and the power law extrapolates beyond
MAX_CELLS = 1 << 25
#: a fit cheaper than this (CPU seconds) is timed twice and the faster kept
REPEAT_BELOW = 0.5
CACHE = Path(".modelvar", "probe-costs.json")


@dataclass(frozen=True)
class ProbeShape:
    """A shape the study fits: ``rows`` training rows of ``d`` encoded columns and
    ``n_classes`` classes, for the datasets ``names``."""

    rows: int
    d: int
    n_classes: int
    names: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        where = f" of {', '.join(self.names)}" if self.names else ""
        return f"the shape{where} ({self.rows:,} rows × {self.d:,} × {self.n_classes:,} classes)"

    def sizes(self) -> list[int]:
        """The row counts to probe, smallest first."""
        top = max(min(self.rows, MAX_CELLS // max(self.d, 1)), 2 * self.n_classes)
        first = min(max(FIRST_ROWS, 2 * self.n_classes), top)
        out = [first]
        while out[-1] * 2 < top:
            out.append(out[-1] * 2)
        return out if out[-1] == top else [*out, top]


class ProbeFitFailed(RuntimeError):
    """A classifier's fit raised on the plan's synthetic data; its error is the cause."""


def declared_cost(seconds_per_fit: float) -> FitCost:
    """A constant cost: ``seconds_per_fit`` whatever the shape."""
    return FitCost(float(np.log(seconds_per_fit)), (0.0, 0.0, 0.0, 0.0))


def _say(line: str) -> None:
    print(f"modelvar: {line}", file=sys.stderr, flush=True)


def fit_cpu_timings(model_of, X, y, n_classes: int, *, at_least: int = 1) -> list[float]:
    """The CPU seconds of fit + predict, timed ``at_least`` times, and twice where the first is
    under :data:`REPEAT_BELOW`."""
    timings: list[float] = []
    while len(timings) < max(at_least, 2 if timings and timings[0] < REPEAT_BELOW else 1):
        model = model_of()
        with Stopwatch() as watch:  # what a fit job times (and the estimator's contract)
            model.fit(X, y, n_classes)
            model.predict_proba(X)
            model.predict(X)
        timings.append(watch.span.cpu)
    return timings


def fit_cpu_seconds(model_of, X, y, n_classes: int) -> tuple[float, float]:
    """(CPU seconds of one fit + predict, the CPU seconds spent timing it): the faster of two
    fits where one is under :data:`REPEAT_BELOW`."""
    timings = fit_cpu_timings(model_of, X, y, n_classes)
    return min(timings), sum(timings)


def probe(name: str, shapes: list[ProbeShape], *, budget: float, threads: int = 1,
          say: Callable[[str], None] = _say) -> tuple[FitCost, str]:
    """Fit the registered classifier ``name`` on synthetic data of each shape (module docstring)
    within ``budget`` CPU seconds, with the fit jobs' ``threads`` (its ``threads_param`` and
    the OpenMP and BLAS pools, as a fit job runs it); returns the fitted power law and a note on
    what was probed."""
    from threadpoolctl import threadpool_limits

    from modelvar.models.registry import make_classifier

    with threadpool_limits(limits=threads):
        return _probe(name, shapes, budget, say,
                      lambda: make_classifier(name, seed=0, threads=threads))


def next_fit_fits(times: list[float], used: float, share: float) -> bool:
    """Whether the next (doubled) row count's expected cost — the last fit's ``times``, times
    the growth seen between the last two (1–8×; 2× after one fit) — fits in what ``used`` left
    of ``share``."""
    growth = times[-1] / times[-2] if len(times) > 1 and times[-2] > 0 else 2.0
    return used + times[-1] * min(max(growth, 1.0), 8.0) <= share


def _probe(name, shapes, budget, say, model_of) -> tuple[FitCost, str]:
    samples, spent, skipped = _probe_shapes(name, shapes, budget, say, model_of)
    return fit_samples(name, samples, spent=spent, budget=budget, skipped=skipped)


def _probe_shapes(name, shapes, budget, say, model_of
                  ) -> tuple[dict[ProbeShape, list[tuple]], float, int]:
    """Probe fits on synthetic data of each shape within ``budget`` (module docstring): the
    samples ``(rows, d, C, 1, seconds)`` of each shape probed, the CPU seconds spent, and how
    many shapes the spent budget left unprobed."""
    rng = stream(0, "cost-probe", classifier=name).generator()
    shapes = sorted(shapes, key=lambda s: (s.d * max(s.n_classes - 1, 1), s.rows))
    samples: dict[ProbeShape, list[tuple]] = {}
    spent, skipped = 0.0, 0
    for i, shape in enumerate(shapes):
        share = (budget - spent) / (len(shapes) - i)
        if share <= 0 and samples:  # the budget is spent: the power law extrapolates
            skipped += 1
            continue
        sizes = shape.sizes()
        W = rng.standard_normal((shape.d, shape.n_classes))
        X_all, y_all = np.empty((0, shape.d)), np.empty(0, dtype=np.int64)
        used, times = 0.0, []
        samples[shape] = []
        for j, rows in enumerate(sizes):
            if times and not next_fit_fits(times, used, share):
                break
            say(f"probing {name} on {shape.label}: fit {j + 1} of ≤ {len(sizes)}, "
                f"{rows:,} rows ({spent + used:.1f} of {budget:g} s CPU used)")
            if rows > len(X_all):  # drawn as the probe grows: no more than it fits
                more = rng.standard_normal((rows - len(X_all), shape.d))
                noise = rng.standard_normal((len(more), shape.n_classes))
                X_all = np.vstack([X_all, more])
                y_all = np.concatenate([y_all, np.argmax(more @ W + noise, axis=1)])
            X, y = X_all[:rows], y_all[:rows].copy()
            y[:shape.n_classes] = np.arange(shape.n_classes)  # every class present
            try:
                seconds, cost = fit_cpu_seconds(model_of, X, y, shape.n_classes)
            except EstimatorContractError:
                raise
            except Exception as exc:
                raise ProbeFitFailed(
                    f"{name} raised on a probe fit of {rows:,} synthetic rows of {shape.label}: "
                    f"{type(exc).__name__}: {exc}") from exc
            used += cost
            times.append(seconds)
            samples[shape].append((rows, shape.d, shape.n_classes, 1, max(seconds, 1e-6)))
        spent += used
    return samples, spent, skipped


def fit_samples(name: str, samples: dict, *, spent: float, budget: float,
                skipped: int = 0) -> tuple[FitCost, str]:
    """The power law of a classifier's probe ``samples`` (shape → its fits' samples), with a
    note on what was probed; one row count per shape: taken as linear in the rows."""
    rows = [s for shape_samples in samples.values() for s in shape_samples]
    note = (f"{len(rows)} probe fits on {len(samples)} shape(s), {spent:.1f} s CPU of a "
            f"{budget:g} s budget (jobs.probe_budget_seconds)")
    if skipped:
        note += f"; {skipped} shape(s) extrapolated (the budget was spent)"
    linear = max(len(s) for s in samples.values()) < 2  # nothing says how time grows
    if linear:  # seconds per row, fitted on d and C, times n
        rows = [(1, d, c, e, t / n) for n, d, c, e, t in rows]
        note += "; one row count each, so the cost is taken as linear in the rows"
    cost = fit({name: np.array(rows)}, source="probe fits", regimes={name: ()},
               with_overhead=False).classifiers[name][0]
    if linear:
        cost = replace(cost, exponents=(1.0, *cost.exponents[1:]))
    return cost, note


#: the seconds per fit a plan made without probe fits gives a declared classifier it has no
#: cost for (what such a plan is for — the address-space check before any fit — reads only
#: the jobs' memory, which comes from the data, not from time)
UNPROBED_SECONDS = 1.0


#: how a plan's note on a declared classifier starts where no probe of it was at hand
NOT_PROBED = "not probed yet"


def probed_cost(name: str, declaration: dict, shapes: list[ProbeShape],
                results_dir: str | Path, *, budget: float, threads: int = 1,
                say: Callable[[str], None] = _say, probe_now: bool = True
                ) -> tuple[FitCost, str]:
    """The cost of ``name`` from probe fits of each shape (datasets of one shape share it),
    cached per shape: a shape probed before (same declaration, budget and threads) is not
    probed again, so removing a dataset probes nothing and adding one probes only its shape;
    the power law is fitted to the cached samples of this study's shapes. With a note for the
    plan saying where the cost comes from. Without ``probe_now`` no fit runs: a classifier
    with an unprobed shape gets :data:`UNPROBED_SECONDS` per fit, said so."""
    merged: dict[tuple[int, int, int], list[str]] = {}
    for s in shapes:
        merged.setdefault((int(s.rows), int(s.d), int(s.n_classes)), []).extend(s.names)
    shapes = [ProbeShape(*key, tuple(dict.fromkeys(names))) for key, names in
              sorted(merged.items())]
    key = hashlib.sha256(json.dumps([declaration, budget, threads],
                                    sort_keys=True).encode()).hexdigest()
    path = Path(results_dir) / CACHE
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        cache = {}
    cache = cache if isinstance(cache, dict) else {}
    entry = cache.get(name)
    entry = entry if isinstance(entry, dict) and entry.get("key") == key \
        and isinstance(entry.get("shapes"), dict) else {"key": key, "shapes": {}}
    hint = f"declare {name}'s seconds_per_fit to skip probing"

    def shape_key(shape: ProbeShape) -> str:
        return f"{shape.rows}x{shape.d}x{shape.n_classes}"

    missing = [s for s in shapes if shape_key(s) not in entry["shapes"]]
    if missing and not probe_now:
        return declared_cost(UNPROBED_SECONDS), (f"{NOT_PROBED} ({UNPROBED_SECONDS:g} s per "
                                                 "fit assumed: a plan made without probe fits)")
    when = time.strftime("%Y-%m-%d %H:%M")
    if missing:
        say(f"{name} declares no seconds_per_fit: timing probe fits of it on synthetic data of "
            f"{len(missing)} of the study's {len(shapes)} shape(s), within {budget:g} s of CPU "
            "(jobs.probe_budget_seconds); each shape's probe is cached once made")
        from threadpoolctl import threadpool_limits

        from modelvar.models.registry import make_classifier

        with threadpool_limits(limits=threads):
            found, spent, _ = _probe_shapes(
                name, missing, budget, say, lambda: make_classifier(name, seed=0,
                                                                    threads=threads))
        for shape in missing:  # a shape the spent budget skipped is extrapolated, not cached
            if found.get(shape):
                entry["shapes"][shape_key(shape)] = {
                    "samples": [list(s) for s in found[shape]], "when": when,
                    "cpu": spent / max(len(found), 1)}
        cache[name] = entry
    probed = {s: [tuple(x) for x in entry["shapes"][shape_key(s)]["samples"]]
              for s in shapes if shape_key(s) in entry["shapes"]}
    cpu = sum(entry["shapes"][shape_key(s)]["cpu"] for s in probed)
    cost, note = fit_samples(name, probed, spent=cpu, budget=budget,
                             skipped=len(shapes) - len(probed))
    if missing:  # what the last study's shapes gave, for a reader of the cache
        entry.update(cost.as_dict())
        write_text(json.dumps(cache, sort_keys=True, indent=1) + "\n", path)
    made = "made now" if missing else "of " + max(entry["shapes"][shape_key(s)]["when"]
                                                  for s in probed)
    return cost, (f"probe fits {made} ({when if missing else ''}{': ' if missing else ''}"
                  f"{note}), cached per shape in {path}; {hint}")
