"""Planning a study: everything the workflow's load and ``modelvar plan`` need, before any job
runs.

* :mod:`~modelvar.planning.workflow_config`, :mod:`~modelvar.planning.config_check`: the config a
  command line resolves to, and every problem with it at once;
* :mod:`~modelvar.planning.plan`, :mod:`~modelvar.planning.cost_model`,
  :mod:`~modelvar.planning.probe_cost`, :mod:`~modelvar.planning.plan_report`: the jobs, their
  cost, memory and storage, and the printed plan;
* :mod:`~modelvar.planning.code_hash`, :mod:`~modelvar.planning.job_recipes`: what reruns a job
  (its code version, its recipe in the results folder);
* :mod:`~modelvar.planning.run_lock`: one run per results folder.
"""
