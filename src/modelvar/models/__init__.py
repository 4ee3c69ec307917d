"""Models: the four classifiers of seed 004, their hyperparameter spaces and perturbation, and
random-search tuning.

* :mod:`~modelvar.models.classifiers`: ``make_classifier`` (lr-sgd, svm-sgd, xgb, mlp);
* :mod:`~modelvar.models.hparams`: spaces as data, hyperparameter perturbation;
* :mod:`~modelvar.models.tuning`: random search on a dedicated split.
"""

from modelvar.models.classifiers import CLASSIFIERS, make_classifier

__all__ = ["CLASSIFIERS", "make_classifier"]
