"""Planning a study: everything the workflow's load and ``modelvar plan`` need, before any job
runs.

* :mod:`~modelvar.planning.workflow_config`, :mod:`~modelvar.planning.config_check`: the config a
  command line resolves to, and every problem with it at once;
* :mod:`~modelvar.planning.plan`, :mod:`~modelvar.planning.cost_model`,
  :mod:`~modelvar.planning.probe_cost`, :mod:`~modelvar.planning.plan_report`: the jobs, their
  cost, memory and storage, and the printed plan;
* :mod:`~modelvar.planning.outputs`: what the workflow makes (every job's outputs and manifest,
  the findings' tables and figures) and the resources of each rule, decided once for the rules
  and the jobs;
* :mod:`~modelvar.planning.code_hash`, :mod:`~modelvar.planning.job_recipes`: what reruns a job
  (its code version, its recipe in the results folder);
* :mod:`~modelvar.planning.job_commands`: the jobs' shell commands (arguments past a command
  line's limit through a file);
* :mod:`~modelvar.planning.run_lock`: one run per results folder.
"""

# The public face, loaded on first use (as modelvar.data's).
_EXPORTS = {
    **dict.fromkeys(("ConfigProblems", "check_config"), "modelvar.planning.config_check"),
    **dict.fromkeys(("StudyPlan", "plan_study"), "modelvar.planning.plan"),
    **dict.fromkeys(("format_plan", "plan_of_command_line"), "modelvar.planning.plan_report"),
    **dict.fromkeys(("CostModel", "calibrate"), "modelvar.planning.cost_model"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
