"""A user's own classifier, declared in the config: any estimator with scikit-learn's
``fit(X, y)`` and ``predict(X)`` (and ``predict_proba(X)`` where it has one).

A declaration (one entry of the config's ``classifiers``)::

    - name: rf
      estimator: sklearn.ensemble.RandomForestClassifier   # or my_models.py:MyClassifier
      params: {n_estimators: 200}      # fixed constructor arguments
      seed_param: random_state         # how the model seed reaches it (null: deterministic)
      threads_param: n_jobs            # how the job's threads reach it (null: not at all)
      device_param: device             # optional: how "cuda" or "cpu" reaches it (it can use
                                       # a GPU; `classifier_settings.NAME.gpu` may then tag it)
      hparams:                         # the space of hparam perturbation and tuning
        max_features: {type: float, low: 0.05, high: 1.0, default: 0.5}
        min_samples_leaf: {type: int, low: 1, high: 50, scale: log}
        criterion: {type: categorical, values: [gini, entropy]}
      seconds_per_fit: 0.2             # optional: the plan's cost of one fit
      memory_mb: 400                   # optional: its libraries' memory in a job (default 500)

``estimator`` is an import path (``package.module.Class``: an installed package) or a Python
file and a class in it (``path/to/file.py:Class``, the path relative to the working directory,
where Snakemake runs, like a ``file`` dataset's). Hyperparameter types map onto the spaces of
:mod:`modelvar.models.hparams`: ``float`` (``continuous``; ``scale: log``: ``log``), ``int``
(``ordinal``; ``scale: log``: ``log-ordinal``), ``categorical`` (``values``). A hyperparameter's
default is its ``default``, else its value in ``params``, else the constructor's default; it
must lie in the declared range.

:func:`declare` checks everything before any job runs and says what is wrong with the entry's
key path: an estimator that does not import, a class without ``fit``/``predict``, a parameter
the constructor does not take, bounds out of order, a default outside them, a built-in's name.

The model (:class:`EstimatorModel`) sees the run's training rows with class indices as labels.
Its probability columns cover every class of the dataset (a class absent from the run's training
rows gets 0); an estimator without ``predict_proba`` gets the one-hot vector of its prediction,
as svm-sgd's hinge loss does. A single training class gives that class everywhere, without a fit.

**The contract**, checked after every fit (the plan's probe fits too, so that a dry run or
``modelvar plan`` finds a broken estimator before any job): ``predict`` returns one label per
row, each among the class indices it was fitted on; ``predict_proba`` an (n, fitted classes)
array of probabilities, each in [0, 1], each row summing to 1 (within 1e-6). Anything else stops
with one line naming the classifier, the method and what was wrong
(:class:`EstimatorContractError`: "shorty.predict returned 211 labels for 212 rows").
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from modelvar.models.classifiers import full_proba, nvidia_gpu_visible, one_hot
from modelvar.models.hparams import HParam
from modelvar.models.spec import ClassifierSpec
from modelvar.source_code import digest as source_digest
from modelvar.table_files import sha256_file


class EstimatorContractError(ValueError):
    """A user's estimator returned what the study cannot use (module docstring)."""


#: how far a row of probabilities may sum from 1
PROBABILITY_TOLERANCE = 1e-6
#: a job's memory for a user classifier's libraries when its declaration gives none (MB)
DEFAULT_MEMORY_MB = 500
TYPES = ("float", "int", "categorical")


class DeclarationError(ValueError):
    """A user classifier's declaration is wrong; the message lists every problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


def load_class(path: str):
    """The class an ``estimator`` names: ``package.module.Class`` or ``file.py:Class``."""
    if ":" in path:
        file, _, name = path.rpartition(":")
        source = Path(file)
        if not source.is_file():
            raise ImportError(f"{file} is not a file (relative paths are to the working "
                              f"directory, {Path.cwd()})")
        module_name = "modelvar_user_" + hashlib.sha256(
            str(source.resolve()).encode()).hexdigest()[:16]
        module = sys.modules.get(module_name)
        if module is None:
            spec = importlib.util.spec_from_file_location(module_name, source)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module  # dataclasses and pickling look it up
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[module_name]
                raise
    else:
        module_path, _, name = path.rpartition(".")
        if not module_path:
            raise ImportError(f"{path!r} is not a class path (package.module.Class, or "
                              "file.py:Class)")
        module = importlib.import_module(module_path)
    if not hasattr(module, name):
        raise ImportError(f"{file if ':' in path else module_path} has no {name!r}")
    return getattr(module, name)


def package_version(cls) -> dict[str, str]:
    """The distribution that installed ``cls``'s top-level package, with its version (empty for
    a class from a local file or an unpackaged module)."""
    top = cls.__module__.split(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        return {dist: importlib.metadata.version(dist)}
    return {}


def _accepted(cls) -> tuple[set[str], bool, dict]:
    """The constructor's parameter names, whether it takes ``**kwargs``, and its defaults."""
    params = inspect.signature(cls).parameters.values()
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    open_ended = any(p.kind == p.VAR_KEYWORD for p in params)
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    return names, open_ended, defaults


def _hparam(name: str, entry: dict, default, where: str, problems: list[str]) -> HParam | None:
    kind = entry.get("type")
    if kind not in TYPES:
        problems.append(f"{where}.type: {kind!r} is not one of {list(TYPES)}")
        return None
    if kind == "categorical":
        values = entry.get("values")
        if not isinstance(values, list) or len(values) < 2:
            problems.append(f"{where}.values: a categorical hyperparameter needs a list of at "
                            "least two values")
            return None
        if default not in values:
            problems.append(f"{where}: its default {default!r} is not one of {values}; give "
                            "`default:` (or the value in `params`)")
            return None
        return HParam(name, "categorical", default, choices=tuple(values))
    low, high = entry.get("low"), entry.get("high")
    numbers = [v for v in (low, high) if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) < 2 or not all(math.isfinite(v) for v in numbers):
        problems.append(f"{where}: a {kind} hyperparameter needs finite numbers `low` and "
                        f"`high`, got low={low!r}, high={high!r}")
        return None
    if not low < high:
        problems.append(f"{where}: bounds out of order: low {low} must be below high {high}")
        return None
    log = entry.get("scale", "linear") == "log"
    if entry.get("scale", "linear") not in ("linear", "log"):
        problems.append(f"{where}.scale: {entry['scale']!r} is not one of ['linear', 'log']")
        return None
    if log and low <= 0:
        problems.append(f"{where}: a log-scale range must be above 0, got low {low}")
        return None
    if kind == "int" and (low != int(low) or high != int(high)):
        problems.append(f"{where}: an int hyperparameter needs whole-number bounds, got "
                        f"[{low}, {high}]")
        return None
    ok = isinstance(default, int | float) and not isinstance(default, bool) \
        and low <= default <= high and (kind == "float" or default == int(default))
    if not ok:
        what = "a whole number" if kind == "int" else "a number"
        problems.append(f"{where}: its default {default!r} is not {what} in [{low}, {high}]; "
                        "give `default:` (or the value in `params`)")
        return None
    if kind == "int":
        return HParam(name, "log-ordinal" if log else "ordinal", int(default), int(low),
                      int(high))
    return HParam(name, "log" if log else "continuous", float(default), float(low),
                  float(high))


@dataclass(frozen=True)
class Declaration:
    """A checked declaration: what a job needs to build the estimator (JSON-able, so it travels
    to jobs in their ``--settings``; ``source_sha256``: a local file's digest, of its normalised
    source for a Python file (:mod:`modelvar.source_code`: comments and docstrings do not
    count), so that editing what the file does reruns this classifier's jobs, and only
    them)."""

    estimator: str
    params: dict
    seed_param: str | None
    threads_param: str | None
    space: tuple[HParam, ...]
    seconds_per_fit: float | None
    memory_mb: int
    source_sha256: str | None = None
    device_param: str | None = None

    def to_json(self) -> dict:
        return {
            "estimator": self.estimator, "params": self.params, "seed_param": self.seed_param,
            "threads_param": self.threads_param, "seconds_per_fit": self.seconds_per_fit,
            "memory_mb": self.memory_mb, "source_sha256": self.source_sha256,
            "device_param": self.device_param, "space": [asdict(h) for h in self.space],
        }

    @classmethod
    def from_json(cls, body: dict) -> Declaration:
        space = tuple(HParam(**{**h, "choices": tuple(h["choices"])}) for h in body["space"])
        return cls(body["estimator"], dict(body["params"]), body["seed_param"],
                   body["threads_param"], space, body["seconds_per_fit"], body["memory_mb"],
                   body.get("source_sha256"), body.get("device_param"))


def check(entry: dict, where: str, built_in: tuple[str, ...]) -> Declaration:
    """Check one ``classifiers`` entry (module docstring); :class:`DeclarationError` lists
    every problem, each with its key path."""
    problems: list[str] = []
    name = entry.get("name")
    if name in built_in:
        problems.append(f"{where}.name: {name!r} is the name of a built-in classifier; choose "
                        "another name")
    path = entry.get("estimator", "")
    try:
        cls = load_class(path)
    except Exception as exc:
        raise DeclarationError(problems + [
            f"{where}.estimator: {path!r} does not import: {type(exc).__name__}: {exc}"]) \
            from None
    if not inspect.isclass(cls):
        raise DeclarationError(problems + [f"{where}.estimator: {path!r} is not a class"])
    missing = [m for m in ("fit", "predict") if not callable(getattr(cls, m, None))]
    if missing:
        problems.append(f"{where}.estimator: {cls.__name__} has no {' or '.join(missing)} "
                        "method (scikit-learn's fit(X, y) and predict(X) are needed)")
    try:
        accepted, open_ended, ctor_defaults = _accepted(cls)
    except (TypeError, ValueError):
        accepted, open_ended, ctor_defaults = set(), True, {}
    params = dict(entry.get("params") or {})
    hparams = dict(entry.get("hparams") or {})
    seed_param, threads_param = entry.get("seed_param"), entry.get("threads_param")
    device_param = entry.get("device_param")
    rejected = set()
    for key, names in (("params", params), ("hparams", hparams),
                       ("seed_param", [seed_param] if seed_param else []),
                       ("threads_param", [threads_param] if threads_param else []),
                       ("device_param", [device_param] if device_param else [])):
        for arg in names:
            if not open_ended and arg not in accepted:
                rejected.add(arg)
                problems.append(f"{where}.{key}: {cls.__name__}() takes no argument {arg!r}; "
                                f"it takes {sorted(accepted)}")
    for arg in {seed_param, threads_param, device_param} - {None}:
        if arg in params or arg in hparams:
            problems.append(f"{where}: {arg!r} is set by modelvar (the model seed, the job's "
                            "threads or its device); leave it out of params and hparams")
    given = [a for a in (seed_param, threads_param, device_param) if a]
    for arg in sorted({a for a in given if given.count(a) > 1}):
        problems.append(f"{where}: {arg!r} is named by more than one of seed_param, "
                        "threads_param and device_param")
    space = []
    for hp_name, hp_entry in hparams.items():
        hp_where = f"{where}.hparams.{hp_name}"
        if hp_name in rejected:
            continue
        if not isinstance(hp_entry, dict):
            problems.append(f"{hp_where}: expected a mapping such as {{type: float, low: 0, "
                            "high: 1}}")
            continue
        default = hp_entry.get("default", params.get(hp_name, ctor_defaults.get(hp_name)))
        hp = _hparam(hp_name, hp_entry, default, hp_where, problems)
        if hp is not None:
            space.append(hp)
    if problems:
        raise DeclarationError(problems)
    source = None
    if ":" in path:  # what the file does, not its comments: editing those reruns nothing
        file = Path(path.rpartition(":")[0])
        source = source_digest(file.read_text()) if file.suffix == ".py" else sha256_file(file)
    return Declaration(path, params, seed_param, threads_param, tuple(space),
                       entry.get("seconds_per_fit"),
                       int(entry.get("memory_mb", DEFAULT_MEMORY_MB)), source, device_param)


@dataclass
class EstimatorModel:
    """A user's estimator (``estimator``: its class, imported once per process) behind the
    classifiers' interface (module docstring)."""

    estimator: type
    declaration: Declaration
    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    name: str = "the estimator"
    model: object = field(init=False, default=None)
    present: np.ndarray = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)

    def arguments(self) -> dict:
        out = {**self.declaration.params, **self.hparams}
        if self.declaration.seed_param:
            out[self.declaration.seed_param] = self.seed
        if self.declaration.threads_param:
            out[self.declaration.threads_param] = self.threads
        if self.declaration.device_param:
            out[self.declaration.device_param] = self.device
        return out

    def fit(self, X, y, n_classes):
        self.n_classes = n_classes
        self.present = np.unique(y)
        self.model = None
        if len(self.present) > 1:
            self.model = self.estimator(**self.arguments())
            self.model.fit(X, y)
        return self

    def _broken(self, method: str, what: str) -> EstimatorContractError:
        return EstimatorContractError(f"{self.name}.{method} {what}")

    def predict(self, X):
        if self.model is None:
            return np.full(len(X), self.present[0], dtype=np.int64)
        labels = np.asarray(self.model.predict(X))
        if labels.ndim != 1 or len(labels) != len(X):
            raise self._broken("predict", f"returned {_count(labels, 'label')} for {len(X)} "
                               "rows (one label per row)")
        if labels.dtype.kind == "f" and np.isnan(labels).any():
            raise self._broken("predict", f"returned NaN (not a number) as "
                               f"{_missing(np.isnan(labels))}")
        try:
            as_int = labels.astype(np.int64)
        except (TypeError, ValueError):
            first = labels.flat[0].item() if hasattr(labels.flat[0], "item") else labels.flat[0]
            raise self._broken("predict", f"returned labels such as {first!r}: it must "
                               "return the class indices it was fitted on "
                               f"({_listed(self.present)})") from None
        if labels.dtype.kind == "f" and not np.array_equal(as_int, labels):
            raise self._broken("predict", f"returned non-integer labels such as "
                               f"{labels[as_int != labels][0]!r}")
        unknown = np.setdiff1d(as_int, self.present)
        if len(unknown):
            raise self._broken("predict", f"returned {_listed(unknown)}, not among the "
                               f"{len(self.present)} classes it was fitted on "
                               f"({_listed(self.present)})")
        return as_int

    def predict_proba(self, X):
        if self.model is None or not hasattr(self.model, "predict_proba"):
            return one_hot(self.predict(X), self.n_classes)
        classes = np.asarray(getattr(self.model, "classes_", self.present)).astype(np.int64)
        try:
            proba = np.asarray(self.model.predict_proba(X), dtype=float)
        except (TypeError, ValueError):
            raise self._broken("predict_proba", "returned values that are not numbers") \
                from None
        if proba.shape != (len(X), len(classes)):
            raise self._broken("predict_proba", f"returned shape {proba.shape} for {len(X)} "
                               f"rows of {len(classes)} fitted classes (one column per class)")
        if np.isnan(proba).any():
            raise self._broken("predict_proba", f"returned NaN (not a number) as "
                               f"{_missing(np.isnan(proba))}")
        if not (np.isfinite(proba).all() and (proba >= 0).all() and (proba <= 1).all()):
            raise self._broken("predict_proba", "returned values outside [0, 1] "
                               "(probabilities, not scores)")
        sums = proba.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1) > PROBABILITY_TOLERANCE)
        if len(off):
            raise self._broken("predict_proba", f"returned rows that do not sum to 1 (row "
                               f"{off[0]}: {sums[off[0]]:.6g})")
        return full_proba(proba, classes, self.n_classes)


def _count(values: np.ndarray, noun: str) -> str:
    n = len(values) if values.ndim else 1
    shape = f" (shape {values.shape})" if values.ndim > 1 else ""
    return f"{n} {noun}{'s' * (n != 1)}{shape}"


def _missing(nan: np.ndarray) -> str:
    """Where a method's output is NaN: 'the label of 3 of 212 rows (the first: row 5)', or
    'the probability of ... (the first: row 5, class 2)'."""
    where = np.argwhere(nan)[0]
    rows = nan.reshape(len(nan), -1).any(axis=1)
    noun = "the label" if nan.ndim == 1 else "a probability"
    first = f"row {where[0]}" + (f", class {where[1]}" if nan.ndim > 1 else "")
    return f"{noun} of {int(rows.sum())} of {len(nan)} rows (the first: {first})"


def _listed(values, at_most: int = 5) -> str:
    values = [v.item() if hasattr(v, "item") else v for v in values]
    shown = ", ".join(map(str, values[:at_most]))
    return shown + (f", … ({len(values)} in all)" if len(values) > at_most else "")


def to_spec(name: str, declaration: Declaration) -> ClassifierSpec:
    """The declaration as a spec like the built-ins' (:mod:`modelvar.models.spec`)."""
    cls = load_class(declaration.estimator)
    has_proba = callable(getattr(cls, "predict_proba", None))

    def build(hparams, *, seed, threads, device, epochs):
        if declaration.device_param is None:
            device = "cpu"  # it has no way to use another
        elif device is None:
            device = "cuda" if nvidia_gpu_visible() else "cpu"
        return EstimatorModel(cls, declaration, hparams, seed, threads, device, name)

    return ClassifierSpec(
        name, build, declaration.space, libraries=tuple(package_version(cls)),
        memory_mb=declaration.memory_mb, seeded=declaration.seed_param is not None,
        gpu_capable=declaration.device_param is not None,
        one_hot_probabilities=lambda base: not has_proba,
        seconds_per_fit=declaration.seconds_per_fit, origin=declaration.estimator,
        settings=declaration.to_json())
