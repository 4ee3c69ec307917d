"""The report's "Data" page: what each dataset of the study is, from its prepared metadata.

One row per dataset: source (and file checksum or OpenML id), rows, numeric and categorical
features, classes with their sizes, missing cells, and the classes kept although too small for
the split (``split.rare_classes: keep``), which are in every training pool and never tested.
"""

from __future__ import annotations

import html

import pandas as pd

RARE = "rare classes kept (never tested)"


def _source(meta: dict) -> str:
    prov = meta.get("provenance", {})
    source = prov.get("source", "?")
    if source == "openml" and prov.get("openml"):
        oml = prov["openml"]
        return f"OpenML {oml.get('data_id')} v{oml.get('version')} ({oml.get('name')})"
    if source == "file":
        return f"file {prov.get('path')} (sha256 {str(prov.get('file_sha256'))[:12]}…)"
    return source


def overview_table(metas: list[dict]) -> pd.DataFrame:
    rows = []
    for meta in metas:
        types = [f["type"] for f in meta["features"]]
        rare = meta.get("provenance", {}).get("rare_classes", {}).get("kept", {})
        rows.append({
            "dataset": meta["name"],
            "source": _source(meta),
            "rows": meta["n_samples"],
            "numeric features": types.count("numeric"),
            "categorical features": types.count("categorical"),
            "classes (samples)": ", ".join(f"{c} ({n})" for c, n in meta["class_counts"].items()),
            "missing cells": meta["n_missing_cells"],
            RARE: ", ".join(f"{c} ({n})" for c, n in rare.items()) or "none",
        })
    return pd.DataFrame(rows)


def overview_html(metas: list[dict]) -> str:
    table = overview_table(metas)
    notes = "".join(
        f"<p><b>{html.escape(row['dataset'])}</b>: class(es) {html.escape(row[RARE])} have "
        "fewer samples than the split needs; they stay in every training pool and no test set "
        "contains them (split.rare_classes: keep).</p>"
        for _, row in table[table[RARE] != "none"].iterrows())
    return ("<h3>Datasets of the study</h3>" + notes
            + table.to_html(index=False, escape=True, border=0))
