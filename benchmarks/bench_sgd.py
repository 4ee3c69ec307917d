"""Per-fit speed-up of the many-class SGD path against scikit-learn's SGDClassifier (issue 23).

    python benchmarks/bench_sgd.py [--repeats 3] [--epochs 5] [--classes 2 10 100 355 1000]

Data shaped like aloi: 128 standardised numeric columns, Gaussian classes around random centres,
10 training rows per class (at least 2,000 rows). Both sides fit the same configuration
(the built-in defaults: penalty l2, alpha 1e-4, eta0 1e-3, adaptive learning rate) for exactly
``--epochs`` epochs (``max_iter``: the stopping rule needs 6 epochs to act, so with 5 every
binary problem runs 5 in both; a full fit's epochs are equal in distribution, tests/
test_ovr_sgd.py). For each class count and loss (log loss: lr-sgd; hinge: svm-sgd) the two sides
are timed back to back, alternating which goes first, ``--repeats`` times; printed: the seconds
of each and the min and median of the per-repeat ratios.

"modelvar" is what the SGD classifiers fit (``modelvar.models.classifiers.SGDModel``):
scikit-learn itself below ``MANY_CLASSES`` classes (so the ratio there is ~1: no slower), the
one-vs-rest kernel from it on. "kernel" times the kernel also below that threshold.
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from modelvar.models.classifiers import MANY_CLASSES
from modelvar.models.ovr_sgd import OvRSGDClassifier

FEATURES = 128
SETTINGS = dict(penalty="l2", alpha=1e-4, eta0=1e-3, average=False)


def data(n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = max(2000, 10 * n_classes)
    centres = rng.normal(size=(n_classes, FEATURES))
    y = np.arange(n) % n_classes
    X = centres[y] + 2.0 * rng.normal(size=(n, FEATURES))
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def timed(make, X, y) -> float:
    start = time.perf_counter()
    make().fit(X, y)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 10, 100, 355, 1000])
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    OvRSGDClassifier(max_iter=1).fit(*data(3))  # compile (or load) the kernels first
    print(f"{FEATURES} features, 10 rows per class (>= 2,000), {args.epochs} epochs per binary "
          f"problem, {args.repeats} repeats; MANY_CLASSES = {MANY_CLASSES}")
    print(f"{'classes':>7} {'rows':>6} {'loss':>8} {'sklearn s':>10} {'modelvar s':>10} "
          f"{'path':>8} {'ratio min':>9} {'median':>7}")
    for n_classes in args.classes:
        X, y = data(n_classes)
        for loss in ("log_loss", "hinge"):
            common = dict(loss=loss, max_iter=args.epochs, random_state=1, **SETTINGS)

            def sklearn(common=common):
                return SGDClassifier(learning_rate="adaptive", **common)

            kernel_applies = n_classes >= 3
            path = "kernel" if n_classes >= MANY_CLASSES else "sklearn"  # what modelvar fits

            def ours(common=common, path=path):
                return OvRSGDClassifier(**common) if path == "kernel" else sklearn()

            base, mine, kern = [], [], []
            for r in range(args.repeats):
                pair = [(base, sklearn), (mine, ours)]
                for out, make in (pair if r % 2 == 0 else pair[::-1]):
                    out.append(timed(make, X, y))
                if path == "sklearn" and kernel_applies:
                    kern.append(timed(lambda common=common: OvRSGDClassifier(**common), X, y))
            ratios = [b / m for b, m in zip(base, mine, strict=True)]
            print(f"{n_classes:>7} {len(y):>6} {loss:>8} {statistics.median(base):>10.3f} "
                  f"{statistics.median(mine):>10.3f} {path:>8} {min(ratios):>9.2f} "
                  f"{statistics.median(ratios):>7.2f}")
            if kern:
                ratios = [b / k for b, k in zip(base, kern, strict=True)]
                print(f"{'':>7} {'':>6} {'':>8} {'':>10} {statistics.median(kern):>10.3f} "
                      f"{'kernel':>8} {min(ratios):>9.2f} {statistics.median(ratios):>7.2f}")


if __name__ == "__main__":
    main()
