"""What every figure shares: fixed classifier colours, saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

#: What figures call the metrics (never their ids).
METRIC_NAMES = {
    "accuracy": "accuracy",
    "ec_local": "local EC (Jaccard of error sets)",
    "ec_global": "global EC (rate both wrong)",
    "ec_agree": "EC, agreement of error indicators",
    "ec_corr": "EC, correlation of errors",
    "ec_kappa": "EC, κ of errors",
    "ec_local_accnorm_sqrt": "local EC, accuracy-normalised (√)",
    "ec_local_accnorm_cbrt": "local EC, accuracy-normalised (∛)",
    "ec_global_accnorm_sqrt": "global EC, accuracy-normalised (√)",
    "ec_global_accnorm_cbrt": "global EC, accuracy-normalised (∛)",
    "pa": "percent agreement",
    "churn": "disagreement (1 − agreement)",
    "kappa": "Cohen's κ",
    "cramer_v": "Cramér's V",
    "kripp_alpha": "Krippendorff's α",
    "gwet_ac1": "Gwet's AC1",
    "mean_pa": "percent agreement",
    "mean_ec_global": "global EC",
    "mean_accuracy": "mean accuracy",
    "mean_kappa": "Cohen's κ",
}

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
