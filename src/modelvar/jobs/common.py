"""What every job shares: its manifest, the checked reads of the workflow's files, and the
arguments several jobs take (each job module declares its own command and arguments:
``COMMAND`` and ``add_arguments``, from which :mod:`modelvar.cli` builds its parser)."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


#: the help texts of the arguments declared here change no result (modelvar.running.code_hash)
NOT_RESULTS = ("help", "metavar")


def job_manifest(args: argparse.Namespace, command: str, **job):
    """The job's manifest (``--manifest``): its rule is the one the workflow keys the manifest
    by (``…/manifests/RULE/…``, :func:`modelvar.planning.outputs.manifest_path`), so that a
    job never names its rule itself; outside the workflow, the ``command`` it runs."""
    from modelvar.table_files import Manifest, rule_of_manifest

    path = getattr(args, "manifest", None)
    return Manifest(path, rule=rule_of_manifest(path) or command, job=job)


def read_json(path) -> dict:
    from modelvar import table_files

    return table_files.read_json(path)


def read_tables(paths) -> pd.DataFrame:
    import pandas as pd

    from modelvar.table_files import read_parquet

    return pd.concat([read_parquet(p) for p in paths], ignore_index=True)


# ---------------------------------------------------------------- arguments several jobs take
def add_manifest(p: argparse.ArgumentParser) -> None:
    """``--manifest``: the workflow passes it to every job that writes (modelvar.table_files)."""
    p.add_argument("--manifest", metavar="PATH",
                   help="record every file written (path, size, sha256, rows) in this JSON "
                   "manifest, for `modelvar verify`")


def figure_width(value: str) -> str | float:
    """``single``, ``double`` or a number of inches."""
    if value in ("single", "double"):
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r}: single, double or a width in inches") from None


def add_drawing(p: argparse.ArgumentParser) -> None:
    """The jobs that draw figures draw them at the config's ``figures.width``, in the
    classifiers' colours."""
    p.add_argument("--width", required=True, type=figure_width, metavar="WIDTH",
                   help="single or double (a journal's column width: 3.5 or 7.2 in), or "
                   "inches: the width the figures are drawn and printed at")
    p.add_argument("--colours", default="{}", metavar="JSON",
                   help="each classifier's colour, as JSON (the workflow's, from the "
                   "classifier registry); others get the palette's free colours")


def add_ec_local(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ec-local-undefined", choices=("nan", "zero", "one"), default="nan",
                   help="value of local EC for a pair of runs of which neither errs")


def classifier_name(value: str) -> str:
    """A classifier's name as the registry spells names (a declared one's too)."""
    from modelvar.names import CLASSIFIER_NAME

    if not re.fullmatch(CLASSIFIER_NAME, value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a classifier's name "
                                         f"({CLASSIFIER_NAME})")
    return value


def add_fit_inputs(p: argparse.ArgumentParser) -> None:
    """What the fit and tune jobs read: the prepared dataset and the classifier."""
    p.add_argument("--data", required=True, help="canonical dataset (parquet)")
    p.add_argument("--meta", required=True, help="its JSON metadata")
    p.add_argument("--classifier", required=True, type=classifier_name,
                   help="the classifier: a built-in or one the config declares (its "
                   "declaration comes in --settings)")
