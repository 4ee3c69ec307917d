"""The study pipeline: what the workflow's rules run between the stages.

* :mod:`~modelvar.pipeline.cells`, :mod:`~modelvar.pipeline.design`: perturbation cells and
  which of them a dataset gets (factorial, one-at-a-time, both; no-op families collapsed);
* :mod:`~modelvar.pipeline.plan`, :mod:`~modelvar.pipeline.cost_model`: the jobs, their cost,
  memory and storage, before anything runs (``modelvar plan``);
* :mod:`~modelvar.pipeline.fitting`: fit jobs (runs of repeats of cells);
* :mod:`~modelvar.pipeline.predictions`: the prediction files, written and read one repeat at a
  time;
* :mod:`~modelvar.pipeline.metric_tables`, :mod:`~modelvar.pipeline.grouped_tables`: per-repeat
  metric tables from prediction files;
* :mod:`~modelvar.pipeline.result_tables`: where every table lives, and reading them back;
* :mod:`~modelvar.pipeline.workflow_config`: the config a Snakemake command line resolves to.
"""
