"""Models: the classifiers (the four of seed 004 and a user's own), their hyperparameter spaces and
perturbation, and random-search tuning.

* :mod:`~modelvar.models.spec`: what a classifier is to the study (``ClassifierSpec``);
* :mod:`~modelvar.models.classifiers`: the four built-ins of seed 004 and their specs;
* :mod:`~modelvar.models.registry`: every classifier a study can name, ``make_classifier``;
* :mod:`~modelvar.models.hparams`: spaces as data, hyperparameter perturbation;
* :mod:`~modelvar.models.tuning`: random search on a dedicated split.
"""

from modelvar.models.registry import make_classifier, names

__all__ = ["make_classifier", "names"]
