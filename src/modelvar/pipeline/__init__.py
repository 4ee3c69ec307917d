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

# The public face for reading a finished study, loaded on first use (as modelvar.data's).
_EXPORTS = {
    **dict.fromkeys(("read_predictions", "to_runs_matrix"), "modelvar.pipeline.predictions"),
    **dict.fromkeys(("read_table", "read_tables"), "modelvar.pipeline.result_tables"),
    "fit_repeat": "modelvar.pipeline.fitting",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
