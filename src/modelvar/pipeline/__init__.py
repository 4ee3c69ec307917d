"""The job cores: what the workflow's jobs run between the stages, one module per job kind.

* :mod:`~modelvar.pipeline.fitting`: fit jobs (runs of repeats of cells), and
  :mod:`~modelvar.pipeline.refit`, which fits any run of a prediction file again;
* :mod:`~modelvar.pipeline.predictions`: the prediction files, written and read one repeat at a
  time (:mod:`~modelvar.pipeline.user_predictions`: a user's own predictions, for
  ``modelvar metrics``);
* :mod:`~modelvar.pipeline.metric_tables`, :mod:`~modelvar.pipeline.grouped_tables`: per-repeat
  metric tables from prediction files;
* :mod:`~modelvar.pipeline.result_tables`: where every table lives, and reading them back;
* :mod:`~modelvar.pipeline.dataset_overview`: the datasets' overview page.

What a study is made of lives in :mod:`modelvar.study`, how it is planned in
:mod:`modelvar.planning`.
"""
