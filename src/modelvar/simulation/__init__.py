"""Simulation studies of the metrics themselves (no classifier is fitted).

* :mod:`~modelvar.simulation.class_distributions`: class distributions of seed 000, Appendix A;
* :mod:`~modelvar.simulation.metric_study`: simulated repeated predictions and the seed-000
  criteria each pairwise reproducibility metric is scored on;
* :mod:`~modelvar.simulation.dirichlet`: Dirichlet class probabilities, entropy vs confusion
  index (seed 002).
"""

from modelvar.simulation.class_distributions import (
    DISTRIBUTIONS,
    GENERATORS,
    class_distribution,
    multi_modal,
    step_like,
    uniform_random,
    variably_exponential,
)
from modelvar.simulation.metric_study import (
    CRITERIA,
    best_per_criterion,
    evaluate,
    run_simulations,
    simulate_runs,
    simulation_grid,
)

__all__ = [
    "CRITERIA",
    "DISTRIBUTIONS",
    "GENERATORS",
    "best_per_criterion",
    "class_distribution",
    "evaluate",
    "multi_modal",
    "run_simulations",
    "simulate_runs",
    "simulation_grid",
    "step_like",
    "uniform_random",
    "variably_exponential",
]
