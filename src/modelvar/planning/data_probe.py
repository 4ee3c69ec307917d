"""What a study's own data does to the cost of a built-in classifier's fits: probe fits on the
dataset's training rows, for the plan (issue 55).

The cost model (:mod:`modelvar.planning.cost_model`) predicts a fit's CPU seconds from the
data's shape. Its calibration data separate cleanly; real data do not: on noisy data with
overlapping classes xgb grows many more nodes per tree (36 against 1.5 at 2,250 × 500 × 2) and
the SGD classifiers run more epochs, so the shape alone put such fits 2.5–11.8× low. The data
itself says how hard it is: for every dataset whose rows are at hand when the plan is made
(embedded, scikit-learn and file datasets; an OpenML dataset's rows come with its prepare job,
so its plan keeps the cost model alone) and every built-in classifier whose fits run on the CPU,
the plan fits the classifier (its defaults, the fit jobs' threads) on a random subset of the
dataset's training pool — repeat 0's split, preprocessed as a fit job preprocesses it, every
class kept — at growing row counts: :data:`FIRST_ROWS`, doubling, up to the rows a full fit
trains on, and predicts a third as many test rows. A classifier's first fit in a process pays
its start-up (imports, compiled code: lr-sgd's first fit + predict 1.4 s CPU, its second
0.005 s), so an untimed warm-up fit comes first (its rows from a stream of its own, so that the
probe draws the same rows whatever the process did before); then each row count is timed in
CPU seconds (the faster of two below :data:`modelvar.planning.probe_cost.REPEAT_BELOW`), the
largest always twice, the faster kept: no single fit sets a factor (that second fit may take the
probe past its share by one fit). Its **data factor** is

    factor = measured(m) / model(m)        at the largest row count m probed,

and its **spread** how far the factors of the row counts probed disagree (max / min): the fit
jobs' runtime bound is at least that (:mod:`modelvar.planning.plan`, "Resources").

and every fit of the dataset × classifier is estimated as model(n) · factor: the cost model's
growth from m to n rows, the level from the data. The closer m comes to n the less is left to
the model's growth, so the probes spend their budget growing towards the real rows: each
dataset × classifier, cheapest first, gets an equal share of what is left of
``jobs.data_probe_seconds`` (per classifier), and the next (doubled) row count is fitted only if
its expected cost — the last fit's, times the growth seen between the last two — fits in that
share.

**Cached** in ``RESULTS/.modelvar/data-probes.json``, keyed by the dataset's config entry and
shape, the classifier, the budget, the threads, the split and the cost model: every load of the
workflow (a SLURM job step too) makes the same plan; a change of any of them probes again.
``jobs.data_probe_seconds: 0`` turns the probes off (the cost model alone).
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from modelvar.seeding import stream
from modelvar.table_files import write_text

#: the smallest training rows probed (at least 4·C, so that every class has rows)
FIRST_ROWS = 256
#: a data factor beyond this either way is not a dataset's difficulty but a damaged or edited
#: cache (the largest real one measured: 8.7, xgb on noisy data; docs/measurements/cost-model.md)
PLAUSIBLE_FACTOR = 30.0
CACHE = Path(".modelvar", "data-probes.json")
#: part of every cached factor's key: a probe that measures otherwise probes again (2: warmed
#: up, the largest row count timed twice)
PROBE_VERSION = 2


def address_space_limit() -> int | None:
    """This process's soft address-space limit in bytes (what ``ulimit -v`` set, and what the
    jobs and probe fits it starts inherit), or None where there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


@dataclass(frozen=True)
class DataFactor:
    """A dataset × classifier's data factor (module docstring) and how it was measured:
    ``fits`` probe fits, the largest of ``rows`` training rows, ``cpu`` seconds in all."""

    factor: float
    rows: int
    fits: int
    cpu: float
    when: str = ""
    #: how far the factors at the probe's row counts disagree (max/min ≥ 1): the plan's
    #: runtime bound of these fits is at least this (modelvar.planning.plan)
    spread: float = 1.0

    def note(self, full_rows: int) -> str:
        spread = f", its row counts' factors {self.spread:.1f}× apart" if self.spread > 1.5 \
            else ""
        return (f"× {self.factor:.2f} from {self.fits} probe fit(s) on its own rows, up to "
                f"{self.rows:,} of a full fit's {full_rows:,} ({self.cpu:.1f} s CPU"
                f"{', ' + self.when if self.when else ''}{spread})")


def _say(line: str) -> None:
    print(f"modelvar: {line}", file=sys.stderr, flush=True)


def row_counts(full_rows: int, n_classes: int) -> list[int]:
    """The training rows to probe, smallest first: :data:`FIRST_ROWS` (at least 4·C),
    doubling, the last the full fit's rows."""
    first = min(max(FIRST_ROWS, 4 * n_classes), full_rows)
    out = [first]
    while out[-1] * 2 < full_rows:
        out.append(out[-1] * 2)
    return out if out[-1] == full_rows else [*out, full_rows]


def probe_rows(pool: np.ndarray, y: np.ndarray, rows: int, rng: np.random.Generator
               ) -> np.ndarray:
    """``rows`` of the training ``pool`` at random, every class of the pool among them (its
    first row in a random order), sorted."""
    order = rng.permutation(pool)
    _, first = np.unique(y[order], return_index=True)
    rest = np.setdiff1d(np.arange(len(order)), first)
    chosen = np.concatenate([first, rest[: max(rows - len(first), 0)]])
    return np.sort(order[chosen])


def probe_factor(classifier: str, y: np.ndarray, n_classes: int,
                 prepare: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                 pool: np.ndarray, test: np.ndarray, full_rows: int,
                 model_seconds: Callable[[int, int], float], share: float, *, threads: int,
                 seed: int, label: str, say: Callable[[str], None] = _say) -> DataFactor:
    """The data factor of ``classifier`` on a dataset ``label`` (class indices ``y``) within
    ``share`` CPU seconds: probe fits on rows of ``pool`` (the training pool), predicting rows
    of ``test``, each design matrix from ``prepare(train_rows, test_rows)`` (as a fit job
    preprocesses them); ``model_seconds(rows, d)`` is the cost model's seconds of a fit of that
    many rows and encoded columns."""
    from threadpoolctl import threadpool_limits

    from modelvar.models.registry import make_classifier
    from modelvar.planning.probe_cost import fit_cpu_timings, next_fit_fits

    rng = stream(seed, "data-probe", classifier=classifier, dataset=label).generator()
    sizes = row_counts(min(full_rows, len(pool)), n_classes)
    used, times, factors, fits = 0.0, [], [], 0

    def draw(rows, rng):
        train = probe_rows(pool, y, rows, rng)
        held = np.sort(rng.choice(test, size=min(len(test), max(rows // 3, 1)), replace=False))
        return train, *prepare(train, held)

    def model_of(X_test):
        return PredictingOn(make_classifier(classifier, seed=0, threads=threads), X_test)

    with threadpool_limits(limits=threads):
        if (classifier, threads) not in _WARMED:  # a first fit's start-up is not the data's
            train, X_train, X_test = draw(
                sizes[0], stream(seed, "data-probe-warm-up", classifier=classifier).generator())
            fit_cpu_timings(lambda: model_of(X_test), X_train, y[train], n_classes)
            _WARMED.add((classifier, threads))
        for j, rows in enumerate(sizes):
            if times and not next_fit_fits(times, used, share):
                break
            say(f"probing {classifier} on {label}'s own rows: fit {j + 1} of ≤ {len(sizes)}, "
                f"{rows:,} rows ({used:.1f} of {share:.1f} s CPU)")
            train, X_train, X_test = draw(rows, rng)
            timings = fit_cpu_timings(lambda X_test=X_test: model_of(X_test), X_train,
                                      y[train], n_classes)
            last = (X_train, X_test, train, rows, timings)
            used, fits = used + sum(timings), fits + len(timings)
            times.append(min(timings))
            factors.append(max(min(timings), 1e-6)
                           / max(model_seconds(rows, X_train.shape[1]), 1e-6))
        X_train, X_test, train, rows, timings = last
        if len(timings) < 2:  # the row count that sets the factor: never a single fit
            again = fit_cpu_timings(lambda: model_of(X_test), X_train, y[train], n_classes)
            used, fits = used + sum(again), fits + len(again)
            times[-1] = min(times[-1], *again)
            factors[-1] = max(times[-1], 1e-6) / max(model_seconds(rows, X_train.shape[1]),
                                                     1e-6)
    spread = max(factors) / min(factors)
    return DataFactor(float(factors[-1]), int(sizes[len(times) - 1]), fits, float(used),
                      spread=float(spread))


#: (classifier, threads) whose first fit this process has made: that fit pays imports and
#: compiled code (lr-sgd's first fit + predict 1.4 s CPU, its second 0.005 s), once per process
_WARMED: set[tuple[str, int]] = set()


class PredictingOn:
    """A model whose predictions are timed on the probe's test rows (a fit job predicts its
    test set, not its training rows)."""

    def __init__(self, model, X_test):
        self.model, self.X_test = model, X_test

    def fit(self, X, y, n_classes):
        self.model.fit(X, y, n_classes)

    def predict_proba(self, X):
        return self.model.predict_proba(self.X_test)

    def predict(self, X):
        return self.model.predict(self.X_test)


def _key(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def plausible(factor: float) -> bool:
    """A data factor within [1 / :data:`PLAUSIBLE_FACTOR`, :data:`PLAUSIBLE_FACTOR`]."""
    return bool(np.isfinite(factor)) and 1 / PLAUSIBLE_FACTOR <= factor <= PLAUSIBLE_FACTOR


def data_factors(config: dict, shapes: dict, cost_source: str, classifiers: list[str], *,
                 model_seconds_of: Callable[[str, object], Callable[[int, int], float]],
                 threads_of: Callable[[str], int], say: Callable[[str], None] = _say,
                 probe_now: bool = True, cached: bool = True
                 ) -> dict[tuple[str, str], tuple[DataFactor, int]]:
    """The data factor of every dataset (whose rows are at hand: ``shapes[name].basis`` is
    ``data``) × classifier of ``classifiers``, from the cache or probed now (module docstring);
    each with the full fit's training rows, for the plan's note. ``model_seconds_of(classifier,
    shape)`` gives the cost model's ``seconds(rows, d)`` of a fit of that dataset
    (``cost_source`` names the model, in the cache's key). A factor is kept within the
    plausible range (:func:`plausible`): one measured outside it is bounded by it, said so; a
    cached one outside it (an edited or damaged cache) is probed again, said so.
    Without ``probe_now`` only cached factors are used (the others: the cost model alone);
    without ``cached`` the cache is not read either."""
    budget = float(config["jobs"]["data_probe_seconds"])
    if budget <= 0 or not classifiers or not (probe_now or cached):
        return {}
    test_fraction = config["split"]["test_fraction"]
    at_hand = {name: s for name, s in shapes.items() if s.basis == "data"}
    path = Path(config["results_dir"]) / CACHE
    try:
        cache = json.loads(path.read_text()) if cached else {}
    except (OSError, ValueError):
        cache = {}
    cache = cache if isinstance(cache, dict) else {}
    out: dict[tuple[str, str], tuple[DataFactor, int]] = {}
    loaded: dict[str, tuple] = {}
    changed = False
    for clf in classifiers:
        order = sorted(at_hand, key=lambda n: (at_hand[n].n_rows * at_hand[n].d, n))
        spent = 0.0
        for i, name in enumerate(order):
            shape = at_hand[name]
            full_rows = max(int(shape.n_rows * (1 - test_fraction)), 1)
            key = _key([config["datasets"][name], asdict(shape), clf, budget, threads_of(clf),
                        test_fraction, config["root_seed"], cost_source, PROBE_VERSION])
            entry = cache.get(f"{name}/{clf}")
            if isinstance(entry, dict) and entry.get("key") == key:
                try:
                    cached = DataFactor(**entry["factor"])
                except (TypeError, KeyError):
                    cached = None
                if cached is not None and plausible(cached.factor):
                    out[name, clf] = (cached, full_rows)
                    continue
                say(f"the cached data factor of {clf} on {name} in {path} is "
                    f"{'unreadable' if cached is None else f'{cached.factor:g}'}, outside "
                    f"[{1 / PLAUSIBLE_FACTOR:g}, {PLAUSIBLE_FACTOR:g}]: probed again")
            if not probe_now:
                continue
            if name not in loaded:
                from modelvar.data import load
                from modelvar.data.arrays import DataArrays

                loaded[name] = DataArrays.from_dataset(load(name, config["datasets"][name]))
            share = (budget - spent) / (len(order) - i)
            found = probe_data_arrays(clf, loaded[name], name, test_fraction,
                                      config["root_seed"], full_rows,
                                      model_seconds_of(clf, shape), share,
                                      threads=threads_of(clf), say=say)
            factor = min(max(found.factor, 1 / PLAUSIBLE_FACTOR), PLAUSIBLE_FACTOR)
            if factor != found.factor:
                say(f"the probe of {clf} on {name} measured a data factor of "
                    f"{found.factor:.3g}, outside [{1 / PLAUSIBLE_FACTOR:g}, "
                    f"{PLAUSIBLE_FACTOR:g}]: {factor:g} is used (a probe this far off measured "
                    "something else than the data, e.g. a first fit's start-up)")
            found = DataFactor(factor, found.rows, found.fits, found.cpu,
                               time.strftime("%Y-%m-%d %H:%M"), found.spread)
            spent += found.cpu
            cache[f"{name}/{clf}"] = {"key": key, "factor": asdict(found)}
            changed = True
            out[name, clf] = (found, full_rows)
    if changed:
        write_text(json.dumps(cache, sort_keys=True, indent=1) + "\n", path)
    return out


def probe_data_arrays(classifier: str, data, name: str, test_fraction: float, root_seed: int,
                      full_rows: int, model_seconds: Callable[[int, int], float], share: float,
                      *, threads: int, say: Callable[[str], None] = _say) -> DataFactor:
    """:func:`probe_factor` of ``classifier`` on a dataset's arrays (``data``, a
    :class:`modelvar.data.arrays.DataArrays`): probe fits on repeat 0's training pool,
    predicting its test rows, preprocessed as a fit job preprocesses them."""
    from modelvar.data.preprocess import transform_run
    from modelvar.data.splits import split_test_set

    pool, test = split_test_set(data.y, test_fraction, root_seed=root_seed, dataset=name,
                                repeat=0, labels=data.classes)

    def prepare(train, held):
        return transform_run(data.encoded, train, held)[:2]

    return probe_factor(classifier, data.y, len(data.classes), prepare, pool, test, full_rows,
                        model_seconds, share, threads=threads, seed=root_seed, label=name,
                        say=say)
