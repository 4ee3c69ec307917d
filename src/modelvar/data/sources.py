"""Dataset sources: OpenML, the embedded datasets, scikit-learn's bundled ones, a user's own file.

A *source spec* is the mapping a config gives for one dataset, e.g.::

    {"source": "openml", "data_id": 2, "version": 1, "md5": "4eaed8b6..."}
    {"source": "embedded", "name": "anneal"}
    {"source": "sklearn", "name": "breast_cancer"}
    {"source": "file", "path": "data/mine.csv", "target": "label", "categorical": ["colour"]}

:func:`load` turns any spec into a canonical :class:`~modelvar.data.canonical.Dataset`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd

from modelvar.data.canonical import Dataset, DatasetError, build
from modelvar.data.errors import did_you_mean
from modelvar.data.readers import read_arff, read_file, read_table
from modelvar.table_files import file_kind, sha256_file

#: the package data this module reads, part of the code version of every job that imports it
#: (modelvar.running.code_hash): the embedded registry, which holds each embedded file's sha256
#: (checked at every load), so a changed file changes the registry too
PACKAGE_DATA = ("embedded/registry.json",)
#: scikit-learn's bundled classification datasets (shipped inside its wheel; no download).
SKLEARN_DATASETS = ("iris", "wine", "breast_cancer", "digits")


def embedded_dir() -> Path:
    return Path(str(resources.files("modelvar.data") / "embedded"))


@cache
def embedded_registry() -> dict[str, dict]:
    raw = json.loads((embedded_dir() / "registry.json").read_text())
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def load_embedded(name: str) -> Dataset:
    registry = embedded_registry()
    if name not in registry:
        raise DatasetError(
            f"no embedded dataset named {name!r}; {did_you_mean(name, list(registry))}"
            f"available: {sorted(registry)}"
        )
    entry = registry[name]
    path = embedded_dir() / entry["file"]
    actual = sha256_file(path)
    if actual != entry["sha256"]:
        raise DatasetError(
            f"embedded dataset {name!r}: {path} has sha256 {actual}, expected {entry['sha256']}"
        )
    prov = {
        "source": "embedded",
        "openml": entry.get("openml"),
        "provenance": entry["provenance"],
        "licence": entry["licence"],
    }
    if entry["format"] == "arff":
        return read_arff(path, name, entry["target"], prov)
    return read_table(path, name, entry["target"], entry["categorical"], prov)


def load_sklearn(name: str) -> Dataset:
    if name not in SKLEARN_DATASETS:
        raise DatasetError(
            f"no scikit-learn bundled dataset named {name!r}; available: {list(SKLEARN_DATASETS)}"
        )
    import sklearn
    from sklearn import datasets as skd

    bunch = getattr(skd, f"load_{name}")(as_frame=True)
    frame = bunch.frame.copy()
    target = "target"
    names = getattr(bunch, "target_names", None)
    if names is not None:
        frame[target] = pd.Series(list(names))[frame[target].to_numpy()].to_numpy()
    prov = {
        "source": "sklearn",
        "loader": f"sklearn.datasets.load_{name}",
        "sklearn_version": sklearn.__version__,
    }
    return build(name, frame, target, [], provenance=prov)


def load(name: str, spec: dict, *, openml_cache: str | Path = "resources/openml",
         openml_server: str | None = None, openml_timeout: float | None = None) -> Dataset:
    """Load the dataset a config ``spec`` describes, naming it ``name``.

    ``openml_cache``/``openml_server``/``openml_timeout`` apply to ``source: openml`` entries
    (:mod:`modelvar.data.openml_source`).
    """
    source = spec.get("source")
    if source == "openml":
        from modelvar.data import openml_source

        ds = openml_source.load(name, spec, openml_cache,
                                server=openml_server or openml_source.DEFAULT_SERVER,
                                timeout=openml_timeout or openml_source.DEFAULT_TIMEOUT)
    elif source == "embedded":
        ds = load_embedded(spec.get("name", name))
    elif source == "sklearn":
        ds = load_sklearn(spec.get("name", name))
    elif source == "file":
        path = Path(spec["path"])
        if not path.is_file():
            raise DatasetError(f"{name}: file {path} does not exist" if not path.exists()
                               else f"{name}: {path} is {file_kind(path)}, not a data file")
        ds = read_file(
            path,
            name,
            spec["target"],
            spec.get("categorical"),
            {"source": "file", "path": str(path)},
            spec=spec,
        )
    else:
        raise DatasetError(f"{name}: unknown dataset source {source!r}")
    ds.name = name
    return ds


def list_available() -> pd.DataFrame:
    """A table of the datasets available offline (embedded and sklearn)."""
    rows = [
        {"source": "embedded", "name": k, "openml_data_id": v.get("openml", {}).get("data_id")}
        for k, v in embedded_registry().items()
    ]
    rows += [{"source": "sklearn", "name": n, "openml_data_id": None} for n in SKLEARN_DATASETS]
    return pd.DataFrame(rows)


__all__ = ["SKLEARN_DATASETS", "build", "list_available", "load", "load_embedded", "load_sklearn"]
