"""A sequential study: repeats added in rounds, per dataset × classifier, until its claims are
decided (config ``sequential``; the statistics: :mod:`modelvar.findings.sequential`).

**Looks.** The first round runs ``split.repeats`` repeats of every dataset × classifier (a
*block*); each later round adds ``sequential.step`` repeats to the blocks still open, up to
``sequential.max_repeats``. The planned looks are those repeat counts (:class:`Schedule`);
each spends a share of the page's error rate, linearly in the repeats (the look at n of
n_max repeats has spent n / n_max of it, :meth:`Schedule.share`), so that a claim may be
decided at any look and the page's error control holds whatever look the study stops at.

**The state** of a sequential study is one file, ``RESULTS/sequential/rounds.json``
(:class:`Rounds`): the round, and per block its repeats, the looks it has had and, once it
stops, why. ``modelvar sequential next`` (between two Snakemake runs of ``scripts/run.sh``)
writes it; the plan reads it, so every load of the workflow within a round makes the same jobs.
A block's repeats are additive (:mod:`modelvar.planning.plan`: one job per repeat), so a round
fits only the new repeats, and a killed run resumes the round it was in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

#: where a sequential study's state lives, under its results folder
ROUNDS_FILE = Path("sequential") / "rounds.json"
#: why a block stopped
DECIDED, FUTILE, AT_MAX, OVER_BUDGET = ("decided", "undecidable within the budget",
                                        "maximum repeats reached", "CPU budget spent")


@dataclass(frozen=True)
class Schedule:
    """The planned looks of a sequential study (module docstring)."""

    start: int
    step: int
    max: int
    #: the spending function's power: the look at n has spent (n / max)^rho of the level
    rho: float = 1.0

    def looks(self) -> tuple[int, ...]:
        """Every planned repeat count: start, start + step, …, and ``max``."""
        out = list(range(self.start, self.max, self.step))
        return (*out, self.max) if not out or out[-1] != self.max else tuple(out)

    def spent(self, n: int) -> float:
        """The share of the error rate spent up to the look at ``n`` repeats: (n / max)^rho."""
        return min(1.0, (n / self.max) ** self.rho)

    def share(self, n: int) -> float:
        """The share spent at the look at ``n`` repeats (what it adds to the earlier looks)."""
        looks = self.looks()
        if n not in looks:
            raise ValueError(f"{n} repeats is not a planned look ({looks})")
        i = looks.index(n)
        return self.spent(n) - (self.spent(looks[i - 1]) if i else 0.0)

    def next(self, n: int) -> int | None:
        """The look after ``n`` repeats (None after the last)."""
        later = [k for k in self.looks() if k > n]
        return later[0] if later else None


def schedule_of(config: dict) -> Schedule | None:
    """The (checked) config's schedule (None: a study of fixed repeats)."""
    seq = config["sequential"]
    if not seq["enabled"]:
        return None
    return Schedule(config["split"]["repeats"], seq["step"], seq["max_repeats"])


def block_id(dataset: str, classifier: str) -> str:
    return f"{dataset}|{classifier}"


@dataclass
class Block:
    """One dataset × classifier: its repeats, its looks so far, why it stopped (None: open)."""

    repeats: int
    looks: list[int] = field(default_factory=list)
    stopped: str | None = None


@dataclass
class Rounds:
    """The state of a sequential study (module docstring)."""

    round: int
    blocks: dict[str, Block]
    #: the schedule the looks were planned with, recorded at round 1: (start, step, max)
    schedule: tuple[int, int, int] | None = None

    @classmethod
    def first(cls, schedule: Schedule, blocks) -> Rounds:
        """Round 1: every block at the first look."""
        return cls(1, {block_id(d, c): Block(schedule.start, [schedule.start])
                       for d, c in blocks}, (schedule.start, schedule.step, schedule.max))

    def repeats_of(self, dataset: str, classifier: str, default: int) -> int:
        block = self.blocks.get(block_id(dataset, classifier))
        return block.repeats if block is not None else default

    def looks_of(self, dataset: str, classifier: str) -> list[int]:
        block = self.blocks.get(block_id(dataset, classifier))
        return list(block.looks) if block is not None else []

    def to_json(self) -> str:
        body = {"round": self.round, "blocks": {
            name: {"repeats": b.repeats, "looks": b.looks, "stopped": b.stopped}
            for name, b in self.blocks.items()}}
        if self.schedule is not None:
            body["schedule"] = dict(zip(("start", "step", "max"), self.schedule, strict=True))
        return json.dumps(body, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Rounds:
        body = json.loads(text)
        recorded = body.get("schedule")
        schedule = (int(recorded["start"]), int(recorded["step"]), int(recorded["max"])) \
            if recorded else None
        return cls(int(body["round"]), {name: Block(int(b["repeats"]), [int(n) for n in
                                                                        b["looks"]], b["stopped"])
                                        for name, b in body["blocks"].items()}, schedule)


def read_rounds(results: str | Path) -> Rounds | None:
    """A results folder's state (None before the first round is recorded)."""
    path = Path(results) / ROUNDS_FILE
    if not path.is_file():
        return None
    try:
        return Rounds.from_json(path.read_text())
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a sequential study's state ({exc}): restore it, or "
                         "delete it to start again from the first round (no fit is lost: "
                         "every repeat's jobs stay valid)") from exc


def state_json(schedule: Schedule, rounds: Rounds | None, decide: str, blocks=()) -> str:
    """A sequential study's looks, its state (round 1 of ``blocks``, (dataset, classifier),
    before one is recorded) and which claims decide a block, as JSON: what the findings job
    gets."""
    rounds = rounds or Rounds.first(schedule, blocks)
    return json.dumps({"start": schedule.start, "step": schedule.step, "max": schedule.max,
                       "decide": decide, "rounds": json.loads(rounds.to_json())},
                      sort_keys=True)


def read_state(text: str) -> tuple[Schedule, Rounds, str]:
    """The inverse of :func:`state_json`."""
    body = json.loads(text)
    return (Schedule(body["start"], body["step"], body["max"]),
            Rounds.from_json(json.dumps(body["rounds"])), body["decide"])


def design_problem(config: dict) -> str | None:
    """Where the (checked) config and its results folder disagree on the study's design, said
    before any job (None where they agree):

    * a fixed config pointed at a sequential study's folder would reuse its repeats as if they
      had been planned, with no correction for the looks already taken (a claim that held at a
      look would be counted again);
    * a sequential config whose schedule (start, step, maximum) is not the one the study's
      looks were planned with: the looks taken spent the level by the recorded schedule, and
      another one would spend it again (raising the maximum after a block stopped would go
      unheeded: a stopped block stays stopped)."""
    results = Path(config["results_dir"])
    path = results / ROUNDS_FILE
    if not path.is_file():
        return None
    try:
        rounds = Rounds.from_json(path.read_text())
        what = f"round {rounds.round}, {len(rounds.blocks)} dataset × classifier blocks"
    except (ValueError, KeyError, TypeError):
        rounds, what = None, "its state cannot be read"
    if not config["sequential"]["enabled"]:
        return (f"{results} holds a sequential study ({path}: {what}), and this config runs a "
                "study of fixed repeats: its verdicts would reuse the sequential study's "
                "repeats without the correction for the looks already taken. Continue it with "
                "its sequential config (sequential.enabled: true, the same start, step and "
                "maximum), or give the fixed study another results_dir")
    seq = config["sequential"]
    asked = (config["split"]["repeats"], seq["step"], seq["max_repeats"])
    if rounds is None or rounds.schedule is None or rounds.schedule == asked:
        return None
    start, step, most = rounds.schedule
    return (f"{results} holds a sequential study whose looks were planned at round 1 with "
            f"split.repeats {start}, sequential.step {step}, sequential.max_repeats {most} "
            f"({path}); this config asks for {asked[0]}, {asked[1]}, {asked[2]}. Each look "
            "taken spent its share of the error rate by the recorded schedule: another "
            "schedule would spend it again. Keep the recorded one, or start a new sequential "
            "study in another results_dir (its repeats cannot be reused as looks already "
            "taken)")
