"""Realised strength of every data and categorical level of the shipped configs, per embedded
dataset (issue 15): what a nominal level does to each dataset's training values.

    python benchmarks/bench_strength.py [--runs 5]

For each level in config/config.yaml, config/preliminary.yaml and config/full-study.yaml, and
the scale-calibrated {sd: 0.1} and {rsd: 0.1} levels for comparison, the training pool of repeat
0 of each embedded dataset is perturbed as a fit job does (named streams of root seed 1, runs 0
to RUNS - 1); printed: mean |Δx| of the changed numeric cells in training SDs and the share of
numeric cells changed (data levels), the share of categorical cells changed and how many went
missing → level (categorical levels). "–" where the family cannot act (collapsed in the plan).
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from modelvar.data import load
from modelvar.data.arrays import DataArrays
from modelvar.data.splits import split_test_set
from modelvar.pipeline.fitting import perturb_training_rows
from modelvar.study import families
from modelvar.study.cells import Cell, level_label

REPO = Path(__file__).resolve().parents[1]
DATASETS = ("anneal", "vehicle", "credit-g", "car", "blood-transfusion-service-center")
CONFIGS = ("config/config.yaml", "config/preliminary.yaml", "config/full-study.yaml")


def shipped_levels() -> tuple[list, list]:
    data, cat = {}, {}
    for path in CONFIGS:
        p = yaml.safe_load((REPO / path).read_text()).get("perturbation", {})
        for entry in p.get("data", []):
            scheme = families.family("data").from_config(entry)
            if scheme:
                data.setdefault(scheme, set()).add(Path(path).stem)
        for entry in p.get("categorical", []):
            scheme = families.family("categorical").from_config(entry)
            if scheme:
                cat.setdefault(scheme, set()).add(Path(path).stem)
    for extra in (("sd", 0.1), ("rsd", 0.1)):
        data.setdefault(extra, {"(for comparison)"})
    return sorted(data.items()), sorted(cat.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data_levels, cat_levels = shipped_levels()
    rows = []
    for name in DATASETS:
        arrays = DataArrays.from_dataset(load(name, {"source": "embedded"}))
        pool, _ = split_test_set(arrays.y, 0.25, root_seed=1, dataset=name, repeat=0,
                                 labels=arrays.classes)
        for family, levels in (("data", data_levels), ("categorical", cat_levels)):
            for scheme, configs in levels:
                cell = Cell(**{family: scheme})
                label = level_label(family, cell.levels()[family])
                can_act = arrays.encoded.numeric.shape[1] if family == "data" else \
                    arrays.encoded.codes.shape[1]
                row = {"dataset": name, "level": label, "in": ", ".join(sorted(configs))}
                if not can_act:
                    rows.append({**row, "shift (SD)": "–", "changed": "–",
                                 "missing→level": "–"})
                    continue
                shift, changed, to_level = [], [], []
                for run in range(args.runs):
                    _, info, _ = perturb_training_rows(arrays, arrays.encoded, pool, cell,
                                                       root_seed=1, repeat=0, run=run)
                    part = info[family]
                    changed.append(part["changed_frac"])
                    if family == "data":
                        shift.append(part["mean_abs_shift_sd"])
                    else:
                        to_level.append(part.get("missing_to_level", 0.0))
                rows.append({**row,
                             "shift (SD)": f"{np.mean(shift):.3f}" if shift else "",
                             "changed": f"{np.mean(changed):.3f}",
                             "missing→level": f"{np.mean(to_level):.3f}" if to_level else ""})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
