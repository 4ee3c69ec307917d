"""A sequential study: repeats added in rounds, per dataset × classifier, until its claims are
decided (config ``sequential``; the statistics: :mod:`modelvar.findings.sequential`).

**Looks.** The first round runs ``split.repeats`` repeats of every dataset × classifier (a
*block*); each later round adds ``sequential.step`` repeats to the blocks still open, up to
``sequential.max_repeats``. The planned looks are those repeat counts (:class:`Schedule`);
how much of the error rate each look spends follows from them and the spending function
(:mod:`modelvar.study.looks`), so that a claim may be decided at any look and the page's error
control holds whatever look the study stops at. The schedule is recorded at round 1 and cannot
move after data (:func:`design_problem`); which claims must be decided and the futility rule
(:class:`Futility`) may change between rounds: they only say when to stop looking, and the
error control does not depend on them.

**The state** of a sequential study is one file, ``RESULTS/sequential/rounds.json``
(:class:`Rounds`): the schedule, the claims that decide a block and the futility rule, the
round, and per block its repeats, the looks it has had and, once it stops, why and at which
round. The findings job reads the same record (:meth:`Rounds.for_findings`: the state as the
round began, so the stops a round's own findings made do not rerun them).
``modelvar sequential next`` (between two Snakemake runs of ``scripts/run.sh``) writes it; the
plan reads it, so every load of the workflow within a round makes the same jobs.
A block's repeats are additive (:mod:`modelvar.planning.repeat_batches`: batches of repeats are
recorded and kept), so a round fits only the new repeats, and a killed run resumes the round it
was in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from modelvar.study.looks import SPENDING, SPENDINGS

#: where a sequential study's state lives, under its results folder
ROUNDS_FILE = Path("sequential") / "rounds.json"
#: what a state written before spending was recorded spent: the level linearly, by the union
#: bound (issue 56); such a study is finished by the modelvar that began it
LINEAR_SPENDING = "linear (union bound)"
#: the claims that keep a block open (config ``sequential.decide``)
DECIDE = ("all", "leaders")


@dataclass(frozen=True)
class Schedule:
    """The planned looks of a sequential study (module docstring)."""

    start: int
    step: int
    max: int
    spending: str = SPENDING

    def looks(self) -> tuple[int, ...]:
        """Every planned repeat count: start, start + step, …, and ``max``."""
        out = list(range(self.start, self.max, self.step))
        return (*out, self.max) if not out or out[-1] != self.max else tuple(out)

    def next(self, n: int) -> int | None:
        """The look after ``n`` repeats (None after the last)."""
        later = [k for k in self.looks() if k > n]
        return later[0] if later else None

    def as_dict(self) -> dict:
        return {"start": self.start, "step": self.step, "max": self.max,
                "spending": self.spending}

    def words(self) -> str:
        return (f"split.repeats {self.start}, sequential.step {self.step}, "
                f"sequential.max_repeats {self.max}, {self.spending} spending")


@dataclass(frozen=True)
class Futility:
    """When an open claim stops keeping its block open (:mod:`modelvar.study.stopping`): its
    conditional power — the chance of a verdict by the last look — under the effect of
    interest is below ``below``. ``effect``: ``"margin"`` (a claim's equivalence margin, and
    for a claim without one the effect the schedule finds with 80 % power) or a standardised
    effect (mean per-repeat difference over its SD)."""

    effect: str | float = "margin"
    below: float = 0.1

    def as_dict(self) -> dict:
        return {"effect": self.effect, "below": self.below}

    @classmethod
    def of(cls, body: dict) -> Futility:
        effect = body.get("effect", "margin")
        return cls(effect if effect == "margin" else float(effect), float(body["below"]))


def schedule_of(config: dict) -> Schedule | None:
    """The (checked) config's schedule (None: a study of fixed repeats)."""
    seq = config["sequential"]
    if not seq["enabled"]:
        return None
    return Schedule(config["split"]["repeats"], seq["step"], seq["max_repeats"])


def futility_of(config: dict) -> Futility:
    """The (checked) config's futility rule."""
    seq = config["sequential"]
    return Futility(seq["effect_of_interest"], seq["futility_below"])


def block_id(dataset: str, classifier: str) -> str:
    return f"{dataset}|{classifier}"


@dataclass
class Block:
    """One dataset × classifier: its repeats, its looks so far, why it stopped (None: open)
    and at which round."""

    repeats: int
    looks: list[int] = field(default_factory=list)
    stopped: str | None = None
    stopped_round: int | None = None


@dataclass
class Rounds:
    """The state of a sequential study (module docstring)."""

    round: int
    blocks: dict[str, Block]
    #: the schedule the looks were planned with, recorded at round 1 (None: a state written
    #: before schedules were recorded)
    schedule: Schedule | None
    decide: str = "all"
    futility: Futility = field(default_factory=Futility)

    @classmethod
    def first(cls, schedule: Schedule, blocks, decide: str = "all",
              futility: Futility | None = None) -> Rounds:
        """Round 1: every block at the first look."""
        return cls(1, {block_id(d, c): Block(schedule.start, [schedule.start])
                       for d, c in blocks}, schedule, decide, futility or Futility())

    def repeats_of(self, dataset: str, classifier: str, default: int) -> int:
        block = self.blocks.get(block_id(dataset, classifier))
        return block.repeats if block is not None else default

    def looks_of(self, dataset: str, classifier: str) -> list[int]:
        block = self.blocks.get(block_id(dataset, classifier))
        return list(block.looks) if block is not None else []

    def with_rule(self, decide: str, futility: Futility) -> Rounds:
        """The state under the config's stopping rule (which claims decide a block, the
        futility rule: they may change between rounds, module docstring)."""
        return replace(self, decide=decide, futility=futility)

    def for_findings(self) -> Rounds:
        """The state as this round began (module docstring): the stops made after this
        round's findings left out, so that recording them does not rerun the findings."""
        blocks = {name: replace(b, stopped=None, stopped_round=None)
                  if b.stopped_round is not None and b.stopped_round >= self.round
                  else replace(b, looks=list(b.looks)) for name, b in self.blocks.items()}
        return replace(self, blocks=blocks)

    def to_json(self, compact: bool = False) -> str:
        body = {"round": self.round,
                "schedule": self.schedule.as_dict() if self.schedule else None,
                "decide": self.decide, "futility": self.futility.as_dict(),
                "blocks": {name: {"repeats": b.repeats, "looks": b.looks,
                                  "stopped": b.stopped, "stopped_round": b.stopped_round}
                           for name, b in self.blocks.items()}}
        if compact:
            return json.dumps(body, sort_keys=True, separators=(",", ":"))
        return json.dumps(body, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Rounds:
        body = json.loads(text)
        s = body.get("schedule")
        schedule = Schedule(int(s["start"]), int(s["step"]), int(s["max"]),
                            str(s.get("spending", LINEAR_SPENDING))) if s else None
        blocks = {name: Block(int(b["repeats"]), [int(n) for n in b["looks"]], b["stopped"],
                              b.get("stopped_round"))
                  for name, b in body["blocks"].items()}
        return cls(int(body["round"]), blocks, schedule, str(body.get("decide", "all")),
                   Futility.of(body.get("futility", {"below": Futility().below})))


def findings_state(config: dict, rounds: Rounds | None, blocks) -> str:
    """What a sequential study's findings job gets (the workflow's, decided once at load):
    the recorded state (round 1 of ``blocks``, (dataset, classifier), before one is
    recorded) under the config's stopping rule, as the round began
    (:meth:`Rounds.for_findings`), as compact JSON; "" for a study of fixed repeats."""
    schedule = schedule_of(config)
    if schedule is None:
        return ""
    rounds = rounds or Rounds.first(schedule, blocks)
    return rounds.with_rule(config["sequential"]["decide"],
                            futility_of(config)).for_findings().to_json(compact=True)


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


def design_problem(config: dict) -> str | None:
    """Where the (checked) config and its results folder disagree on the study's design, said
    before any job (None where they agree); each message says what would be valid:

    * a fixed config pointed at a sequential study's folder would reuse its repeats as if they
      had been planned, with no correction for the looks already taken (a claim that held at a
      look would be counted again);
    * a sequential config whose schedule (start, step, maximum) is not the one the study's
      looks were planned with, or a recorded spending function this modelvar does not have
      (issue 56's union bound): the looks taken spent the level by the recorded schedule, and
      another one would spend it again (a raised maximum would also reopen blocks that
      stopped at the old one). A recorded spending function that this modelvar has goes on
      being used, whatever a new study would use."""
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
                "its sequential config (sequential.enabled: true and the schedule it records), "
                "or give the fixed study another results_dir")
    if rounds is None:
        return None
    asked = schedule_of(config)
    recorded = rounds.schedule
    if recorded is not None and recorded.spending in SPENDINGS and (
            recorded.start, recorded.step, recorded.max) == (asked.start, asked.step, asked.max):
        return None  # its looks go on spending by the recorded function
    recorded = rounds.schedule.words() if rounds.schedule else \
        f"a schedule this modelvar did not record, {LINEAR_SPENDING} spending"
    return (f"{results} holds a sequential study whose looks were planned at round 1 with "
            f"{recorded} ({path}); this config asks for {asked.words()}. Each look taken "
            "spent its share of the error rate by the recorded schedule: another schedule "
            "would spend it again, and a raised maximum would reopen blocks that stopped at "
            "the old one. Keep the recorded schedule, or start a new sequential study in "
            "another results_dir (its repeats cannot be reused as looks already taken)")
