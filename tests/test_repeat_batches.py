"""Batches of repeats (issue 67, item 1): sized to pay for a process's start-up, decided once and
kept, so that a catalogue of edits to the study's repeats and estimates fits only new repeats."""

import json

import pytest
from tests.test_plan import study

from conftest import completed
from modelvar.planning import repeat_batches
from modelvar.planning.plan import STARTUP_SECONDS, PlanError, plan_study
from modelvar.planning.repeat_batches import (
    STARTUP_MULTIPLE,
    BatchRecordError,
    batch_size,
    batches_of,
    most_repeats,
)


@pytest.mark.parametrize("per_repeat, target, want", [
    (1.0, 3600.0, 56),    # cheap: enough repeats for 20 start-ups of 2.8 s
    (7.0, 3600.0, 8),     # ⌈56 / 7⌉
    (30.0, 3600.0, 2),
    (56.0, 3600.0, 1),    # a repeat alone pays for its start-up
    (500.0, 3600.0, 1),
    (1.0, 10.0, 10),      # never beyond the target
    (20.0, 10.0, 1),      # at least one (such a group is split by runs, not batched)
])
def test_a_batch_holds_enough_repeats_for_its_startup_within_the_target(per_repeat, target,
                                                                         want):
    size = batch_size(per_repeat, target, STARTUP_SECONDS)
    assert size == want
    if size > 1:
        assert size * per_repeat <= target
        assert (size - 1) * per_repeat < STARTUP_MULTIPLE * STARTUP_SECONDS or \
            size * per_repeat > target - per_repeat
    assert size <= most_repeats(per_repeat, target)
    with pytest.raises(ValueError, match="positive"):
        batch_size(0.0, target, STARTUP_SECONDS)


@pytest.mark.parametrize("repeats, size, most, want", [
    (5, 4, 100, [(0, 5)]),                  # not 4 and a tail of 1
    (5, 2, 100, [(0, 3), (3, 5)]),          # not 2, 2 and 1
    (10, 3, 100, [(0, 4), (4, 7), (7, 10)]),
    (6, 3, 100, [(0, 3), (3, 6)]),
    (2, 5, 100, [(0, 2)]),                  # fewer repeats than a batch's size: one batch
    (5, 2, 2, [(0, 2), (2, 4), (4, 5)]),    # never beyond the most (the target)
    (7, 2, 3, [(0, 3), (3, 5), (5, 7)]),
    (3, 1, 3, [(0, 1), (1, 2), (2, 3)]),    # a repeat that pays for its start-up: a job each
])
def test_repeats_are_cut_into_equal_batches_with_no_short_tail(repeats, size, most, want):
    assert batches_of(repeats, size, None, most=most) == want


@pytest.mark.parametrize("repeats", range(1, 31))
def test_every_batch_pays_for_its_startup_and_fits_its_target(repeats):
    """Over a grid of sizes and limits: every repeat once and in order, no batch beyond the
    most, every batch of at least ``size`` repeats wherever the study has that many and the
    most allows (the old fixed-size cut left a tail of 1 repeat after 4: its start-up share 4×
    the batch's), and batches of equal lengths."""
    for size in range(1, 13):
        for most in range(size, 16):
            got = batches_of(repeats, size, None, most=most)
            assert [r for a, b in got for r in range(a, b)] == list(range(repeats))
            lengths = [b - a for a, b in got]
            assert max(lengths) <= most
            # shorter than `size` only where the most forces that many batches (4 repeats of
            # size 3, most 3: 2 and 2, not 3 and 1)
            assert min(lengths) >= min(size, repeats) or len(got) == -(-repeats // most)
            assert max(lengths) - min(lengths) <= 1
            # as many batches (jobs that run side by side) as keep each at least `size`
            assert len(got) == max(1, repeats // size, -(-repeats // most))


def test_a_batch_size_beyond_its_most_is_an_error():
    with pytest.raises(ValueError, match="within 1 and its most"):
        batches_of(5, 4, None, most=3)


# A catalogue of edits to a recorded study: (repeats before, size before, repeats after, size
# after, the batches after). What was recorded before is kept; only new repeats form batches.
EDITS = {
    "one more repeat": (5, 5, 6, 5, [(0, 5), (5, 6)]),
    "five more repeats": (5, 5, 10, 5, [(0, 5), (5, 10)]),
    "two more, then the estimate halves": (5, 5, 7, 10, [(0, 5), (5, 7)]),
    "the estimate doubles, no new repeat": (5, 5, 5, 2, [(0, 5)]),
    "the estimate doubles, repeats added": (5, 5, 9, 2, [(0, 5), (5, 7), (7, 9)]),
    "fewer repeats, within the batch": (5, 5, 3, 5, [(0, 3)]),
    "fewer repeats, to a batch's end": (10, 5, 5, 5, [(0, 5)]),
    "no change": (4, 2, 4, 2, [(0, 2), (2, 4)]),
}


#: the catalogue's most repeats per batch (its targets are far beyond its batches)
MOST = 100


@pytest.mark.parametrize("edit", EDITS)
def test_an_edit_keeps_the_recorded_batches_and_batches_only_new_repeats(edit):
    before, size_before, after, size_after, want = EDITS[edit]
    recorded = batches_of(before, size_before, None, most=MOST)
    assert recorded[0][0] == 0 and recorded[-1][1] == before
    got = batches_of(after, size_after, recorded, most=MOST)
    assert got == want
    # consecutive, from repeat 0, every repeat once
    assert [r for a, b in got for r in range(a, b)] == list(range(after))
    # every recorded batch wholly within the study is kept as it was
    kept = [b for b in recorded if b[1] <= after]
    assert got[:len(kept)] == kept


def test_a_record_is_extended_never_cut_and_keeps_groups_the_config_dropped(tmp_path):
    a, b = repeat_batches.key("d", "c", "g"), repeat_batches.key("e", "c", "g")
    assert repeat_batches.record(tmp_path, {a: [(0, 3)], b: [(0, 1), (1, 2)]})
    path = tmp_path / repeat_batches.RECORD
    stamp = path.stat().st_mtime_ns
    assert not repeat_batches.record(tmp_path, {a: [(0, 3)]})  # nothing new: not rewritten
    assert path.stat().st_mtime_ns == stamp
    assert repeat_batches.record(tmp_path, {a: [(0, 3), (3, 4)]})
    assert repeat_batches.read(tmp_path) == {a: [(0, 3), (3, 4)], b: [(0, 1), (1, 2)]}
    # fewer repeats (a batch cut) leave the record: the old batches come back with the repeats
    assert not repeat_batches.record(tmp_path, {a: [(0, 2)], b: [(0, 1)]})
    assert repeat_batches.read(tmp_path)[a] == [(0, 3), (3, 4)]
    assert batches_of(4, 1, repeat_batches.read(tmp_path)[a], most=MOST) == [(0, 3),
                                                                          (3, 4)]


@pytest.mark.parametrize("text, problem", [
    ("{", "cannot be read"),
    ("[1, 2]", "not a record of repeat batches"),
    ('{"d/c/g": [[0, 2], [3, 4]]}', "not consecutive"),
    ('{"d/c/g": [[1, 2]]}', "not consecutive"),
    ('{"d/c/g": [[0, 0]]}', "not consecutive"),
    ('{"d/c/g": [[0, 2.5]]}', "not consecutive"),
    ('{"d/c/g": []}', "not consecutive"),
])
def test_a_damaged_record_stops_the_plan_naming_the_file_and_the_fix(tmp_path, text, problem):
    path = tmp_path / repeat_batches.RECORD
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(BatchRecordError, match=problem):
        repeat_batches.read(tmp_path)
    config = completed(study(classifiers=["lr-sgd"], results_dir=str(tmp_path)))
    with pytest.raises(PlanError, match=f"{path}.*{problem}.*delete it to plan the batches"):
        plan_study(config, {}, probes=False)


def test_the_plan_reads_the_record_it_would_write(tmp_path):
    """A plan made after the record is the plan that wrote it (every load of one run makes the
    same jobs), and a recorded odd batching is followed as recorded."""
    config = study(classifiers=["lr-sgd", "xgb"], results_dir=str(tmp_path))
    config["split"]["repeats"] = 4
    config = completed(config)
    first = plan_study(config, {}, probes=False)
    repeat_batches.record(tmp_path, first.batches())
    again = plan_study(config, {}, probes=False)
    def ids(plan):
        return {(ds, clf): [j.id for j in cp.fit_jobs]
                for ds, dp in plan.datasets.items() for clf, cp in dp.classifiers.items()}

    assert ids(again) == ids(first)
    # a record that splits lr-sgd's repeats one by one is followed
    record = json.loads((tmp_path / repeat_batches.RECORD).read_text())
    name = next(k for k in record if k.startswith("small/lr-sgd/"))
    assert record[name] == [[0, 4]]
    record[name] = [[r, r + 1] for r in range(4)]
    (tmp_path / repeat_batches.RECORD).write_text(json.dumps(record))
    split = plan_study(config, {}, probes=False).datasets["small"].classifiers["lr-sgd"]
    assert [j.repeats for j in split.fit_jobs] == [(0,), (1,), (2,), (3,)]
    assert [j.id.rsplit(".", 1)[1] for j in split.fit_jobs] == ["r0", "r1", "r2", "r3"]
