"""The classifier registry: every classifier a study can name, built-in or the user's.

Built-ins (:data:`modelvar.models.classifiers.BUILT_IN`) are always registered; a user's
classifiers (:mod:`modelvar.models.user`) are registered from the config when the workflow loads
and from a job's ``--settings`` when a job starts. Everything that lists classifiers derives the
list from here: the config check, the workflow's wildcard constraints, the CLI's choices, the
plot colours, the plan's memory and the tuning spaces.
"""

from __future__ import annotations

import re

from modelvar.models.classifiers import BUILT_IN
from modelvar.models.spec import ClassifierSpec
from modelvar.names import CLASSIFIER_NAME

_BUILT_IN: dict[str, ClassifierSpec] = {s.name: s for s in BUILT_IN}
_USER: dict[str, ClassifierSpec] = {}
#: the Okabe–Ito palette's other four after the built-ins' (blue, sky blue, vermillion, bluish
#: green), then grey: user classifiers in study order. Eight classifiers stay apart for
#: colour-blind readers; each also has its own marker (modelvar.plots.common.MARKERS)
USER_COLOURS = ("#E69F00", "#CC79A7", "#000000", "#F0E442", "#777777")
#: what a classifier's name may look like (it is a path component and a wildcard's value)
NAME_PATTERN = CLASSIFIER_NAME


def built_in_names() -> tuple[str, ...]:
    return tuple(_BUILT_IN)


def names() -> tuple[str, ...]:
    """Every registered classifier: the built-ins, then the user's."""
    return (*_BUILT_IN, *_USER)


def spec(name: str) -> ClassifierSpec:
    """The spec of a registered classifier (a clear error naming the known ones otherwise)."""
    found = _BUILT_IN.get(name) or _USER.get(name)
    if found is None:
        raise ValueError(f"unknown classifier {name!r}; available: {list(names())} (a classifier "
                         "of your own is declared in the config's `classifiers` with an "
                         "`estimator`: docs/developing.md)")
    return found


def register(user_spec: ClassifierSpec) -> ClassifierSpec:
    """Add (or replace) a user classifier; a built-in's name is refused."""
    if user_spec.name in _BUILT_IN:
        raise ValueError(f"classifier {user_spec.name!r}: the name of a built-in classifier; "
                         "choose another name")
    _USER[user_spec.name] = user_spec
    return user_spec


def classifier_names(config: dict) -> list[str]:
    """The study's classifiers by name: the config's ``classifiers`` entries, a built-in's name
    or a declaration's ``name``."""
    return [e if isinstance(e, str) else e["name"] for e in config["classifiers"]]


def declare(config: dict) -> list[str]:
    """Register the classifiers the config declares (:mod:`modelvar.models.user`), replacing
    any registered before; return every problem (a name given twice, a bad declaration) with
    its key path. Imports each declared estimator, so that a bad one is found before any job."""
    from modelvar.models import user

    _USER.clear()
    problems: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(config.get("classifiers") or []):
        name = entry.get("name") if isinstance(entry, dict) else entry
        if name in seen:
            problems.append(f"classifiers[{i}]: {name!r} is named twice")
        seen.add(name)
        if not isinstance(entry, dict):
            continue
        try:
            declaration = user.check(entry, f"classifiers[{i}]", built_in_names())
        except user.DeclarationError as exc:
            problems += exc.problems
            continue
        register(user.to_spec(name, declaration))
    return problems


def register_from_settings(name: str, settings: dict) -> ClassifierSpec:
    """In a job: the spec of ``name``, a built-in or the declaration its settings carry
    (``settings["declared"]``, :meth:`modelvar.models.user.Declaration.to_json`)."""
    if "declared" not in settings:
        return spec(name)
    from modelvar.models import user

    return register(user.to_spec(name, user.Declaration.from_json(settings["declared"])))


def on_gpu(name: str, settings: dict | None = None) -> bool:
    """Whether a classifier's fits and tuning run in the GPU-tagged rules: its spec's ``gpu``,
    unless the config's ``classifier_settings`` (``settings``, all classifiers') says otherwise
    for it (``gpu: true`` only for a classifier that can use a GPU: its spec's
    ``gpu_capable``; the config check refuses the others)."""
    return bool((settings or {}).get(name, {}).get("gpu", spec(name).gpu))


def wildcard(*, gpu: bool | None = None, among: list[str] | tuple[str, ...] | None = None,
             settings: dict | None = None) -> str:
    """A regular expression matching exactly the registered classifiers (those ``among``, if
    given; with ``gpu``, only those whose fits run on a GPU (:func:`on_gpu`, with the config's
    ``classifier_settings``), or only the others); one that never matches when there are
    none."""
    chosen = [n for n in (among if among is not None else names())
              if gpu is None or on_gpu(n, settings) == gpu]
    return "|".join(re.escape(n) for n in chosen) or "(?!)"


def fit_rule(name: str, settings: dict | None = None) -> str:
    """The rule of a classifier's fit jobs: those on a GPU (:func:`on_gpu`) run in ``fit_mlp``
    (named after the built-in that always does), the others' in ``fit``."""
    return "fit_mlp" if on_gpu(name, settings) else "fit"


def tune_rule(name: str, settings: dict | None = None) -> str:
    """The rule of a classifier's tuning job: ``tune_gpu`` for those on a GPU, else ``tune``."""
    return "tune_gpu" if on_gpu(name, settings) else "tune"


def colour(name: str, study: list[str] | tuple[str, ...] = ()) -> str:
    """A classifier's colour in the figures: its spec's, else the next of :data:`USER_COLOURS`
    in the order of the study's classifiers that have none (the same classifiers in the same
    order: the same colours in every figure of a study)."""

    def own(n: str) -> str | None:
        found = _BUILT_IN.get(n) or _USER.get(n)
        return found.colour if found is not None else None

    if own(name):
        return own(name)
    uncoloured = [n for n in study if not own(n)]
    index = uncoloured.index(name) if name in uncoloured else len(uncoloured)
    return USER_COLOURS[min(index, len(USER_COLOURS) - 1)]


def make_classifier(name: str, hparams: dict | None = None, *, seed: int, threads: int = 1,
                    device: str | None = None, epochs: int | None = None):
    """A model of the named classifier (:mod:`modelvar.models.classifiers`) with its default
    hparams updated by ``hparams`` (unknown names and values outside the classifier's space
    refused). ``epochs`` overrides the default training length of a classifier that trains for
    epochs."""
    found = spec(name)
    if epochs is not None and (found.epochs is None or int(epochs) < 1):
        trains = [n for n in names() if spec(n).epochs is not None]
        raise ValueError(f"{name}: epochs must be a positive integer and only applies to "
                         f"classifiers that train for epochs ({', '.join(trains)})")
    realised = {**found.defaults(), **(hparams or {})}
    unknown = set(realised) - {h.name for h in found.space}
    if unknown:
        raise ValueError(f"{name}: unknown hyperparameter(s) {sorted(unknown)}")
    outside = [f"{h.name}: {problem}" for h in found.space
               if (problem := h.problem(realised[h.name]))]
    if outside:
        raise ValueError(f"{name}: hyperparameter(s) outside its space: {'; '.join(outside)}")
    return found.build(realised, seed=seed, threads=threads, device=device, epochs=epochs)
