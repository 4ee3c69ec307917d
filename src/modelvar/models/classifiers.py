"""The four classifiers of seed 004 behind one small interface, each declared once as a
:class:`~modelvar.models.spec.ClassifierSpec` (:data:`BUILT_IN`: how it is built, its
hyperparameter space, libraries, memory, colour, …).

``make_classifier(name, hparams, seed=..., threads=...)`` returns an object with
``fit(X, y, n_classes)``, ``predict_proba(X) -> (n, n_classes)``, ``predict(X) -> (n,)`` on int
class indices, ``hparams`` (the realised hyperparameters) and ``device``. Probability columns
always cover all ``n_classes`` classes of the dataset in its class order, also when a class is
absent from a run's training rows (its column is then 0).

* ``lr-sgd``: ``SGDClassifier(loss="log_loss", learning_rate="adaptive")``. From
  :data:`MANY_CLASSES` classes on, both SGD classifiers fit the same one-vs-rest model with
  :class:`~modelvar.models.ovr_sgd.OvRSGDClassifier`, which advances all binary problems in one
  pass over the rows per epoch (much less CPU at 100 classes and more: ``make bench-sgd``,
  docs/measurements/design-choices.md; the rows' order is shared by the problems instead of
  drawn per problem, ``docs/decisions.md``).
* ``svm-sgd``: ``SGDClassifier`` with ``loss`` ∈ {hinge, modified_huber}. **Probabilities**:
  modified_huber has sklearn's ``predict_proba``; the hinge loss has none, so the probability
  columns hold the one-hot vector of the predicted class (1 for it, 0 elsewhere) — degenerate,
  uncalibrated "probabilities" whose entropy is 0 and whose log loss is large when wrong.
* ``xgb``: ``XGBClassifier(tree_method="hist", n_estimators=100)``, ``n_jobs`` = the job's
  threads, ``device="cuda"`` when a GPU is visible.
* ``mlp``: the PyTorch network of arXiv 1705.03098 as the original study used it, with its widths
  and dropout hyperparameters actually used; AdamW with a cosine learning-rate schedule over
  ``epochs``; batches of 64 (≥ 10,000 training rows: 1024), no sample dropped
  (:mod:`modelvar.models.mlp`, which also trains several runs as one batched model). CUDA when
  available, else CPU with deterministic algorithms.

Model-seed: ``seed`` sets SGD's shuffling, XGBoost's subsampling and the MLP's initialisation and
batch order (``perturbation.model_seed`` decides whether it varies per run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from modelvar.models.hparams import HParam
from modelvar.models.mlp import LARGE_BATCH_ROWS, MLP_EPOCHS
from modelvar.models.spec import ClassifierSpec

#: the specs' keyword arguments that change no fit (a figure's colour, the plan's memory): left
#: out of the fit and tune jobs' code version (modelvar.running.code_hash)
NOT_RESULTS = ("colour", "memory_mb")


def full_proba(partial: np.ndarray, present: np.ndarray, n_classes: int) -> np.ndarray:
    """Probability columns over all ``n_classes`` classes from those of the ``present`` ones
    (the others 0)."""
    out = np.zeros((len(partial), n_classes))
    out[:, present] = partial
    return out


def one_hot(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Degenerate "probabilities" of a classifier without any: 1 for the predicted class."""
    out = np.zeros((len(labels), n_classes))
    out[np.arange(len(labels)), labels] = 1.0
    return out


#: From this many classes in a run's training rows on, the SGD classifiers fit with
#: :class:`~modelvar.models.ovr_sgd.OvRSGDClassifier`. Below it scikit-learn keeps the fit (its
#: per-class sample orders, bit for bit): there a fit takes seconds either way
#: (``make bench-sgd``).
MANY_CLASSES = 20
#: xgb's boosting rounds (trees per class), the original study's
XGB_TREES = 100
#: encoded columns from which xgb's time per column grows (its own cost regime:
#: modelvar.planning.cost_model)
XGB_WIDE_COLUMNS = 1000
#: classes from which xgb's fit has cost constants of its own: it grows a tree per class per
#: round, each on every row, with few rows of its class (a 5-fold cross-validation of the
#: calibration grid: 0.348 rms log error with this regime, 0.366 without; issue 23)
XGB_MANY_CLASSES = 100
#: training rows from which xgb's many-class fits have cost constants of their own: their time
#: grows faster with the rows there (full fits at 60 columns, 355 classes: exponent 0.59 from
#: 10,000 to 20,000 rows, 1.05 from 20,000 to 40,000; docs/measurements/cost-model.md)
XGB_MANY_ROWS = 20_000


@dataclass
class SGDModel:
    hparams: dict
    seed: int
    loss: str
    device: str = "cpu"
    model: object = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)

    def fit(self, X, y, n_classes):
        from sklearn.linear_model import SGDClassifier

        self.n_classes = n_classes
        params = {k: v for k, v in self.hparams.items() if k != "loss"}
        params["penalty"] = None if params["penalty"] == "none" else params["penalty"]
        if len(np.unique(y)) >= MANY_CLASSES:
            from modelvar.models.ovr_sgd import OvRSGDClassifier

            self.model = OvRSGDClassifier(loss=self.loss, random_state=self.seed, **params)
        else:
            self.model = SGDClassifier(loss=self.loss, learning_rate="adaptive",
                                       random_state=self.seed, **params)
        self.model.fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X).astype(np.int64)

    def predict_proba(self, X):
        if self.loss == "hinge":
            return one_hot(self.predict(X), self.n_classes)
        return full_proba(self.model.predict_proba(X), self.model.classes_, self.n_classes)

    def warm_up(self, X, y, n_classes):
        """Load what this process's first fit would load inside its timed span, by fitting and
        predicting a copy of this model on 2 rows per class of the path the fit will take:
        scikit-learn's ``SGDClassifier`` below :data:`MANY_CLASSES` classes (its import), else
        numba and the compiled kernels of :mod:`modelvar.models.ovr_sgd` (the fit takes any X
        as float64, so the kernels' types are the real fit's); each costs many fits' time
        (docs/measurements/design-choices.md). Once per process, path and hyperparameters'
        kinds (:func:`_hparam_kinds`: a perturbed learning rate takes the path its base took);
        nothing of this model or of any random stream changes."""
        classes = MANY_CLASSES if len(np.unique(y)) >= MANY_CLASSES else 2
        key = (classes, self.loss, _hparam_kinds(self.hparams))
        if key in _WARMED:
            return
        import warnings

        tiny_y = np.arange(2 * classes) % classes
        tiny_X = np.column_stack([tiny_y, -tiny_y]) / classes
        copy = SGDModel(self.hparams, seed=0, loss=self.loss)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a tiny fit may end at max_iter
            copy.fit(tiny_X, tiny_y, classes)
            copy.predict_proba(tiny_X)
        _WARMED.add(key)


#: what this process has loaded by a model's warm_up: ("xgb" | "mlp", device), and the SGD
#: models' (path's classes, loss, hparams' kinds)
_WARMED: set = set()


def _hparam_kinds(hparams: dict) -> tuple:
    """What of a model's hyperparameters can choose a code path: the value of a choice (a
    string, a flag, ``None``), the type of a number (a kernel compiles per type, not per
    value), so that the runs of a hyperparameter perturbation share one warm-up."""
    def kind(value):
        if value is None or isinstance(value, (str, bool, np.bool_)):
            return repr(value)
        return type(value).__name__
    return tuple(sorted((name, kind(value)) for name, value in hparams.items()))


@dataclass
class XGBModel:
    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    trees: int = XGB_TREES  # boosting rounds (fewer only in benchmarks that time per round)
    model: object = field(init=False, default=None)
    present: np.ndarray = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)

    def fit(self, X, y, n_classes):
        from xgboost import XGBClassifier

        self.n_classes = n_classes
        self.present = np.unique(y)  # xgboost needs labels 0..m-1
        y_local = np.searchsorted(self.present, y)
        params = dict(self.hparams)
        params["reg_lambda"] = params.pop("lambda")
        params["reg_alpha"] = params.pop("alpha")
        params["learning_rate"] = params.pop("eta")
        self.model = XGBClassifier(
            tree_method="hist", n_estimators=self.trees, random_state=self.seed,
            n_jobs=self.threads, device=self.device, **params,
        )
        if len(self.present) == 1:  # a single training class: constant prediction
            self.model = None
            return self
        self.model.fit(X, y_local)
        return self

    def predict_proba(self, X):
        if self.model is None:
            out = np.zeros((len(X), self.n_classes))
            out[:, self.present[0]] = 1.0
            return out
        return full_proba(self.model.predict_proba(X), self.present, self.n_classes)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1).astype(np.int64)

    def warm_up(self, X, y, n_classes):
        """Import xgboost (many small fits' time: docs/measurements/design-choices.md) and fit a
        one-tree model of 4 rows on this model's device (a GPU's context starts there), once per
        process and device, before the fit job times the first fit."""
        if ("xgb", self.device) in _WARMED:
            return
        from xgboost import XGBClassifier

        tiny = XGBClassifier(tree_method="hist", n_estimators=1, n_jobs=self.threads,
                             device=self.device)
        tiny_X = np.arange(8.0).reshape(4, 2)
        tiny.fit(tiny_X, np.array([0, 1, 0, 1])).predict_proba(tiny_X)
        _WARMED.add(("xgb", self.device))


def torch_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class MLPModel:
    """The residual MLP (:mod:`modelvar.models.mlp`), one model; a fit job trains the runs of a
    repeat that share its widths together (:func:`modelvar.models.mlp.train`), which gives each
    the same model as this. ``threads`` does not reach torch: the MLP always trains with
    :data:`modelvar.models.mlp.CPU_THREADS` intra-op threads, so that its predictions do not
    depend on the job's thread count."""

    hparams: dict
    seed: int
    threads: int = 1
    device: str = "cpu"
    epochs: int = MLP_EPOCHS
    model: object = field(init=False, default=None)
    n_classes: int = field(init=False, default=0)
    epoch_seconds: float = field(init=False, default=0.0)

    def fit(self, X, y, n_classes):
        from modelvar.models.mlp import train

        self.n_classes = n_classes
        start = time.perf_counter()
        self.model = train([X], [y], n_classes=n_classes, hparams=[self.hparams],
                           seeds=[self.seed], epochs=self.epochs, device=self.device)
        self.epoch_seconds = (time.perf_counter() - start) / self.epochs
        return self

    def predict_proba(self, X):
        from modelvar.models.mlp import predict_proba

        return predict_proba(self.model, [X], device=self.device)[0]

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1).astype(np.int64)

    def warm_up(self, X, y, n_classes):
        """Load torch's kernels on this model's device (on a GPU: its context and libraries)
        by one epoch of a copy on X's first 8 rows, once per process and device, before the fit
        job times the first fit. The copy has its own generator: no stream of a run moves."""
        if ("mlp", self.device) in _WARMED:
            return
        from modelvar.models.mlp import predict_proba, train

        rows = slice(0, min(len(y), 8))
        tiny = train([X[rows]], [y[rows]], n_classes=n_classes, hparams=[self.hparams],
                     seeds=[0], epochs=1, device=self.device)
        predict_proba(tiny, [X[rows]], device=self.device)
        _WARMED.add(("mlp", self.device))


def nvidia_gpu_visible() -> bool:
    """Whether this process sees an NVIDIA GPU: its driver's device, not hidden by
    ``CUDA_VISIBLE_DEVICES`` (empty or -1), without importing a library that needs one."""
    import os

    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return os.path.exists("/dev/nvidiactl")


def _cuda_available() -> bool:
    """A visible NVIDIA device and a CUDA-enabled xgboost (without importing torch)."""
    if not nvidia_gpu_visible():
        return False
    import xgboost

    return bool(xgboost.build_info().get("USE_CUDA", False))


def _build_lr_sgd(hparams, *, seed, threads, device, epochs):
    return SGDModel(hparams=hparams, seed=seed, loss="log_loss")


def _build_svm_sgd(hparams, *, seed, threads, device, epochs):
    return SGDModel(hparams=hparams, seed=seed, loss=hparams["loss"])


def _build_xgb(hparams, *, seed, threads, device, epochs):
    if device is None:
        device = "cuda" if _cuda_available() else "cpu"
    return XGBModel(hparams=hparams, seed=seed, threads=threads, device=device)


def _build_mlp(hparams, *, seed, threads, device, epochs):
    return MLPModel(hparams=hparams, seed=seed, threads=threads, device=device or torch_device(),
                    epochs=int(epochs or MLP_EPOCHS))


def _hinge_has_no_probabilities(base: dict) -> bool:
    return base.get("loss") == "hinge"


# Spaces and defaults follow ../shared/reference/original-study.md: sklearn's SGD, Kadra et al.
# 2021's XGBoost space, the MLP of arXiv 1705.03098 (kinds and bounds: modelvar.models.hparams).
SGD_SPACE = (
    HParam("alpha", "log", 1e-4, 1e-7, 1e-1),
    HParam("l1_ratio", "continuous", 0.15, 0.0, 1.0),
    HParam("eta0", "log", 1e-3, 1e-6, 1.0),
    HParam("penalty", "categorical", "l2", choices=("l1", "l2", "elasticnet", "none")),
    HParam("average", "categorical", False, choices=(True, False)),
)
#: The built-in classifiers. Memory: the Python libraries a fit job imports (MB; the SGD ones
#: measure ~290 with numba loaded for a many-class fit); colours: four of
#: Okabe and Ito's colour-blind-safe palette (user classifiers get the other ones:
#: modelvar.models.registry.USER_COLOURS).
BUILT_IN = (
    ClassifierSpec("lr-sgd", _build_lr_sgd, SGD_SPACE, ("scikit-learn", "numba"), memory_mb=400,
                   colour="#0072B2", hides_pandas=True, cost_regimes=(("classes", MANY_CLASSES),)),
    ClassifierSpec(
        "svm-sgd", _build_svm_sgd,
        (*SGD_SPACE, HParam("loss", "categorical", "hinge", choices=("hinge", "modified_huber"))),
        ("scikit-learn", "numba"), memory_mb=400, colour="#56B4E9", hides_pandas=True,
        one_hot_probabilities=_hinge_has_no_probabilities,
        cost_regimes=(("classes", MANY_CLASSES),)),
    ClassifierSpec(
        "xgb", _build_xgb,
        (
            HParam("eta", "log", 0.3, 0.001, 1.0),
            HParam("lambda", "log", 1.0, 1e-10, 1.0),
            HParam("alpha", "log", 1e-10, 1e-10, 1.0),
            HParam("gamma", "log", 0.1, 0.1, 1.0),
            HParam("colsample_bylevel", "continuous", 1.0, 0.1, 1.0),
            HParam("colsample_bynode", "continuous", 1.0, 0.1, 1.0),
            HParam("colsample_bytree", "continuous", 1.0, 0.1, 1.0),
            HParam("max_depth", "ordinal", 6, 1, 20),
            HParam("max_delta_step", "ordinal", 0, 0, 10),
            HParam("min_child_weight", "log", 1.0, 0.1, 20.0),
            HParam("subsample", "continuous", 1.0, 0.01, 1.0),
        ),
        ("scikit-learn", "xgboost"), memory_mb=450, colour="#D55E00", hides_pandas=True,
        gpu_capable=True,
        cost_regimes=(("columns", XGB_WIDE_COLUMNS), ("classes", XGB_MANY_CLASSES),
                      ("rows", XGB_MANY_ROWS))),
    ClassifierSpec(
        "mlp", _build_mlp,
        (
            HParam("lr", "log", 3e-4, 1e-5, 0.5),
            HParam("weight_decay", "log", 1e-4, 1e-8, 0.5),
            HParam("dropout", "continuous", 0.1, 0.0, 0.8),
            HParam("width1", "ordinal", 512, 32, 1024),
            HParam("width2", "ordinal", 256, 32, 1024),
        ),
        ("torch",), memory_mb=900, colour="#009E73", gpu=True, gpu_capable=True,
        epochs=MLP_EPOCHS, batched=True,
        cost_regimes=(("rows", LARGE_BATCH_ROWS),)),
)
