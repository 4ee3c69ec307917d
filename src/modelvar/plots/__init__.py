"""Figures (matplotlib/seaborn): :mod:`~modelvar.plots.study` (each dataset's figure set) and
:mod:`~modelvar.plots.simulation` (the simulation studies); shared helpers in
:mod:`~modelvar.plots.common`. Importing this package selects the non-interactive Agg backend,
before any submodule imports pyplot."""

import matplotlib

matplotlib.use("Agg")
