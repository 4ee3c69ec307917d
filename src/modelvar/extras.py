"""Which of modelvar's extras (``pip install 'modelvar[EXTRA]'``) brings a missing module.

The light install (``pip install modelvar``) holds the metrics; a subcommand that needs more
(``plan`` needs the workflow's ``pipeline`` extra, ``fit`` of xgb needs ``xgb``, …) must say
which extra to install instead of ending in a bare ``ModuleNotFoundError``. The answer comes
from the package's own metadata (pyproject's ``optional-dependencies``), so it cannot drift.
"""

from __future__ import annotations

import importlib.metadata
import re

#: distributions whose import name differs from their name
IMPORT_NAMES = {"pyyaml": "yaml", "scikit-learn": "sklearn", "liac-arff": "arff",
                "snakemake-executor-plugin-slurm": "snakemake_executor_plugin_slurm"}


def _requirements() -> dict[str, list[str]]:
    """extra → the requirement names it lists (``modelvar[a,b]`` kept as a reference)."""
    out: dict[str, list[str]] = {}
    for req in importlib.metadata.requires("modelvar") or []:
        found = re.search(r"""extra\s*==\s*["']([^"']+)["']""", req)
        if found:
            name = re.match(r"[A-Za-z0-9._-]+(\[[^\]]*\])?", req.strip()).group(0)
            out.setdefault(found.group(1), []).append(name)
    return out


def _modules(extra: str, table: dict[str, list[str]], seen: frozenset = frozenset()
             ) -> set[str]:
    """The top-level modules an extra installs, following ``modelvar[…]`` references."""
    modules: set[str] = set()
    for name in table.get(extra, []):
        inner = re.fullmatch(r"modelvar\[([^\]]*)\]", name)
        if inner:
            for sub in inner.group(1).split(","):
                if sub.strip() not in seen:
                    modules |= _modules(sub.strip(), table, seen | {extra})
        else:
            key = name.lower()
            modules.add(IMPORT_NAMES.get(key, key.replace("-", "_")))
    return modules


def extra_for_module(module: str) -> str | None:
    """The smallest extra (fewest modules) that installs top-level ``module``, or ``None``
    (not a dependency of any extra, or metadata unavailable)."""
    top = module.split(".")[0]
    try:
        table = _requirements()
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [(len(_modules(extra, table)), extra) for extra in table
             if extra not in ("dev", "all") and top in _modules(extra, table)]
    return min(found)[1] if found else None


def missing_module_message(command: str, exc: ModuleNotFoundError) -> str:
    """One line for a subcommand that stopped on a missing module: the extra to install."""
    extra = extra_for_module(exc.name or "")
    return (f"modelvar {command}: error: it needs the '{extra}' extra ({exc}): "
            f"pip install 'modelvar[{extra}]'")
