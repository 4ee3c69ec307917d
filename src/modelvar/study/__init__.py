"""The study's vocabulary: what a study is made of, before anything is fitted or drawn.

* :mod:`~modelvar.study.families`: the perturbation families, each declared once (the registry
  that the config schema, cells, fit jobs, tables, figures and findings read);
* :mod:`~modelvar.study.cells`: perturbation cells (one level per family) and their ids;
* :mod:`~modelvar.study.design`: which cells a dataset gets (factorial, one-at-a-time, both;
  families a dataset cannot be perturbed by collapse) and the role of each cell;
* :mod:`~modelvar.study.figures`: the dataset figures, each declared once.

Nothing here imports a machine-learning or plotting library: the workflow reads it while it
loads.
"""
