"""Planning a study: everything the workflow's load and ``modelvar plan`` need to decide what
runs, before any job runs (how the workflow runs it is :mod:`modelvar.running`'s).

* :mod:`~modelvar.planning.config_check`: every problem with a config at once;
* :mod:`~modelvar.planning.plan`, :mod:`~modelvar.planning.cost_model`,
  :mod:`~modelvar.planning.probe_cost`, :mod:`~modelvar.planning.data_probe`,
  :mod:`~modelvar.planning.plan_report`: the jobs, their cost, memory and storage, and the
  printed plan;
* :mod:`~modelvar.planning.outputs`: what the workflow makes (every job's outputs and manifest,
  the findings' tables and figures) and the resources of each rule, decided once for the rules
  and the jobs.
"""

# The public face, loaded on first use (as modelvar.data's).
_EXPORTS = {
    **dict.fromkeys(("ConfigProblems", "check_config"), "modelvar.planning.config_check"),
    **dict.fromkeys(("StudyPlan", "plan_study"), "modelvar.planning.plan"),
    **dict.fromkeys(("format_plan",), "modelvar.planning.plan_report"),
    **dict.fromkeys(("CostModel", "calibrate"), "modelvar.planning.cost_model"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
