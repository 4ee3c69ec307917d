"""Class labels: their order, and when two labels are the same class.

**Order** (:func:`sort_labels`): labels that are all numbers (or text that reads as numbers) sort
by value; other text sorts *naturally*, comparing runs of digits as numbers ('c2' before 'c10',
'1' before '10'), so a dataset's classes never come out as '1', '10', '14', '2'.

**Equality by value** (:func:`harmonise`, used for a user's own predictions): ``y_true`` and
``y_pred`` may come from different sources (a CSV reads everything as text; a parquet column may
be int in one file and text in another). Two labels are the same class when they are equal, or
when both read as the same number ('2', 2, '2.0', 2.0). Rules, each violation an error naming the
labels:

* no missing label (NaN, None), no empty or whitespace-only label, and no label with leading or
  trailing spaces (' cat' and 'cat' would silently be two classes);
* text such as 'NA', 'None' or 'null' is a label like any other (written that way on purpose);
* in one column, labels that read as numbers beside labels that do not ('1' and 'c1') are
  refused as mixed: a CSV reads both as text, and '1' would silently never equal 'c1';
* numbers (or number-like text) are compared by value only when *every* label of both columns
  reads as a number; then two different spellings of one number in the same column ('2' and
  '2.0' both in y_true) are refused as ambiguous;
* one column of numbers and the other of text that does not read as numbers: refused (labels
  of different types, whether the file stores the numbers as numbers or as text); booleans
  count as the text 'True'/'False'.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

_DIGITS = re.compile(r"(\d+)")


class LabelError(ValueError):
    """Labels are missing, blank, padded, ambiguous or of incompatible types."""


def _as_number(value) -> float | None:
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def natural_key(label) -> tuple:
    """Sort key: digit runs compare as numbers, the rest as text."""
    parts = _DIGITS.split(str(label))
    return tuple((0, int(p), p) if p.isdigit() else (1, p.casefold(), p) for p in parts)


def sort_labels(labels: Iterable) -> list:
    """Distinct labels in order: by value if all are numbers, else naturally (see module)."""
    distinct = list(dict.fromkeys(labels))
    numbers = [_as_number(v) for v in distinct]
    if distinct and all(n is not None for n in numbers):
        return [v for _, v in sorted(zip(numbers, distinct, strict=True),
                                     key=lambda t: (t[0], str(t[1])))]
    return sorted(distinct, key=natural_key)


def _canonical_number(number: float):
    return int(number) if float(number).is_integer() else number


def _check_present(values: pd.Series, name: str) -> None:
    missing = values.isna()
    if missing.any():
        rows = list(values.index[missing][:5])
        raise LabelError(f"{name} has {int(missing.sum())} missing label(s) (rows {rows})")
    text = values[values.map(lambda v: isinstance(v, str))].astype(object)
    stripped = text.map(str.strip)
    blank = text[stripped == ""]
    if len(blank):
        raise LabelError(f"{name} has {len(blank)} empty or blank label(s) (rows "
                         f"{list(blank.index[:5])}); give every sample a label")
    padded = text[text != stripped]
    if len(padded):
        raise LabelError(f"{name} has label(s) with leading or trailing spaces, e.g. "
                         f"{padded.iloc[0]!r} (row {padded.index[0]}): they would be classes "
                         "of their own; remove the spaces")


def _kind(values: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(values):
        return "text"
    if pd.api.types.is_numeric_dtype(values):
        return "number"
    kinds = {"number" if isinstance(v, int | float | np.integer | np.floating)
             and not isinstance(v, bool | np.bool_) else "text" for v in values}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def harmonise(y_true: pd.Series, y_pred: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Both label columns in one comparable form (see the module's rules), or a LabelError."""
    for values, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        _check_present(values, name)
    columns = {}
    for values, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        kind = _kind(values)
        if kind == "mixed":
            sample = sorted({type(v).__name__ for v in values})
            raise LabelError(f"{name} mixes labels of types {sample}; use one type")
        values = values.astype(str) if pd.api.types.is_bool_dtype(values) else values
        columns[name] = (kind, values.astype(object))
    numbers = {name: vals.map(_as_number) for name, (_, vals) in columns.items()}
    for name, (_, vals) in columns.items():
        is_number = numbers[name].notna()
        if is_number.any() and not is_number.all():
            numeric = sorted(set(vals[is_number].astype(str)))[:3]
            text = sorted(set(vals[~is_number].astype(str)))[:3]
            raise LabelError(
                f"{name} mixes labels that read as numbers ({', '.join(map(repr, numeric))}) "
                f"with text labels ({', '.join(map(repr, text))}); write each class one way")
    numeric = {name: bool(n.notna().all()) for name, n in numbers.items()}
    if all(numeric.values()):
        for name, (kind, vals) in columns.items():
            if kind == "text":  # two spellings of one number in one column are ambiguous
                spelled = pd.DataFrame({"label": vals, "value": numbers[name]}).drop_duplicates()
                clash = spelled[spelled.duplicated("value", keep=False)]
                if len(clash):
                    raise LabelError(
                        f"{name} writes one number in several ways "
                        f"({sorted(clash['label'].astype(str))[:4]}): write each class one way")
        return tuple(numbers[name].map(_canonical_number).astype(object)
                     for name in ("y_true", "y_pred"))
    if any(numeric.values()):  # one column of numbers, the other of text (none reads as one)
        text_col = next(n for n, is_numeric in numeric.items() if not is_numeric)
        other = "y_pred" if text_col == "y_true" else "y_true"
        examples = sorted(set(columns[text_col][1].astype(str)))[:3]
        raise LabelError(
            f"{other} holds numbers but {text_col} holds text labels such as {examples}: labels "
            "of different types; write both columns with the same labels")
    # text only, and no label reads as a number: compared exactly
    return columns["y_true"][1], columns["y_pred"][1]
