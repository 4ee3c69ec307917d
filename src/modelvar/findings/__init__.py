"""Findings: which source of variance moves accuracy and predictions most (seed 004's question),
from the study's aggregated tables — never from the predictions, so that a study of any size is
summarised in bounded memory.

* :mod:`~modelvar.findings.sources`: each source alone against the control and the test-set
  yardstick, per dataset × classifier, and over datasets;
* :mod:`~modelvar.findings.paired`: comparisons paired over repeats — told apart, practically
  equivalent, or neither — and how numbers are printed;
* :mod:`~modelvar.findings.comparison`: classifiers compared and each dataset × classifier's
  leading source;
* :mod:`~modelvar.findings.components`: variance components of run accuracy and per-repeat
  agreement over the factorial grid, with jackknife intervals over repeats;
* :mod:`~modelvar.findings.claims`: seed 004's stated findings, checked on a run's numbers;
* :mod:`~modelvar.findings.multiplicity`: the one control over every claim the page states;
* :mod:`~modelvar.findings.study`: the findings job's tables, every verdict judged once;
* :mod:`~modelvar.findings.calibration`: simulated pages with a known truth, the verdicts'
  false-claim rates and power (``make bench-verdicts``);
* :mod:`~modelvar.findings.report`: the report's Findings page (tables and sentences generated
  from the numbers).
"""
