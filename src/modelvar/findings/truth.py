"""What a simulated page's claims are scored against (:mod:`modelvar.calibration`):
the true values behind its tables, per dataset and over the population of datasets the
simulation draws them from. Each kind of claim scores itself against it
(:attr:`modelvar.findings.kinds.ClaimKind.score`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Truth:
    """Per (dataset, classifier, cell) the expected within-repeat ``spread`` (run-to-run SD of
    accuracy) and ``disagreement``; per (dataset, classifier, response) the true variance
    component of each factor (by the tables' component names). The ``population_*`` maps are
    the same quantities as expected over the population of datasets (keys without the
    dataset): what a statement over datasets is about."""

    spread: dict[tuple, float] = field(default_factory=dict)
    disagreement: dict[tuple, float] = field(default_factory=dict)
    components: dict[tuple, dict[str, float]] = field(default_factory=dict)
    population_spread: dict[tuple, float] = field(default_factory=dict)
    population_disagreement: dict[tuple, float] = field(default_factory=dict)
    population_components: dict[tuple, dict[str, float]] = field(default_factory=dict)
    #: the equivalence margin the page judged with (a ratio within [1/margin, margin] is
    #: about equal)
    margin: float = 1.25

    def of(self, measure: str, population: bool = False) -> dict[tuple, float]:
        """The map of a measure (``accuracy_sd``: the spread; ``disagreement``)."""
        if measure == "accuracy_sd":
            return self.population_spread if population else self.spread
        if measure == "disagreement":
            return self.population_disagreement if population else self.disagreement
        raise ValueError(f"no true values of measure {measure!r}")
