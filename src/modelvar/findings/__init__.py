"""Findings: which source of variance moves accuracy and predictions most (seed 004's question),
from the study's aggregated tables — never from the predictions, so that a study of any size is
summarised in bounded memory.

* :mod:`~modelvar.findings.sources`: each source alone against the control and the test-set
  yardstick, per dataset × classifier, and over datasets;
* :mod:`~modelvar.findings.paired`: comparisons paired over repeats — told apart, practically
  equivalent, or neither — and how numbers are printed;
* :mod:`~modelvar.findings.comparison`: classifiers compared and each dataset × classifier's
  leading source;
* :mod:`~modelvar.findings.over_datasets`: the same questions over datasets (a t-test of the
  datasets' differences, from 6 datasets);
* :mod:`~modelvar.findings.components`: variance components of run accuracy and per-repeat
  agreement over the factorial grid, with jackknife intervals over repeats;
* :mod:`~modelvar.findings.claims`: seed 004's stated findings, checked on a run's numbers;
* :mod:`~modelvar.findings.kinds`: the kinds of claim the page states, each declared once (its
  test, hypotheses, verdict, tier, sentence and calibration);
* :mod:`~modelvar.findings.multiplicity`: the page's two promises: headline claims under Holm's
  family-wise control, exploratory ones under Benjamini–Yekutieli's false-discovery-rate control;
* :mod:`~modelvar.findings.judging`: every claim judged once, each tier decided, the verdicts
  written back;
* :mod:`~modelvar.findings.study`: the findings job's tables;
* :mod:`~modelvar.calibration.pages`: simulated pages with a known truth
  (:mod:`~modelvar.findings.truth`), the verdicts' false-claim rates and power
  (``make bench-verdicts``);
* :mod:`~modelvar.findings.report`: the report's Findings page (tables and sentences generated
  from the numbers).
"""
