"""Simulation studies of the metrics themselves (no classifier is fitted).

* :mod:`~modelvar.simulation.class_distributions`: class distributions of seed 000, Appendix A;
* :mod:`~modelvar.simulation.metric_study`: simulated repeated predictions and the seed-000
  criteria each pairwise reproducibility metric is scored on;
* :mod:`~modelvar.simulation.dirichlet`: Dirichlet class probabilities, entropy vs confusion
  index (seed 002).
"""

#: the figures each job of the simulation branch draws (the rules declare them from here)
FIGURES = {"evaluate_simulation": ("metric_vs_accuracy", "metric_by_distribution"),
           "dirichlet_simulation": ("class_densities", "h_ci_densities", "ci_vs_h")}

# Loaded on first use: the workflow's command-line parser needs only DISTRIBUTIONS, and a job
# that imports this package must not pay for scipy.stats and pandas.
_EXPORTS = {
    **dict.fromkeys(("DISTRIBUTIONS", "GENERATORS", "class_distribution", "multi_modal",
                     "step_like", "uniform_random", "variably_exponential"),
                    "modelvar.simulation.class_distributions"),
    **dict.fromkeys(("CRITERIA", "best_per_criterion", "evaluate", "run_simulations",
                     "simulate_runs", "simulation_grid"), "modelvar.simulation.metric_study"),
}
__all__ = sorted([*_EXPORTS, "FIGURES"])


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'modelvar.simulation' has no attribute {name!r}")
