"""What every figure shares: fixed classifier colours, saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

#: Fixed colours so a classifier looks the same in every figure.
CLASSIFIER_COLOURS = {"lr-sgd": "#1b9e77", "svm-sgd": "#d95f02", "xgb": "#7570b3", "mlp": "#e7298a"}


def save_figure(fig, out_paths: list[Path]) -> None:
    """Save ``fig`` to every path (PNG at 150 dpi; PDFs without a creation date, so they are
    byte-stable), then close it."""
    for path in out_paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight",
                    metadata={"CreationDate": None} if path.suffix == ".pdf" else {})
    plt.close(fig)
