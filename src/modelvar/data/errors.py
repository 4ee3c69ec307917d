"""The data stage's error and the check of a prepared dataset's file (importable without
pandas: every job reports them)."""

import difflib
from collections.abc import Sequence
from pathlib import Path

#: at most this many names are listed when a name is not found
LISTED_NAMES = 20


class DatasetError(ValueError):
    """A dataset cannot be read or is not a valid classification dataset."""


def check_prepared_file(parquet_path: str | Path, meta: dict) -> None:
    """Raise :class:`DatasetError` unless the prepared table exists with the sha256 that its
    metadata recorded (``meta["parquet_sha256"]``)."""
    from modelvar.table_files import sha256_file

    if not Path(parquet_path).is_file():
        raise DatasetError(f"{parquet_path}: no such file; re-run the prepare step")
    actual = sha256_file(parquet_path)
    if actual != meta["parquet_sha256"]:
        raise DatasetError(f"{parquet_path}: sha256 {actual} differs from the metadata's "
                           f"{meta['parquet_sha256']}; re-run the prepare step")


def near_matches(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    """The names of ``known`` that ``name`` was probably meant to be: those equal to it up to
    case first, then close spellings (difflib's ratio ≥ 0.75, case-insensitive)."""
    known = [str(k) for k in known]
    same_case = [k for k in known if k.lower() == name.lower()]
    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.75)
    return list(dict.fromkeys(same_case + [lowered[c] for c in close]))[:n]


def not_found_message(what: str, name: str, known: Sequence[str]) -> str:
    """``"<what> 'Clas' not found; did you mean 'class'? (of 280 names: a, b, …)"``: the near
    matches first (:func:`near_matches`), then the known names, at most :data:`LISTED_NAMES`."""
    known = [str(k) for k in known]
    listed = ", ".join(repr(k) for k in known[:LISTED_NAMES])
    if len(known) > LISTED_NAMES:
        listed += f", … ({len(known)} in all)"
    return f"{what} {name!r} not found; {did_you_mean(name, known)}known: {listed or 'none'}"


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``"did you mean 'class'? "`` for the near matches of ``name`` (:func:`near_matches`),
    or an empty string."""
    near = near_matches(name, known)
    return f"did you mean {' or '.join(repr(m) for m in near)}? " if near else ""
