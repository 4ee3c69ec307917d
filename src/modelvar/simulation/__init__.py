"""Simulation studies of the metrics themselves (no classifier is fitted).

* :mod:`~modelvar.simulation.class_distributions`: class distributions of seed 000, Appendix A;
* :mod:`~modelvar.simulation.metric_study`: simulated repeated predictions and the seed-000
  criteria each pairwise reproducibility metric is scored on;
* :mod:`~modelvar.simulation.dirichlet`: Dirichlet class probabilities, entropy vs confusion
  index (seed 002).
"""

# Loaded on first use: the workflow's command-line parser needs only DISTRIBUTIONS, and a job
# that imports this package must not pay for scipy.stats and pandas (≈ 0.7 s of CPU).
_EXPORTS = {
    **dict.fromkeys(("DISTRIBUTIONS", "GENERATORS", "class_distribution", "multi_modal",
                     "step_like", "uniform_random", "variably_exponential"),
                    "modelvar.simulation.class_distributions"),
    **dict.fromkeys(("CRITERIA", "best_per_criterion", "evaluate", "run_simulations",
                     "simulate_runs", "simulation_grid"), "modelvar.simulation.metric_study"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'modelvar.simulation' has no attribute {name!r}")
