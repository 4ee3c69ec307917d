"""Named, recorded random streams.

Every random draw in modelvar comes from a stream named by *what it is for* and *where it is used*:
``(root seed, purpose, dataset, classifier, cell, repeat, run)``, any of which a purpose may leave
out. A name becomes a :class:`numpy.random.SeedSequence` whose ``entropy`` is the root seed and
whose ``spawn_key`` holds one 32-bit word per name part, computed with BLAKE2b of ``"part=value"``.
That is stable across processes, machines and Python versions (Python's ``hash()`` is salted per
process and is never used).

Which parts a purpose uses is a design decision that makes the study *paired*:

* ``test-split``, keyed by (dataset, repeat): all runs, classifiers and cells of a repeat share
  its test set;
* ``downsample``, keyed by (dataset, repeat, run): a (repeat, run) trains on the same rows in every
  cell and classifier (and the fractions are nested);
* ``data-perturbation``, keyed by (dataset, scheme level, repeat, run): all classifiers see the
  same perturbed training data;
* ``model``, keyed by (dataset, classifier, repeat, run) with ``model_seed: per-run``, or by
  (dataset, classifier) alone with ``model_seed: fixed``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

#: Canonical order of name parts; a stream's key lists its parts in this order.
PART_ORDER = ("purpose", "dataset", "classifier", "scheme", "cell", "repeat", "run")


def _word(name: str, value: object) -> int:
    digest = hashlib.blake2b(f"{name}={value}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True)
class StreamName:
    """The name of one random stream; ``str()`` gives the form recorded in output tables."""

    root_seed: int
    parts: tuple[tuple[str, str], ...]

    @classmethod
    def make(cls, root_seed: int, purpose: str, **parts: object) -> StreamName:
        if not isinstance(root_seed, int | np.integer) or root_seed < 0:
            raise ValueError(f"root_seed must be a non-negative integer, got {root_seed!r}")
        unknown = set(parts) - set(PART_ORDER)
        if unknown:
            raise ValueError(
                f"unknown stream name part(s) {sorted(unknown)}; allowed: {PART_ORDER[1:]}"
            )
        given = {"purpose": purpose, **{k: v for k, v in parts.items() if v is not None}}
        ordered = tuple((k, str(given[k])) for k in PART_ORDER if k in given)
        return cls(int(root_seed), ordered)

    @property
    def spawn_key(self) -> tuple[int, ...]:
        return tuple(_word(k, v) for k, v in self.parts)

    def seed_sequence(self) -> np.random.SeedSequence:
        return np.random.SeedSequence(entropy=self.root_seed, spawn_key=self.spawn_key)

    def generator(self) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(self.seed_sequence()))

    def int_seed(self) -> int:
        """A 31-bit integer seed for libraries that take one (sklearn, xgboost, torch)."""
        return int(self.seed_sequence().generate_state(1, dtype=np.uint32)[0] >> 1)

    def __str__(self) -> str:
        return f"root={self.root_seed}/" + "/".join(f"{k}={v}" for k, v in self.parts)


def stream(root_seed: int, purpose: str, **parts: object) -> StreamName:
    """Name a stream; call ``.generator()`` or ``.int_seed()`` on the result to draw from it."""
    return StreamName.make(root_seed, purpose, **parts)
