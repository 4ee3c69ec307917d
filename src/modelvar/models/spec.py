"""What a classifier is to the study: one :class:`ClassifierSpec` per classifier.

Every stage reads a classifier's properties from its spec and from nowhere else: the fit job
builds the model with ``build``, hyperparameter perturbation and tuning use ``space``, the runs
table records the versions of ``libraries``, the plan sizes a job's memory with ``memory_mb`` and
its seconds with the cost model (or ``seconds_per_fit``), ``gpu`` puts its fits into the
GPU-tagged rule (``gpu_capable``: a study may put them there), and the figures draw it in
``colour``. The built-ins
(:mod:`modelvar.models.classifiers`) and a user's classifiers from the config
(:mod:`modelvar.models.user`) are specs of the same kind, kept in
:mod:`modelvar.models.registry`.

Importing this module imports no machine-learning library: the workflow reads specs when it loads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from modelvar.models.hparams import HParam, defaults


def _never_one_hot(_base: dict) -> bool:
    return False


@dataclass(frozen=True)
class ClassifierSpec:
    """One classifier.

    ``build(hparams, *, seed, threads, device, epochs)`` returns a model with ``fit(X, y,
    n_classes)``, ``predict_proba(X) -> (n, n_classes)``, ``predict(X) -> (n,)``, ``hparams`` and
    ``device`` (:mod:`modelvar.models.classifiers`); ``hparams`` are the space's defaults updated by
    the run's values. A model may also have ``warm_up(X, y, n_classes)``: one-time loading per
    process (a library's import, compiled kernels) that the fit job runs before it times fit +
    predict, so that a run's ``fit_seconds`` is its own. ``seeded``: the model seed reaches the
    model (without it, "model seed per run" cannot act). ``epochs``: the default training length of
    a classifier that trains for epochs (the config's ``classifier_settings.NAME.epochs`` overrides
    it), None for the others. ``batched``: several runs can train as one batched model
    (:func:`modelvar.pipeline.fitting.fit_repeat_arrays`). ``one_hot_probabilities(base)``: with
    these base hparams its probability columns are one-hot (no probabilities; the plan's storage).
    ``hides_pandas``: its fit jobs run without pandas importable (``modelvar.cli``).
    ``seconds_per_fit``: a declared cost of one fit, used by the plan instead of the cost model.
    ``cost_regimes``: ``("classes" | "rows" | "columns", threshold)`` pairs from which its fit takes
    another algorithm or grows otherwise (the cost model fits each range apart:
    :mod:`modelvar.planning.cost_model`). ``gpu``: its fits and tuning run in the GPU-tagged rules;
    ``gpu_capable``: it fits on a GPU when one is visible, so a study may tag it
    (``classifier_settings.NAME.gpu``, either way). ``origin``: "built-in", or what a user spec came
    from (its estimator's class path). ``settings``: the config entry a user spec was made from
    (what its jobs are given).
    """

    name: str
    build: Callable[..., object]
    space: tuple[HParam, ...]
    libraries: tuple[str, ...]
    memory_mb: int
    colour: str | None = None
    gpu: bool = False
    gpu_capable: bool = False
    seeded: bool = True
    epochs: int | None = None
    batched: bool = False
    one_hot_probabilities: Callable[[dict], bool] = _never_one_hot
    hides_pandas: bool = False
    seconds_per_fit: float | None = None
    cost_regimes: tuple[tuple[str, int], ...] = ()
    origin: str = "built-in"
    settings: dict = field(default_factory=dict)

    def defaults(self) -> dict:
        """The base hyperparameters: each of the space's default."""
        return defaults(self.space)

    @property
    def built_in(self) -> bool:
        return self.origin == "built-in"
