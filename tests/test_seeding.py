import subprocess
import sys

import numpy as np
import pytest

from modelvar.seeding import StreamName, stream


def test_same_name_same_draws_and_order_of_keywords_irrelevant():
    a = stream(1, "downsample", dataset="anneal", repeat=3, run=2).generator().random(5)
    b = stream(1, "downsample", run=2, repeat=3, dataset="anneal").generator().random(5)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "other",
    [
        dict(root_seed=2, purpose="downsample", dataset="anneal", repeat=3, run=2),
        dict(root_seed=1, purpose="model", dataset="anneal", repeat=3, run=2),
        dict(root_seed=1, purpose="downsample", dataset="vehicle", repeat=3, run=2),
        dict(root_seed=1, purpose="downsample", dataset="anneal", repeat=2, run=3),
    ],
)
def test_any_different_part_gives_a_different_stream(other):
    base = stream(1, "downsample", dataset="anneal", repeat=3, run=2)
    root = other.pop("root_seed")
    purpose = other.pop("purpose")
    assert stream(root, purpose, **other).int_seed() != base.int_seed()


def test_stable_across_processes_and_pinned():
    """No salted hash(): a fresh interpreter (with another PYTHONHASHSEED) agrees, and the
    value is pinned so a change of the derivation is noticed."""
    code = ("from modelvar.seeding import stream;"
            "print(stream(20231121, 'model', dataset='anneal', classifier='lr-sgd',"
            " repeat=0, run=1).int_seed())")
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONHASHSEED": seed}, check=True).stdout.strip()
        for seed in ("1", "2")
    }
    here = stream(20231121, "model", dataset="anneal", classifier="lr-sgd", repeat=0,
                  run=1).int_seed()
    assert outs == {str(here)}
    # Recorded when the scheme was written: changing the derivation changes every result.
    assert here == 836978890


def test_recorded_name_and_bad_input():
    name = stream(5, "test-split", dataset="car", repeat=1)
    assert str(name) == "root=5/purpose=test-split/dataset=car/repeat=1"
    assert len(name.spawn_key) == 3
    with pytest.raises(ValueError, match="unknown stream name part"):
        StreamName.make(5, "x", colour="red")
    with pytest.raises(ValueError, match="non-negative"):
        stream(-1, "x")
