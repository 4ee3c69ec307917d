"""The study pipeline: what the workflow's rules run between the stages.

* :mod:`~modelvar.pipeline.cells`: the perturbation grid (cells and their ids);
* :mod:`~modelvar.pipeline.fitting`: fit jobs (runs of repeats of cells);
* :mod:`~modelvar.pipeline.predictions`: the prediction-table schema and its reader;
* :mod:`~modelvar.pipeline.metric_tables`, :mod:`~modelvar.pipeline.grouped_tables`: per-repeat
  metric tables from prediction tables;
* :mod:`~modelvar.pipeline.aggregate`: the aggregated, partitioned results dataset;
* :mod:`~modelvar.pipeline.workflow_config`: the config a Snakemake command line resolves to.
"""
