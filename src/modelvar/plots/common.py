"""What every figure shares: fixed classifier colours, saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

#: What figures call the metrics that are not pairwise (those are named in their registry,
#: :mod:`modelvar.metrics.registry`), and the simulation's per-repeat means.
OTHER_METRIC_NAMES = {
    "accuracy": "accuracy",
    "mean_pa": "percent agreement",
    "mean_ec_global": "global EC",
    "mean_accuracy": "mean accuracy",
    "mean_kappa": "Cohen's κ",
}


def metric_name(metric: str) -> str:
    """What figures call a metric (never its id, unless it has no name)."""
    from modelvar.metrics import registry

    if metric in registry.names():
        return registry.metric(metric).label
    return OTHER_METRIC_NAMES.get(metric, metric)


def classifier_colours(classifiers) -> dict[str, str]:
    """Each classifier's colour, the same in every figure of a study: the built-ins' fixed ones,
    then a user's classifiers' in the order of their names
    (:func:`modelvar.models.registry.colour`)."""
    from modelvar.models.registry import colour

    classifiers = sorted(set(classifiers))  # the same set: the same colours, in any order
    return {c: colour(c, classifiers) for c in classifiers}


def save_figure(fig, out_paths: list[Path]) -> None:
    """Save ``fig`` to every path (PNG at 150 dpi; PDFs without a creation date, so they are
    byte-stable), then close it."""
    for path in out_paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight",
                    metadata={"CreationDate": None} if path.suffix == ".pdf" else {})
    plt.close(fig)
