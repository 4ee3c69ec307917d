"""How the study times its fits: wall seconds and CPU seconds of the process.

A fit's cost is its **CPU time** (``time.process_time``: the process's user + system time over
all its threads, so an estimator that runs OpenMP or BLAS threads is charged for each), which a
busy machine barely changes; its wall time grows with every other process that shares the
cores. The plan's cost model, its calibration from a finished run, the probe fits of a user's
classifier and the run summary's check of the plan all use CPU time; wall time is recorded
beside it (a GPU's work shows in wall time only).

The clocks are module attributes read at each call, so that a test can replace them
(``monkeypatch.setattr(timing, "cpu", fake)``) and check what a timed span holds without
measuring anything.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

#: wall-clock seconds (monotonic)
wall = time.perf_counter
#: CPU seconds of this process, all threads
cpu = time.process_time


@dataclass(frozen=True)
class Span:
    """Seconds of something timed: ``wall`` and ``cpu``."""

    wall: float
    cpu: float

    def per(self, n: int) -> Span:
        """The share of one of ``n`` that were timed together."""
        return Span(self.wall / n, self.cpu / n)


class Stopwatch:
    """Times its ``with`` block: ``.span`` (a :class:`Span`) once the block is left."""

    span: Span

    def __enter__(self) -> Stopwatch:
        self._start = (wall(), cpu())
        return self

    def __exit__(self, *exc) -> None:
        self.span = Span(wall() - self._start[0], cpu() - self._start[1])
