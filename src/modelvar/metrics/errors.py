"""The metrics stage's error, in a module of its own: every stage that reads predictions raises
it, and importing it must not import the metrics (a fit job's code version, the import closure
of modelvar.running.code_hash, then holds no metric it does not compute)."""


class MetricInputError(ValueError):
    """Inputs to a metric are malformed (shape, labels, values)."""
