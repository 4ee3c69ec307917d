"""The Findings' verdicts calibrated: simulated studies with a known truth, judged by the
page's own code (:mod:`modelvar.findings`), every claim scored against it.

* :mod:`~modelvar.calibration.pages`: pages of fixed repeats — scenarios, the truth behind
  them, scores and rates per tier and kind of claim (``make bench-verdicts``);
* :mod:`~modelvar.calibration.sequential`: sequential studies, and a claim-level model of them
  (``make bench-sequential``).
"""
