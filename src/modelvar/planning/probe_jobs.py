"""Probe jobs: limits from a study's own rows where its datasets arrive in a job (issue 67,
item 3).

An OpenML dataset is downloaded by its prepare job, so the plan prices its fits from the
config's ``profile`` and the cost model alone, and bounds their time limit by the classifier's
worst miss on realistic data (:mod:`modelvar.planning.plan`, "Resources"). For each such
dataset × classifier that probe fits price (:func:`modelvar.planning.plan.probed_classifiers`)
the plan adds a **probe job** after the dataset's prepare job (``StudyPlan.probe_jobs``): it
makes the probe fits a load makes for a dataset at hand (:mod:`modelvar.planning.data_probe`,
within ``StudyPlan.probe_share`` CPU seconds, at the fit jobs' threads) and writes their
measurement, :class:`ProbeResult`, to ``RESULTS/probes/DATASET/CLASSIFIER.json``. Each fit
job of that dataset × classifier reads it as an input, and its resources follow from it
(:func:`probed_job`; Snakemake computes a job's resources again when its inputs exist):

    seconds = estimate × factor,    bound = max(2, spread),
    mem_mb = max(the plan's, ⌈PEAK_HEADROOM × the probe process's peak RSS⌉),

where the factor and spread are the probe's (measured / the cost model's seconds at the largest
row count probed, and how far its row counts' factors disagree). The jobs' grouping stays the
plan's (it is decided before any job, from the profile); only their limits follow the data.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from modelvar.planning.cost_model import LIMIT_FACTOR

#: the memory a fit job asks for over the probe process's peak (which held the whole dataset
#: and fitted on up to a full fit's rows): a fit job also holds a repeat's predictions
PEAK_HEADROOM = 1.5


class ProbeResultError(ValueError):
    """A probe job's result cannot be read."""


@dataclass(frozen=True)
class ProbeResult:
    """What a probe job measured of a classifier on a dataset's own rows."""

    dataset: str
    classifier: str
    factor: float
    spread: float
    rows: int
    fits: int
    cpu: float
    #: the probe process's peak resident memory (MB)
    peak_mb: float
    #: the prepared dataset's rows, encoded columns and classes
    n_rows: int
    d: int
    n_classes: int

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> ProbeResult:
        """A probe job's result; a clear error naming the file where it cannot be read."""
        text = Path(path).read_text()  # a missing file: FileNotFoundError, as Snakemake expects
        try:
            found = cls(**json.loads(text))
        except (ValueError, TypeError) as exc:
            raise ProbeResultError(f"{path} is not a probe job's result ({exc}): delete it, and "
                                   "the next run probes again") from None
        if not (math.isfinite(found.factor) and found.factor > 0 and found.spread >= 1
                and found.peak_mb >= 0):
            raise ProbeResultError(f"{path}: factor {found.factor}, spread {found.spread}, "
                                   f"peak {found.peak_mb} MB are not a probe's measurement: "
                                   "delete it, and the next run probes again")
        return found


def probe_path(results: str | Path, dataset: str, classifier: str) -> str:
    """Where a probe job writes its result."""
    return f"{results}/probes/{dataset}/{classifier}.json"


def probed_job(job, probe: ProbeResult):
    """A fit job (:class:`modelvar.planning.plan.FitJob`) with its estimate, time-limit bound
    and memory from ``probe`` (module docstring)."""
    return replace(job, seconds=job.seconds * probe.factor,
                   limit_factor=max(LIMIT_FACTOR, probe.spread),
                   mem_mb=max(job.mem_mb, math.ceil(PEAK_HEADROOM * probe.peak_mb)))


@dataclass(frozen=True)
class ProbeJob:
    """A probe job's own limits: its share of CPU seconds (bound 2, like a metrics job's) and
    the most memory a fit job of its dataset × classifier is planned to need."""

    seconds: float
    mem_mb: int
    limit_factor: float = LIMIT_FACTOR


def probe_job(plan, dataset: str, classifier: str) -> ProbeJob:
    """The limits of the probe job of ``dataset`` × ``classifier`` in ``plan``."""
    if (dataset, classifier) not in plan.probe_jobs:
        raise KeyError(f"the plan has no probe job of {classifier} on {dataset}")
    jobs = plan.datasets[dataset].classifiers[classifier].fit_jobs
    return ProbeJob(plan.probe_share, max(job.mem_mb for job in jobs))
