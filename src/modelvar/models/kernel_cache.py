"""The compiled numba kernels of the many-class SGD classifiers: compiled once, at set-up, into
numba's cache, so that no fit job pays the compile (issue 55: ≈ 10–17 s CPU per process
without the cache).

numba caches a kernel beside its source (``src/modelvar/models/__pycache__``, the repository's
own tree in the editable install that scripts/setup-venv.sh makes), or in ``NUMBA_CACHE_DIR``
where that is set. A cached kernel is keyed by its source file and the CPU it was compiled for:
a cluster whose nodes share the repository (or a shared ``NUMBA_CACHE_DIR``) and their CPU
model compiles it once; a node of another CPU model compiles it on its first fit, into the same
cache. ``python -m modelvar.models.kernel_cache`` compiles every kernel the classifiers call (a
small fit of each loss, the probabilities too); each fit job's log says what its kernels did
(:func:`kernel_summary`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

KERNELS_MODULE = "modelvar.models.ovr_sgd_kernels"


@dataclass(frozen=True)
class KernelUse:
    """How a process got its kernels: ``loaded`` from numba's cache, ``compiled`` here, and
    where the cache is."""

    loaded: int
    compiled: int
    cache: str

    def line(self) -> str:
        if self.compiled:
            return (f"numba kernels: {self.compiled} compiled in this job (no cached kernel for "
                    f"this source and CPU in {self.cache}), {self.loaded} loaded from the cache; "
                    "bash scripts/setup-venv.sh compiles them once")
        return f"numba kernels: {self.loaded} loaded from the cache in {self.cache}, 0 compiled"


def kernel_use() -> KernelUse | None:
    """What this process's kernels did so far; ``None`` when no kernel was imported (a fit of
    two classes, or no SGD classifier)."""
    kernels = sys.modules.get(KERNELS_MODULE)
    if kernels is None:
        return None
    loaded = compiled = 0
    cache = ""
    for value in vars(kernels).values():
        stats = getattr(value, "stats", None)
        if stats is None or not hasattr(stats, "cache_hits"):
            continue
        loaded += sum(stats.cache_hits.values())
        compiled += sum(stats.cache_misses.values())
        cache = cache or stats.cache_path
    return KernelUse(loaded, compiled, cache)


def kernel_summary() -> str | None:
    """The fit job's log line about its kernels (:class:`KernelUse`), or ``None``."""
    use = kernel_use()
    return None if use is None or not (use.loaded or use.compiled) else use.line()


def compile_kernels() -> KernelUse:
    """Compile (or load) every kernel the many-class SGD classifiers call: a small fit of each
    loss on three classes, with predictions and probabilities (the kernels take float64 arrays
    and scalars of fixed types, so these are the signatures every fit uses)."""
    import warnings

    import numpy as np

    from modelvar.models.ovr_sgd import LOSSES, OvRSGDClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 4)), rng.integers(0, 3, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two epochs do not converge: only the kernels matter
        for loss in LOSSES:
            model = OvRSGDClassifier(loss=loss, max_iter=2).fit(X, y)
            model.predict(X)
            if loss == "log_loss":
                model.predict_proba(X)
    use = kernel_use()
    assert use is not None
    return use


def main() -> int:
    start = time.process_time()
    use = compile_kernels()
    print(f"modelvar: {use.line()} ({time.process_time() - start:.1f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
