"""The study's vocabulary: what a study is made of, before anything is fitted or drawn.

* :mod:`~modelvar.study.families`: the perturbation families, each declared once (the registry
  that the config schema, cells, fit jobs, tables, figures and findings read);
* :mod:`~modelvar.study.cells`: perturbation cells (one level per family) and their ids;
* :mod:`~modelvar.study.design`: which cells a dataset × classifier gets (factorial,
  one-at-a-time, both; families a dataset cannot be perturbed by collapse, a seedless
  classifier's model seed too) and the role of each cell, decided once for the whole study;
* :mod:`~modelvar.study.figures`: the dataset figures, each declared once;
* a sequential study: :mod:`~modelvar.study.rounds` (its schedule and state, one record),
  :mod:`~modelvar.study.looks` (the level each look spends: exact group-sequential boundaries),
  :mod:`~modelvar.study.stopping` (when a block stops, the next round) and
  :mod:`~modelvar.study.claim_paths` (the stopping rule on simulated claims: the plan's prior),
  which the findings and the planner both call.

Nothing here imports a machine-learning or plotting library: the workflow reads it while it
loads (the sequential modules import SciPy only inside the functions that compute).
"""

# The public face, loaded on first use (as modelvar.data's): importing one of these modules does
# not import the others, so a job's code version (modelvar.running.code_hash) holds only what
# it uses.
_EXPORTS = {
    **dict.fromkeys(("Cell", "cell_label", "grid", "level_label"), "modelvar.study.cells"),
    **dict.fromkeys(("Family", "TrainingRows", "families", "family", "names", "register",
                     "unregister"), "modelvar.study.families"),
    **dict.fromkeys(("ClassifierDesign", "DatasetDesign", "Reach", "active_sources",
                     "cell_roles", "classifier_design", "control", "dataset_cells"),
                    "modelvar.study.design"),
    **dict.fromkeys(("DATASET_FIGURES", "FigureSpec"), "modelvar.study.figures"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
