"""Groups for metrics by group (seed 003): a *grouping* is one categorical column of a dataset,
a list of them (their intersection: one group per combination of values), or
:data:`CLASS_GROUPING`, the true class of each test sample.
"""

from __future__ import annotations

#: the grouping by each test sample's true class (config ``grouped.by.DATASET: ["@class"]``)
CLASS_GROUPING = "@class"


def grouping_columns(grouping: str | list[str] | tuple[str, ...]) -> list[str]:
    """The columns a grouping names: itself, or those of an intersection."""
    return [grouping] if isinstance(grouping, str) else list(grouping)
