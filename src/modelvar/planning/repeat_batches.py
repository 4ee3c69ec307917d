"""Repeat batches: which repeats of a group of chunks one fit job holds, decided once per results
folder (issue 67).

**Why batches.** A fit job pays a Python process's start-up (its classifier library's imports:
``make bench-startup``, docs/measurements/job-cost.md) before its first fit; one job per repeat
multiplied it by the repeats. So a fit job of cheap chunks holds a *batch* of consecutive
repeats, as many as make its estimated fitting at least :data:`STARTUP_MULTIPLE` times the
plan's start-up constant (``STARTUP_SECONDS``), and never more than fit in
``jobs.target_minutes``:

    size = min(⌈STARTUP_MULTIPLE · STARTUP_SECONDS / s⌉, ⌊target / s⌋), at least 1,
    most = ⌊target / s⌋, at least 1,

with ``s`` the group's estimated seconds per repeat (:mod:`modelvar.planning.plan`). The ``n``
repeats to batch are cut into ``max(1, ⌊n / size⌋, ⌈n / most⌉)`` consecutive batches of equal
sizes (the first ones one repeat longer where they do not divide evenly): each holds at least
``size`` repeats where ``n`` has that many and at most ``most``, so no batch is a short tail
whose start-up is a large share of it (5 repeats of size 4 are one batch of 5, not 4 and 1).

**Decided once.** The first load of a run that executes jobs records every group's batches in
``RESULTS/.modelvar/repeat-batches.json`` (:func:`record`); every later plan keeps the recorded
batches and puts only the repeats beyond them into new batches (:func:`batches_of`). So adding
repeats fits only the new ones, whatever the estimates say by then, and every load of one run
(SLURM job steps, a dry run after it) makes the same jobs. Fewer repeats cut the batch holding
the last one kept (that batch is fitted again) and leave the record as it was, so that the old
count's batches (set aside by the run, not deleted) come back whole when it returns. A plan
made before anything is recorded (a dry run, ``modelvar plan``) makes the batches that the run
will record. A group whose one repeat exceeds the target is split by cells and runs instead,
one repeat per job, and has no record.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from modelvar.table_files import STATE_DIR, write_text

#: where a results folder's batches are recorded
RECORD = Path(STATE_DIR) / "repeat-batches.json"
#: a batch's estimated fitting is at least this many start-ups (start-up ≤ 1/20 of the job)
STARTUP_MULTIPLE = 20


class BatchRecordError(ValueError):
    """A results folder's batch record cannot be read."""


def batch_size(per_repeat: float, target: float, startup: float) -> int:
    """The fewest repeats of a new batch of a group estimated at ``per_repeat`` seconds per
    repeat (module docstring): enough for ``STARTUP_MULTIPLE`` start-ups of ``startup`` seconds,
    at most :func:`most_repeats`, at least one."""
    most = most_repeats(per_repeat, target)  # a repeat's estimate checked there
    return max(1, min(math.ceil(STARTUP_MULTIPLE * startup / per_repeat), most))


def most_repeats(per_repeat: float, target: float) -> int:
    """The most repeats of a batch: what fits in ``target`` seconds, at least one."""
    if per_repeat <= 0:
        raise ValueError(f"a repeat's estimate must be positive, got {per_repeat}")
    return max(1, math.floor(target / per_repeat))


def batches_of(repeats: int, size: int, recorded: list[tuple[int, int]] | None, *,
               most: int) -> list[tuple[int, int]]:
    """The [start, stop) repeat batches of a group with ``repeats`` repeats: the ``recorded``
    ones within them (one reaching beyond them cut), then the repeats from where those end in
    equal batches of at least ``size`` (where there are that many) and at most ``most`` repeats
    (module docstring)."""
    if not 1 <= size <= most:
        raise ValueError(f"a batch's size must be within 1 and its most ({most}), got {size}")
    kept = [(start, min(stop, repeats)) for start, stop in (recorded or []) if start < repeats]
    covered = kept[-1][1] if kept else 0
    left = repeats - covered
    if left <= 0:
        return kept
    count = max(1, left // size, math.ceil(left / most))
    length, longer = divmod(left, count)
    out, start = [], covered
    for i in range(count):
        stop = start + length + (i < longer)
        out.append((start, stop))
        start = stop
    return kept + out


def key(dataset: str, classifier: str, group: str) -> str:
    """A group's key in the record."""
    return f"{dataset}/{classifier}/{group}"


def read(results: str | Path) -> dict[str, list[tuple[int, int]]]:
    """A results folder's recorded batches by :func:`key` ({} where none are recorded)."""
    path = Path(results) / RECORD
    if not path.is_file():
        return {}
    fix = ("restore it, or delete it to plan the batches afresh (the fit jobs whose repeats "
           "then group otherwise are fitted again)")
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BatchRecordError(f"{path} cannot be read ({exc}): {fix}") from None
    if not isinstance(raw, dict):
        raise BatchRecordError(f"{path} is not a record of repeat batches: {fix}")
    out = {}
    for name, batches in raw.items():
        if not _contiguous(batches):
            raise BatchRecordError(f"{path}: the batches of {name}, {batches!r}, are not "
                                   f"consecutive [start, stop) pairs from repeat 0: {fix}")
        out[name] = [(int(a), int(b)) for a, b in batches]
    return out


def _contiguous(batches) -> bool:
    if not isinstance(batches, list) or not batches:
        return False
    at = 0
    for pair in batches:
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
                or pair[0] != at or pair[1] <= pair[0]):
            return False
        at = pair[1]
    return True


def record(results: str | Path, batches: dict[str, list[tuple[int, int]]]) -> bool:
    """Record a plan's ``batches`` (by :func:`key`) in the results folder where they reach
    beyond those recorded for the same group (which they then extend); a group whose plan has
    fewer repeats keeps its record (its batches come back whole with its repeats: their jobs
    are restored, not refitted), and so does a group the config dropped. Whether the file
    changed."""
    path = Path(results) / RECORD
    before = read(results)
    after = dict(before)
    for name, planned in batches.items():
        if name not in before or planned[-1][1] > before[name][-1][1]:
            after[name] = list(planned)
    if after == before:
        return False
    text = json.dumps({name: [list(b) for b in after[name]] for name in sorted(after)},
                      indent=1) + "\n"
    write_text(text, path)
    return True
