"""The study plan: which jobs run, how long each takes, and how much memory and storage they need.

The workflow builds its jobs from this plan, and ``modelvar plan`` prints it before anything runs
(seed 004, "Runtime Considerations": *what is worth running, compute-wise?*).

**Shapes.** A dataset's rows, encoded columns d (numeric + one-hot levels), classes C, and whether
it has numeric and categorical features come from the data itself where it is at hand (embedded,
scikit-learn and file datasets, cheaply: :mod:`modelvar.data.schema`), and from the config's
``profile`` for OpenML datasets, which are only downloaded by their prepare job. The prepare job
checks a profile against the data. The plan never depends on files the run itself writes, so every
load of the workflow in one run (dry runs, SLURM job steps) makes the same jobs.

**Fit jobs.** The cells of a dataset × classifier (:mod:`modelvar.study.design`) form *chunks*
of cells that share their data, categorical and hparam levels. Each fit's cost comes from the
cost model (:mod:`modelvar.planning.cost_model`: training rows, d, C, epochs, the shares of d
that are one-hot levels, noisy and few-valued numeric features, the last from the profile's
``few_valued`` or counted in the data; plus the nearest-neighbour search of ``nn`` levels).

**Repeats.** A repeat's fits are a function of its seed streams, never of how many repeats
the study has. Consecutive chunks whose one repeat fits in ``jobs.target_minutes`` form a group
(``dnone_cnone_hnone+3``: four chunks), and a fit job holds a *batch* of the group's repeats
(``dnone_cnone_hnone+3.r0-4``: repeats 0 to 4; ``….r5``: repeat 5 alone), as many as pay for a
process's start-up within the target, recorded by the first run and kept
(:mod:`modelvar.planning.repeat_batches`). Adding repeats adds batches of the new ones and
leaves the other jobs' outputs valid; removing repeats cuts the batch that holds the last one
kept (its repeats are fitted again) and drops the jobs beyond it (their tables are set aside,
the findings and figures rerun; restored whole if the repeats come back). A chunk whose one
repeat exceeds the target is split into blocks of runs of one repeat (``….r3.k0-4``), and a
chunk whose one run of every cell exceeds it into blocks of cells first (``….c1.r3.k0-0``), so
no job outgrows the target (and a SLURM time limit set from it) unless a single fit does, or
one stack of the MLP's batched runs: those blocks hold whole stacks
(:func:`modelvar.models.mlp.stack_size`, fixed by the design and the data's shape), since a job
trains each stack it holds a run of whole.

**Metrics jobs.** One per group of fit jobs that share their cells and repeats, reading their
predictions (the run blocks of a repeat put together): for a batch of repeats the fit job
itself (the same id), for a chunk split by runs the repeat (``rel0p2_cnone_hnone.r3``, or
``….c1.r3`` for a block of cells).

**Resources.** A job's ``runtime`` is its estimate times a bound plus
``jobs.runtime_margin_minutes`` (default 10): 2 where probe fits on the dataset's own rows
scaled the estimate (:mod:`modelvar.planning.data_probe`), or how far the probe's row counts
disagreed if more, else the classifier's worst miss
measured on realistic data the cost model never saw (``misses`` of the cost model,
``make bench-cost-realistic``; at least 2), so a fit the shape alone misses by that much is not
killed; doubled with its
``mem_mb`` on each retry (:func:`on_attempt`); ``mem_mb`` comes from the data it holds (the encoded
dataset and one repeat of predictions for a fit job; one repeat of predictions and the label tables
for a metrics job) plus the libraries' own footprint. The config's ``resources`` raise them, never
lower them.

**Storage.** Bytes per prediction row: the ids and labels, plus float32 probabilities — C − 1
columns while C ≤ ``predictions.max_dense_classes`` (the predicted class's probability is 1 minus
the others), else four per-sample statistics (:mod:`modelvar.pipeline.predictions`); plus each
row group's per-column overhead (one row group per cell × repeat of a fit job). Metric tables:
per (cell, repeat) bytes per test sample, run and pair of runs, plus each file's own. Constants
measured on real files (``make bench-storage``, ``make bench-plan``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from modelvar.data.schema import DatasetSchema
from modelvar.models.mlp import stack_size
from modelvar.models.registry import classifier_names, on_gpu
from modelvar.models.registry import spec as classifier_spec
from modelvar.pipeline.result_tables import METRIC_TABLES
from modelvar.planning import repeat_batches
from modelvar.planning.cost_model import LIMIT_FACTOR, CostModel, onehot_share
from modelvar.planning.cost_model import load as load_cost_model
from modelvar.study import families
from modelvar.study.cells import Cell
from modelvar.study.design import (
    ClassifierDesign,
    DatasetDesign,
    Reach,
    classifier_design,
    dataset_cells,
)
from modelvar.study.rounds import Rounds, Schedule, read_rounds, schedule_of

#: bytes per prediction row, zstd-compressed (``make bench-storage``; fitted on finished runs:
#: docs/measurements/design-choices.md): ids + labels, each float32 probability column
#: (svm-sgd's hinge loss: one-hot columns, ≈ 0), the compact statistics; and per column of each
#: row group (one per cell × repeat × run block: page headers, statistics, footer)
BYTES_IDS, BYTES_PROBA_COLUMN, BYTES_COMPACT, BYTES_PER_CHUNK = 0.2, 3.25, 14.1, 325.0
#: the compact statistics of one-hot probabilities (svm-sgd's hinge loss from 11 classes on),
#: which compress far better than a trained model's peaked probabilities (``make
#: bench-storage``, tests/test_prediction_files.py)
BYTES_COMPACT_ONE_HOT = 1.5
#: bytes of metric tables per (cell, repeat) (row groups of ≥ 65,536 rows,
#: :class:`~modelvar.table_files.TableStream`): per test sample (per_sample), per run (per_run),
#: per pair of runs (pairwise) and fixed (summary, agreement)
BYTES_PER_SAMPLE, BYTES_PER_RUN, BYTES_PER_PAIR, BYTES_PER_REPEAT = 11.0, 90.0, 110.0, 2_000.0
#: bytes of each metric table file besides its rows (schema, footer): 5 files per metrics job
BYTES_PER_TABLE_FILE = 6_500.0
#: the columns of a prediction file besides the probabilities (cell, repeat, run, sample, labels)
ID_COLUMNS = 6
#: memory of a metrics job beyond its data: the Python libraries it imports (MB); a fit job's is
#: its classifier's spec's ``memory_mb``
METRICS_LIBRARY_MB = 250
#: seconds of the nearest-neighbour search per training row² × feature (benchmarks/bench_perturb)
NN_SECONDS = 6.2e-11
#: per-fit work besides fit + predict (split, perturbation, preprocessing, writing), seconds
FIT_OVERHEAD_SECONDS = 0.004
#: a metrics job's seconds per (run pair × test sample), and per (cell, repeat)
METRICS_SECONDS_PER_PAIR_SAMPLE, METRICS_SECONDS_PER_REPEAT = 6e-8, 0.05
#: a fit job's CPU beyond its fits: the interpreter, its classifier's imports, the data, the
#: warm-up fit and the writes (``make bench-default-study`` measures it per dataset ×
#: classifier: docs/measurements/job-cost.md)
STARTUP_SECONDS = 2.8


class PlanError(ValueError):
    """The plan cannot be made (e.g. an OpenML dataset without the profile the plan needs)."""


@dataclass(frozen=True)
class Shape:
    n_rows: int
    d: int
    n_classes: int
    numeric: bool | None
    categorical: bool | None
    basis: str  # "data" (read from the data) or "profile" (the config's profile)
    n_numeric: int = 0
    #: numeric features with few distinct values (modelvar.data.schema.count_few_valued)
    n_few_valued: int = 0


def dataset_shape(name: str, spec: dict, schema: DatasetSchema | None) -> Shape:
    """What the plan needs of a dataset (see module docstring)."""
    profile = spec.get("profile")
    if spec.get("source") == "openml":
        if not profile:
            raise PlanError(
                f"datasets.{name}: an OpenML dataset needs a `profile` (rows, numeric, "
                "categorical, classes) for the plan, since it is only downloaded by its prepare "
                "job; config/openml/*.yaml have them for the study's datasets")
        d = profile.get("encoded", profile["numeric"] + 3 * profile["categorical"])
        few = profile.get("few_valued", 0)
        if few > profile["numeric"]:
            raise PlanError(f"datasets.{name}.profile: few_valued ({few}) counts numeric "
                            f"features, of which it has {profile['numeric']}")
        return Shape(profile["rows"], d, profile["classes"], profile["numeric"] > 0,
                     profile["categorical"] > 0, "profile", profile["numeric"], few)
    if schema is None or schema.n_rows is None or schema.feature_types is None:
        raise PlanError(f"datasets.{name}: its shape could not be read")
    return Shape(schema.n_rows, max(schema.encoded_width or 1, 1),
                 schema.n_classes or len(schema.class_counts or {}) or 2,
                 bool(schema.columns_of("numeric")), bool(schema.columns_of("categorical")),
                 "data", len(schema.columns_of("numeric")), schema.few_valued or 0)


@dataclass(frozen=True)
class FitJob:
    id: str
    cells: tuple[str, ...]
    repeats: tuple[int, ...]
    runs: tuple[int, int]  # [start, stop)
    seconds: float         # estimated fitting seconds (GPU seconds for the MLP)
    mem_mb: int
    metrics_job: str
    #: the time limit over the estimate: 2 where probe fits measured the data, else the
    #: classifier's worst measured miss (:meth:`modelvar.planning.cost_model.CostModel.miss_bound`)
    limit_factor: float = 2.0

    @property
    def fits(self) -> int:
        return len(self.cells) * len(self.repeats) * (self.runs[1] - self.runs[0])


@dataclass(frozen=True)
class MetricsJob:
    id: str
    fit_jobs: tuple[str, ...]
    cells: tuple[str, ...]
    repeats: tuple[int, ...]
    seconds: float
    mem_mb: int


@dataclass
class ClassifierPlan:
    classifier: str
    #: families collapsed for this classifier alone (model_seed, when it takes no seed)
    collapsed: list[str] = field(default_factory=list)
    #: its cells and their roles (:func:`modelvar.study.design.classifier_design`)
    design: ClassifierDesign | None = None
    fit_jobs: list[FitJob] = field(default_factory=list)
    metrics_jobs: list[MetricsJob] = field(default_factory=list)
    #: the repeat batches of its batched groups, by :func:`modelvar.planning.repeat_batches.key`
    batches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    prediction_rows: int = 0
    prediction_bytes: float = 0.0
    table_bytes: float = 0.0

    _indexes: dict = field(default_factory=dict, repr=False)

    def index(self, kind: str) -> dict:
        """Job id → job, for ``fit`` or ``metrics`` jobs."""
        if kind not in self._indexes:
            jobs = self.fit_jobs if kind == "fit" else self.metrics_jobs
            self._indexes[kind] = {job.id: job for job in jobs}
        return self._indexes[kind]

    @property
    def fits(self) -> int:
        return sum(j.fits for j in self.fit_jobs)

    @property
    def fit_seconds(self) -> float:
        return sum(j.seconds for j in self.fit_jobs)


@dataclass
class DatasetPlan:
    name: str
    shape: Shape
    cells: list[Cell]
    collapsed: list[str]
    probabilities: str  # "dense" or "compact"
    classifiers: dict[str, ClassifierPlan] = field(default_factory=dict)

    def design(self) -> DatasetDesign:
        """The dataset's design, per classifier, as the plan fits it (what the figures and
        findings jobs read: :mod:`modelvar.study.design`)."""
        return DatasetDesign(self.name, {name: plan.design
                                         for name, plan in self.classifiers.items()})


@dataclass
class StudyPlan:
    datasets: dict[str, DatasetPlan]
    repeats: int
    runs: int
    target_minutes: float
    #: per classifier whose fits run on a GPU, its speed-up (:func:`gpu_speedups`)
    gpu_speedups: dict[str, float | dict[int, float]]
    cost_source: str
    #: where a declared classifier's cost comes from (declared, probe fits, the cost model)
    cost_notes: dict[str, str] = field(default_factory=dict)
    #: (dataset, classifier) → what probe fits on the dataset's own rows did to its estimates
    #: (:mod:`modelvar.planning.data_probe`)
    data_notes: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (dataset, classifier) → the factor its estimates carry (absent: 1, the shape alone)
    data_factors: dict[tuple[str, str], float] = field(default_factory=dict)
    #: what a plan made without probe fits (``probes=False``) found no cached probe of, and so
    #: estimated otherwise than a plan with them would: "classifier" or "classifier on dataset"
    unprobed: list[str] = field(default_factory=list)
    #: (dataset, classifier) whose rows arrive in a job (OpenML: priced from the profile), of a
    #: classifier that probe fits price: a probe job after the dataset's prepare job sets its
    #: fit jobs' limits (:mod:`modelvar.planning.probe_jobs`)
    probe_jobs: list[tuple[str, str]] = field(default_factory=list)
    #: the CPU seconds each probe job may spend on its probe fits
    probe_share: float = 0.0
    #: a sequential study's looks and its state (:mod:`modelvar.study.rounds`); None: fixed
    schedule: Schedule | None = None
    rounds: Rounds | None = None

    def batches(self) -> dict[str, list[tuple[int, int]]]:
        """Every batched group's repeat batches, by
        :func:`modelvar.planning.repeat_batches.key` (what a run records)."""
        return {k: b for dp in self.datasets.values() for cp in dp.classifiers.values()
                for k, b in cp.batches.items()}

    def blocks(self) -> list[tuple[str, str]]:
        """Every (dataset, classifier) the study fits: a sequential study's blocks."""
        return [(ds, clf) for ds, dp in self.datasets.items() for clf in dp.classifiers]

    def repeats_of(self, dataset: str, classifier: str) -> int:
        """A dataset × classifier's repeats: the study's, or in a sequential study its block's
        in the current round (the first look before the first round is recorded)."""
        if self.schedule is None:
            return self.repeats
        if self.rounds is None:
            return self.schedule.start
        return self.rounds.repeats_of(dataset, classifier, self.schedule.start)

    def warnings(self) -> list[str]:
        """One line per dataset whose perturbation families collapse to ``none``."""
        out = []
        for name, plan in self.datasets.items():
            for family in plan.collapsed:
                what = f"no {families.family(family).reach} features"
                out.append(f"{name}: {what}, so its {family} perturbation levels cannot act "
                           f"on it and collapse to none ({len(plan.cells)} cells are fitted)")
        return out

    def unprobed_warnings(self) -> list[str]:
        """What a plan made without probe fits (a lint, dry run or listing) estimated without
        the probes a run that executes makes first: that run's fit jobs may be grouped and
        sized otherwise (module docstring, "Repeats")."""
        if not self.unprobed:
            return []
        shown = ", ".join(self.unprobed[:4]) + (", …" if len(self.unprobed) > 4 else "")
        return [f"planned without probe fits (this command runs no job): no cached probe of "
                f"{shown}, estimated from the data's shape alone; a run that executes probes "
                "them first, so the fit jobs it makes can differ from this plan's "
                "(`modelvar plan` probes and caches them, and later dry runs list the run's "
                "jobs)"]

    def _job(self, kind: str, dataset: str, classifier: str, job_id: str):
        try:
            jobs = self.datasets[dataset].classifiers[classifier].index(kind)
            return jobs[job_id]
        except KeyError:
            raise KeyError(f"the plan has no {kind} job {job_id!r} for {dataset}/{classifier}"
                           ) from None

    def fit_job(self, dataset: str, classifier: str, job_id: str) -> FitJob:
        return self._job("fit", dataset, classifier, job_id)

    def metrics_job(self, dataset: str, classifier: str, job_id: str) -> MetricsJob:
        return self._job("metrics", dataset, classifier, job_id)


def probability_form(n_classes: int, config: dict) -> str:
    settings = config["predictions"]
    mode = settings["probabilities"]
    if mode != "auto":
        return mode
    limit = settings["max_dense_classes"]
    return "dense" if n_classes <= limit else "compact"


def bytes_per_row(n_classes: int, form: str, one_hot: bool = False) -> float:
    """Bytes of one prediction row; ``one_hot``: the probabilities are the predicted class's
    one-hot vector (svm-sgd with the hinge loss), which compresses to next to nothing."""
    if form == "dense":
        return BYTES_IDS + (0.0 if one_hot else BYTES_PROBA_COLUMN * (n_classes - 1))
    return BYTES_IDS + (BYTES_COMPACT_ONE_HOT if one_hot else BYTES_COMPACT)


def prediction_columns(n_classes: int, form: str) -> int:
    return ID_COLUMNS + (n_classes - 1 if form == "dense" else 4)


def one_hot_probabilities(classifier: str, config: dict) -> bool:
    """Whether the classifier's spec says its base hparams give no probabilities (svm-sgd's
    hinge loss, its default), untuned (tuning may choose other values, e.g. svm-sgd's
    modified_huber, which has probabilities: :mod:`modelvar.models.classifiers`)."""
    clf = classifier_spec(classifier)
    settings = config["classifier_settings"].get(classifier, {})
    base = {**clf.defaults(), **settings.get("hparams", {})}
    return config["hparams"] != "tuned" and clf.one_hot_probabilities(base)


def epochs_of(classifier: str, config: dict) -> int:
    """How many epochs a classifier trains for (its settings', else its spec's; 1 for
    classifiers that do not train for epochs)."""
    clf = classifier_spec(classifier)
    if clf.epochs is None:
        return 1
    return config["classifier_settings"].get(classifier, {}).get("epochs", clf.epochs)


def gpu_speedup_at(gpu_speedup: float | dict[int, float], cpu_seconds: float) -> float:
    """The GPU speed-up of a fit that takes ``cpu_seconds`` on one core (the cost model's
    estimate): a number, or in a mapping {from this many seconds: speed-up} the value of the
    largest key at most ``cpu_seconds``. Small fits leave a GPU idle, so the speed-up grows with
    the fit (``make bench-mlp``, ``make bench-xgb-gpu``; docs/measurements/design-choices.md)."""
    if not isinstance(gpu_speedup, dict):
        return float(gpu_speedup)
    return float(gpu_speedup[max(k for k in gpu_speedup if k <= cpu_seconds)])


#: The classifier settings that hold GPU speed-ups: only the plan reads them (no job gets them).
SPEEDUP_SETTINGS = ("gpu_speedup", "gpu_speedup_alone")


def speedup_setting(value) -> float | dict[int, float]:
    """A ``gpu_speedup`` setting as the plan uses it (a mapping's keys as ints; schema-checked: a
    number, or a mapping with the key 0)."""
    if isinstance(value, dict):
        return {int(k): float(v) for k, v in sorted(value.items(), key=lambda kv: int(kv[0]))}
    return float(value)


def gpu_speedups(config: dict) -> dict[str, float | dict[int, float]]:
    """Per classifier whose fits run on a GPU (:func:`~modelvar.models.registry.on_gpu`), its
    speed-up: ``classifier_settings.NAME.gpu_speedup``, else ``jobs.gpu_speedup`` (default 1:
    none assumed)."""
    settings = config["classifier_settings"]
    default = config["jobs"]["gpu_speedup"]
    return {clf: speedup_setting(settings.get(clf, {}).get("gpu_speedup", default))
            for clf in classifier_names(config) if on_gpu(clf, settings)}


def noisy_share(data_level, n_numeric: int, d: int) -> float:
    """The share of a fit's ``d`` encoded columns that its data perturbation level (a cell's
    ``data``, e.g. ``("rel", 0.2)``, or None) fills with new values (the cost model's
    ``noisy_share``): the numeric ones, unless the level only rounds them (``sig``)."""
    return min(1.0, n_numeric / d) if adds_noise(data_level) and d else 0.0


def adds_noise(data_level) -> bool:
    """Whether a cell's data perturbation level gives the numeric features new, continuous
    values (every level but None and ``sig``, which rounds them)."""
    return data_level is not None and data_level[0] != "sig"


def few_valued_share(data_level, n_few_valued: int, d: int) -> float:
    """The share of a fit's ``d`` encoded columns that are few-valued numeric features (the cost
    model's ``few_valued_share``): none where the data perturbation fills the numeric features
    with new values (:func:`adds_noise`), which are then as many as the rows."""
    if not d or adds_noise(data_level):
        return 0.0
    return min(1.0, n_few_valued / d)


def _fit_seconds(cost: CostModel, classifier: str, cell: Cell, shape: Shape, config: dict,
                 epochs: int, gpu_speedup: float | dict[int, float] | None,
                 data_factor: float = 1.0) -> float:
    """Seconds of one fit of ``cell`` (fit + predict + the job's per-fit work); the cost
    model's times ``data_factor`` (:mod:`modelvar.planning.data_probe`)."""
    test_fraction = config["split"]["test_fraction"]
    n_train = shape.n_rows * (1 - test_fraction) * cell.downsample
    seconds = cost.seconds(classifier, n_train, shape.d, shape.n_classes, epochs,
                           noisy_share=noisy_share(cell.data, shape.n_numeric, shape.d),
                           onehot_share=onehot_share(shape.n_numeric, shape.d),
                           few_valued_share=few_valued_share(cell.data, shape.n_few_valued,
                                                             shape.d)) * data_factor
    if gpu_speedup is not None:  # its fits run on a GPU
        seconds /= gpu_speedup_at(gpu_speedup, seconds)
    if cell.data is not None and cell.data[0] == "nn":
        seconds += NN_SECONDS * n_train ** 2 * shape.d
    return seconds + FIT_OVERHEAD_SECONDS


def _mem_fit(classifier: str, shape: Shape, config: dict, form: str) -> int:
    n_test = shape.n_rows * config["split"]["test_fraction"]
    runs = config["split"]["runs"]
    columns = prediction_columns(shape.n_classes, form)
    data = 5 * shape.n_rows * shape.d * 8 + 3 * runs * n_test * columns * 8
    return int(classifier_spec(classifier).memory_mb + 1.5 * data / 2**20)


def _mem_metrics(shape: Shape, config: dict, form: str) -> int:
    """One repeat's predictions as arrays (labels, float64 probabilities or statistics) and the
    per-sample work on them, twice over (``make bench-memory``: 943 MB measured for 400,000
    rows × 355 classes × 10 runs, compact, against 1,306 MB declared)."""
    n_test = shape.n_rows * config["split"]["test_fraction"]
    k = config["split"]["runs"]
    columns = shape.n_classes if form == "dense" else 4
    data = k * n_test * (8 * columns + 100) + 2 * (k - 1) * shape.n_classes ** 2 * 8
    return int(METRICS_LIBRARY_MB + 2 * data / 2**20)


def _metrics_seconds(shape: Shape, config: dict, n_units: int) -> float:
    k = config["split"]["runs"]
    n_test = shape.n_rows * config["split"]["test_fraction"]
    per = METRICS_SECONDS_PER_REPEAT + METRICS_SECONDS_PER_PAIR_SAMPLE * k * (k - 1) / 2 * n_test
    return STARTUP_SECONDS / 3 + n_units * per


def _plan_classifier(dataset: str, classifier: str, cells: list[Cell], shape: Shape,
                     config: dict, cost: CostModel, target: float,
                     gpu_speedup: float | dict[int, float] | None, form: str,
                     repeats: int, data_factor: float | None = None,
                     data_spread: float = 1.0,
                     recorded: dict[str, list[tuple[int, int]]] | None = None
                     ) -> ClassifierPlan:
    runs = config["split"]["runs"]
    epochs = epochs_of(classifier, config)
    plan = ClassifierPlan(classifier)
    chunks: dict[str, list[Cell]] = {}
    for cell in cells:
        chunks.setdefault(cell.chunk, []).append(cell)
    # a fit's seconds depend on its cell's downsampling and data level only (the full study's
    # plan asks for 4,228, of which 1,260 differ)
    seconds_of: dict[tuple, float] = {}

    def fit_seconds(cell: Cell) -> float:
        key = (cell.downsample, cell.data)
        if key not in seconds_of:
            seconds_of[key] = _fit_seconds(cost, classifier, cell, shape, config, epochs,
                                           gpu_speedup, 1.0 if data_factor is None
                                           else data_factor)
        return seconds_of[key]

    per_fit = {chunk: [fit_seconds(c) for c in members] for chunk, members in chunks.items()}
    # probed: LIMIT_FACTOR, widened to how far the probe's row counts disagreed (its spread)
    limit_factor = (max(LIMIT_FACTOR, data_spread) if data_factor is not None
                    else LIMIT_FACTOR if classifier not in cost.classifiers
                    else cost.miss_bound(classifier))
    mem_fit = _mem_fit(classifier, shape, config, form)
    mem_metrics = _mem_metrics(shape, config, form)
    n_test = math.ceil(shape.n_rows * config["split"]["test_fraction"])
    all_repeats = tuple(range(repeats))
    stack = (stack_size(shape.n_rows - n_test, shape.d, runs)
             if classifier_spec(classifier).batched else 1)

    def add(job_id, chunk_cells, reps, run_range, seconds, group):
        plan.fit_jobs.append(FitJob(job_id, tuple(c.id for c in chunk_cells), tuple(reps),
                                    run_range, seconds, mem_fit, group, limit_factor))

    # A fit job holds a recorded batch of repeats of a group of chunks, or one repeat of a block
    # of cells and runs: adding repeats adds jobs and leaves the others' outputs valid (module
    # docstring, "Repeats").
    def repeat_seconds(group: list[str]) -> float:
        return sum(sum(per_fit[ch]) for ch in group) * runs

    chunk_groups: list[list[str]] = []  # consecutive chunks whose repeat fits in the target
    for chunk in chunks:
        cheap = repeat_seconds([chunk]) <= target
        if cheap and chunk_groups and repeat_seconds([*chunk_groups[-1], chunk]) <= target:
            chunk_groups[-1].append(chunk)
        else:
            chunk_groups.append([chunk])
    for group in chunk_groups:
        name = group[0] if len(group) == 1 else f"{group[0]}+{len(group) - 1}"
        members = [c for ch in group for c in chunks[ch]]
        per_repeat = repeat_seconds(group)
        if per_repeat <= target:
            # batches of repeats, kept as first recorded (modelvar.planning.repeat_batches)
            key = repeat_batches.key(dataset, classifier, name)
            size = repeat_batches.batch_size(per_repeat, target, STARTUP_SECONDS)
            batches = repeat_batches.batches_of(
                repeats, size, (recorded or {}).get(key),
                most=repeat_batches.most_repeats(per_repeat, target))
            plan.batches[key] = batches
            for start, stop in batches:
                job_id = f"{name}.r{start}" + ("" if stop - start == 1 else f"-{stop - 1}")
                add(job_id, members, range(start, stop), (0, runs),
                    per_repeat * (stop - start), job_id)
            continue
        # one repeat of the chunk exceeds the target: one run (one stack of runs, for batched
        # runs) of every cell too → blocks of cells (.c0, .c1 …) whose run fits in it; then
        # each repeat of a block in blocks of runs (of whole stacks)
        chunk = group[0]
        unit = stack * per_repeat / runs
        blocks = _cell_blocks(list(zip(members, per_fit[chunk], strict=True)), target / stack) \
            if unit > target else [list(zip(members, per_fit[chunk], strict=True))]
        for b, block_cells in enumerate(blocks):
            block = chunk if len(blocks) == 1 else f"{chunk}.c{b}"
            block_members = [c for c, _ in block_cells]
            per_run = sum(sec for _, sec in block_cells)
            size = max(1, int(target // per_run))
            if stack > 1:  # whole stacks of batched runs (a job trains each stack whole)
                size = max(stack, size // stack * stack)
            for r in all_repeats:
                for start in range(0, runs, size):
                    stop = min(runs, start + size)
                    add(f"{block}.r{r}.k{start}-{stop - 1}", block_members, (r,),
                        (start, stop), per_run * (stop - start), f"{block}.r{r}")
    groups: dict[str, list[FitJob]] = {}
    for job in plan.fit_jobs:
        groups.setdefault(job.metrics_job, []).append(job)
    for group, jobs in groups.items():
        repeats_of = tuple(sorted({r for j in jobs for r in j.repeats}))
        units = len(jobs[0].cells) * len(repeats_of)
        plan.metrics_jobs.append(MetricsJob(
            group, tuple(j.id for j in jobs), jobs[0].cells, repeats_of,
            _metrics_seconds(shape, config, units), mem_metrics))
    n_units = len(cells) * repeats
    plan.prediction_rows = n_units * runs * n_test
    row_groups = sum(len(job.cells) * len(job.repeats) for job in plan.fit_jobs)
    plan.prediction_bytes = (
        plan.prediction_rows * bytes_per_row(shape.n_classes, form,
                                             one_hot_probabilities(classifier, config))
        + row_groups * prediction_columns(shape.n_classes, form) * BYTES_PER_CHUNK)
    plan.table_bytes = (
        n_units * (BYTES_PER_REPEAT + BYTES_PER_SAMPLE * n_test + BYTES_PER_RUN * runs
                   + BYTES_PER_PAIR * runs * (runs - 1) / 2)
        + len(plan.metrics_jobs) * len(METRIC_TABLES) * BYTES_PER_TABLE_FILE)
    return plan


def _cell_blocks(cells: list[tuple[Cell, float]], target: float) -> list[list]:
    """Consecutive cells, with their seconds per fit, in blocks of at most ``target`` seconds
    (a cell dearer than that alone)."""
    blocks: list[list] = [[]]
    for cell, seconds in cells:
        if blocks[-1] and sum(s for _, s in blocks[-1]) + seconds > target:
            blocks.append([])
        blocks[-1].append((cell, seconds))
    return blocks


def _cost_of_declared(config: dict, cost: CostModel, shapes: dict[str, Shape],
                      notes: dict[str, str], unprobed: list[str], probes: bool = True) -> None:
    """Constants for each declared classifier the cost model lacks: its ``seconds_per_fit``,
    else probe fits (:mod:`modelvar.planning.probe_cost`; without ``probes`` only cached
    ones, the others added to ``unprobed``); ``notes`` says which."""
    from modelvar.models.user import EstimatorContractError
    from modelvar.planning import outputs, probe_cost

    test_fraction = config["split"]["test_fraction"]
    for clf in classifier_names(config):
        spec = classifier_spec(clf)
        if clf in cost.classifiers:
            if not spec.built_in:
                notes[clf] = f"the cost model's ({cost.source})"
            continue
        if spec.built_in:
            continue  # CostModel.seconds names the missing constants
        if spec.seconds_per_fit is not None:
            cost.classifiers[clf] = (probe_cost.declared_cost(spec.seconds_per_fit),)
            notes[clf] = f"declared seconds_per_fit {spec.seconds_per_fit:g} s"
            continue
        try:
            probed, notes[clf] = probe_cost.probed_cost(
                clf, spec.settings,
                [probe_cost.ProbeShape(int(s.n_rows * (1 - test_fraction)), s.d, s.n_classes,
                                       (name,)) for name, s in shapes.items()],
                config["results_dir"], budget=config["jobs"]["probe_budget_seconds"],
                threads=outputs.fit_threads(config, clf), probe_now=probes)
        except EstimatorContractError as exc:
            raise PlanError(f"classifiers: {exc} (found by the plan's probe fits of {clf} on "
                            "synthetic data; a fit job would stop the same way)") from None
        except probe_cost.ProbeFitFailed as exc:
            raise PlanError(f"classifiers: {exc} (the plan times probe fits of a classifier "
                            f"that declares no seconds_per_fit; declare it to skip them)") \
                from exc
        cost.classifiers[clf] = (probed,)
        if not probes and notes[clf].startswith(probe_cost.NOT_PROBED):
            unprobed.append(clf)


def probed_classifiers(config: dict, cost: CostModel, speedups: dict) -> list[str]:
    """The classifiers whose fits probe fits on a dataset's own rows price: the built-in ones
    whose fits run on the CPU and whose cost the cost model has
    (:mod:`modelvar.planning.data_probe`)."""
    return [clf for clf in classifier_names(config)
            if classifier_spec(clf).built_in and clf not in speedups
            and clf in cost.classifiers]


def _data_factors(config: dict, cost: CostModel, shapes: dict[str, Shape],
                  speedups: dict, unprobed: list[str], probes: bool = True,
                  cached: bool = True) -> dict:
    """Probe fits on the datasets' own rows (:mod:`modelvar.planning.data_probe`) of every
    built-in classifier whose fits run on the CPU (a GPU's fits are the cost model's divided
    by its speed-up); without ``probes`` only cached ones, the others added to ``unprobed``."""
    from modelvar.planning import data_probe, outputs

    probed = probed_classifiers(config, cost, speedups)

    def model_seconds_of(clf: str, shape: Shape):
        def seconds(rows: int, d: int) -> float:  # a clean fit of the probe's rows
            return cost.seconds(clf, rows, d, shape.n_classes, 1.0,
                                onehot_share=onehot_share(shape.n_numeric, d),
                                few_valued_share=few_valued_share(None, shape.n_few_valued, d))
        return seconds

    try:
        found = data_probe.data_factors(config, shapes, cost.source, probed,
                                        model_seconds_of=model_seconds_of,
                                        threads_of=lambda clf: outputs.fit_threads(config, clf),
                                        probe_now=probes, cached=cached)
    except MemoryError:
        limit = data_probe.address_space_limit()
        raise PlanError(
            "a probe fit on the data ran out of memory"
            + (f" under the address-space limit (ulimit -v {limit // 1024} kB): lift it "
               "(ulimit -v unlimited)" if limit is not None else "")
            + ", or turn the probes off (jobs.data_probe_seconds: 0)") from None
    if not probes and config["jobs"]["data_probe_seconds"] > 0:
        unprobed.extend(f"{clf} on {name}" for clf in probed for name, shape in shapes.items()
                        if shape.basis == "data" and (name, clf) not in found)
    return found


def plan_study(config: dict, schemas: dict[str, DatasetSchema | None], *,
               probes: bool = True, from_results: bool = True) -> StudyPlan:
    """The plan of a (validated) config, given the datasets' peeked schemas. Without ``probes``
    no probe fit runs (cached probes are used, else the cost model or an assumed cost, said in
    the plan's notes): what is checked before any fit (the address-space limit) reads it.
    Without ``from_results`` nothing of the results folder is read (its cached probes on the
    data, :mod:`modelvar.planning.data_probe`, and its recorded batches of repeats,
    :mod:`modelvar.planning.repeat_batches`): the plan of a folder never run."""
    jobs = config["jobs"]
    cost = load_cost_model(jobs.get("cost_model"))
    target = 60.0 * jobs["target_minutes"]
    speedups = gpu_speedups(config)
    study = StudyPlan({}, config["split"]["repeats"], config["split"]["runs"], target / 60,
                      speedups, cost.source)
    study.schedule = schedule_of(config)
    study.rounds = read_rounds(config["results_dir"]) if study.schedule else None
    try:
        recorded = repeat_batches.read(config["results_dir"]) if from_results else {}
    except repeat_batches.BatchRecordError as exc:
        raise PlanError(str(exc)) from None
    shapes = {name: dataset_shape(name, spec, schemas.get(name))
              for name, spec in config["datasets"].items()}
    _cost_of_declared(config, cost, shapes, study.cost_notes, study.unprobed, probes)
    factors = _data_factors(config, cost, shapes, speedups, study.unprobed, probes,
                            from_results)
    if config["jobs"]["data_probe_seconds"] > 0:
        study.probe_jobs = [(name, clf) for name, shape in shapes.items()
                            if shape.basis == "profile"
                            for clf in probed_classifiers(config, cost, speedups)]
        # a job of its own per dataset × classifier, run in parallel with the others: each gets
        # the budget a load's probes share among the datasets
        study.probe_share = float(config["jobs"]["data_probe_seconds"])
    study.data_notes = {key: found.note(full) for key, (found, full) in factors.items()}
    study.data_factors = {key: found.factor for key, (found, _) in factors.items()}
    for name in config["datasets"]:
        shape = shapes[name]
        cells, collapsed = dataset_cells(config["perturbation"], config["design"],
                                         Reach(shape.numeric, shape.categorical))
        form = probability_form(shape.n_classes, config)
        plan = DatasetPlan(name, shape, cells, collapsed, form)
        by_id = {c.id: c for c in cells}
        for clf in classifier_names(config):
            design = classifier_design(config["perturbation"], config["design"],
                                       Reach(shape.numeric, shape.categorical),
                                       classifier_spec(clf).seeded)
            cells_of_clf = [by_id.get(c) or Cell.parse(c) for c in design.cells]
            plan.classifiers[clf] = _plan_classifier(
                name, clf, cells_of_clf, shape, config, cost,
                target, speedups.get(clf), form, study.repeats_of(name, clf),
                *((factors[name, clf][0].factor, factors[name, clf][0].spread)
                  if (name, clf) in factors else (None, 1.0)), recorded=recorded)
            plan.classifiers[clf].design = design
            plan.classifiers[clf].collapsed = [f for f in design.collapsed
                                               if f not in collapsed]
        study.datasets[name] = plan
    return study


def runtime_minutes(seconds: float, margin_minutes: float = 10,
                    factor: float = LIMIT_FACTOR) -> int:
    """A job's time limit: ``factor`` (2, or a fit job's ``limit_factor``) times its estimate
    (with a Python process's start-up) plus ``margin_minutes`` (config
    ``jobs.runtime_margin_minutes``), at least one minute."""
    return max(1, int(math.ceil(factor * (seconds + STARTUP_SECONDS) / 60 + margin_minutes)))


def on_attempt(amount: float, attempt: int) -> int:
    """What a job asks for on its ``attempt`` (Snakemake's, from 1): ``amount`` on the first,
    doubled on each retry, so a job the scheduler killed for time or memory (SLURM's TIMEOUT,
    OUT_OF_MEMORY) comes back with twice as much."""
    if attempt < 1:
        raise ValueError(f"attempt counts from 1, got {attempt}")
    return int(math.ceil(amount * 2 ** (attempt - 1)))


def job_resources(config: dict, group: str, attempt: int, job=None) -> dict[str, int]:
    """``mem_mb`` and ``runtime`` (minutes) a job of a resource group asks for on its
    ``attempt``: the group's (:func:`modelvar.planning.outputs.resources`), for a plan-sized
    ``job`` (its :class:`FitJob` or :class:`MetricsJob`) at least the plan's (its memory; its
    estimate times its ``limit_factor`` (2 for a metrics job) plus
    ``jobs.runtime_margin_minutes``), doubled on each retry
    (:func:`on_attempt`)."""
    from modelvar.planning import outputs

    own = outputs.resources(config, group)
    mem_mb, runtime = own["mem_mb"], own["runtime"]
    if job is not None:
        mem_mb = max(job.mem_mb, mem_mb)
        runtime = max(runtime_minutes(job.seconds, config["jobs"]["runtime_margin_minutes"],
                                      getattr(job, "limit_factor", LIMIT_FACTOR)), runtime)
    return {"mem_mb": on_attempt(mem_mb, attempt), "runtime": on_attempt(runtime, attempt)}
