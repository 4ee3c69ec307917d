"""Random-search tuning per (dataset, classifier), scored by stratified cross-validation.

A dedicated tuning split (stream ``(tuning-split, dataset)``, the same test fraction as the
repeats) sets aside its own test rows, which tuning never uses; the search runs on its training
pool only. Trial 0 is the defaults; trials 1..T−1 are drawn from the classifier's space
(:meth:`modelvar.models.hparams.HParam.sample`, log-uniform for log-scale parameters) from the
stream ``(tuning-sample, dataset, classifier)``. Each trial is scored by the mean accuracy over
stratified K folds (fold assignment from ``(tuning-cv, dataset)``, shared by all trials and
classifiers); preprocessing is fit on each fold's training part only. The best trial (highest
mean accuracy; ties → the earlier trial, so the defaults win ties) is written out together with
the whole trial table.

Note: the repeats' test sets are drawn independently of the tuning split, so rows used for tuning
appear in repeats' test sets (as in the seed's protocol: tuned hparams are then used for every
repeat). Tuning never scores on a repeat's test set.
"""

from __future__ import annotations

import json
import logging
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from modelvar.data.canonical import Dataset
from modelvar.data.preprocess import fit_transform
from modelvar.data.splits import split_test_set
from modelvar.models.registry import make_classifier, spec
from modelvar.seeding import stream

log = logging.getLogger("modelvar.tune")


def tune(
    ds: Dataset,
    classifier: str,
    *,
    n_trials: int,
    folds: int,
    test_fraction: float,
    root_seed: int,
    threads: int = 1,
    epochs: int | None = None,
) -> tuple[pd.DataFrame, dict]:
    """The trials table and the best trial (module docstring); ``epochs``: how long a classifier
    that trains for epochs trains in each trial, as its fits will (``classifier_settings.NAME.
    epochs``; ``None``: its default)."""
    if n_trials < 1 or folds < 2:
        raise ValueError(f"need n_trials >= 1 and folds >= 2, got {n_trials}, {folds}")
    y = ds.class_index()
    pool, held_out = split_test_set(y, test_fraction, root_seed=root_seed, dataset=ds.name,
                                    repeat=None, purpose="tuning-split", labels=ds.classes)
    cv_seed = stream(root_seed, "tuning-cv", dataset=ds.name).int_seed()
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=cv_seed)
    fold_rows = [(pool[a], pool[b]) for a, b in splitter.split(pool, y[pool])]
    rng = stream(root_seed, "tuning-sample", dataset=ds.name, classifier=classifier).generator()
    hp_space = spec(classifier).space
    model_seed = stream(root_seed, "model", dataset=ds.name, classifier=classifier).int_seed()
    rows = []
    for trial in range(n_trials):
        hp = spec(classifier).defaults() if trial == 0 else \
            {h.name: h.sample(rng) for h in hp_space}
        start = time.perf_counter()
        scores = []
        for train_rows, val_rows in fold_rows:
            Xtr, Xval, _ = fit_transform(ds, ds.X.iloc[train_rows], ds.X.iloc[val_rows])
            model = make_classifier(classifier, hp, seed=model_seed, threads=threads,
                                    epochs=epochs)
            model.fit(Xtr, y[train_rows], len(ds.classes))
            scores.append(float(np.mean(model.predict(Xval) == y[val_rows])))
        rows.append({
            "trial": trial, "hparams": json.dumps(hp, sort_keys=True),
            "cv_accuracy": float(np.mean(scores)), "cv_sd": float(np.std(scores, ddof=1)),
            "seconds": time.perf_counter() - start,
        })
        log.info("trial %d/%d: cv accuracy %.4f", trial + 1, n_trials, rows[-1]["cv_accuracy"])
    trials = pd.DataFrame(rows)
    best_row = trials.loc[trials["cv_accuracy"].idxmax()]  # idxmax: first of ties
    best = {
        "dataset": ds.name, "classifier": classifier,
        "hparams": json.loads(best_row["hparams"]), "trial": int(best_row["trial"]),
        "cv_accuracy": float(best_row["cv_accuracy"]), "n_trials": n_trials, "folds": folds,
        "tuning_pool_size": len(pool), "held_out_rows": len(held_out),
    }
    return trials, best
