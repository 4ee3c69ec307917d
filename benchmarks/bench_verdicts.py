"""The Findings' verdicts calibrated (issues 53, 64): false-claim rates and power, on simulated
pages and on a real workflow's null.

Four parts, each with a known truth (:mod:`modelvar.calibration.pages`):

1. **Single tests at 5 %**, before the page's control: the variance shares' leader test
   (jackknife, against every other factor) where two families tie at the top (with equal or
   unequal interactions with the repeat), where a family ties with the repeat — its effects
   normal, Student-t(5), 10 %-contaminated or Student-t(3), each with the same variance —,
   where nothing acts, and where one family is first (its power); and the equivalence test
   (two one-sided tests) at a true ratio on the margin; at 3, 5, 10 and 20 repeats.
2. **Pages**: ``--pages`` simulated pages per scenario (a tie at the top, nothing acting,
   planted effects, heavy-tailed and contaminated repeats with a family tied with the repeat,
   twins: two copies of one classifier among near-certain claims) and repeat count, judged by
   the page's own code; every claim scored. Per tier: the share of pages with a false headline
   claim (what Holm bounds) and the exploratory claims' false-discovery rate (what
   Benjamini–Yekutieli bounds); per kind the false-claim rates and the power — beside the same
   pages decided as before the tiers (one Benjamini–Yekutieli family, ``today``).
3. **Over datasets**: ``--dataset-pages`` pages of 6, 8 and 12 datasets at 5 repeats, of a
   large classifier effect (``over datasets``), of a seedless classifier beside a seeded one
   (``seedless``) and of the tie: the power and false-claim rates of the statements over
   datasets (today: the Wilcoxon test in the one family).
4. **Twins through the workflow**: a real study of vehicle with two copies of one user
   classifier (scikit-learn's ``SGDClassifier``, a seed per run, ``--twin-repeats`` repeats of
   5 runs) run by Snakemake once (kept in ``--work``), then pages judged on ``--subsets``
   random subsets of 3, 5, 10 and 20 of its repeats: any classifier comparison told apart is
   false.

Usage: ``make bench-verdicts`` (``python benchmarks/bench_verdicts.py [--pages N] [--write]``;
``--write`` puts the tables into docs/measurements/verdicts.md). With the defaults it runs
about four hours on two cores; every draw comes from named seeds, so a rerun prints the same
numbers.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
REPEATS = (3, 5, 10, 20)
SCENARIOS = ("tie", "null", "planted", "heavy tails", "contaminated", "twins")
DATASET_SCENARIOS = ("over datasets", "seedless", "tie")
DATASETS = (6, 8, 12)
DOC = REPO / "docs" / "measurements" / "verdicts.md"
#: the kinds of claim the page stated before the tiers (issue 53's page), decided "today" as it
#: did: one Benjamini–Yekutieli family
TODAY_KINDS = ("leader", "largest share", "classifiers", "classifiers over datasets",
               "combined", "seed claim")


# ------------------------------------------------------------------ single tests
def _grid(rng, repeats: int, effects: dict[str, float], repeat_sd: float, interaction_sd: float,
          runs: int = 5, noise_sd: float = 0.01, tails: str = "normal") -> pd.DataFrame:
    """Run accuracies of a 2 × 2 × 2 grid (data, hparam, training fraction) over repeats."""
    from modelvar.calibration.pages import _tailed

    levels = {"data": ("dnone", "rel0p2"), "hparam": ("hnone", "hrel0p1"),
              "downsample": ("down100", "down050")}
    names = list(levels)
    cells = np.array(np.meshgrid(*[[0, 1]] * 3, indexing="ij")).reshape(3, -1).T
    b = _tailed(rng, tails, repeat_sd, repeats) if repeat_sd else np.zeros(repeats)
    sign = cells - 0.5
    slope = np.array([effects[f] for f in names])[None, :] + \
        rng.normal(0, interaction_sd, (repeats, 3)) if interaction_sd else \
        np.tile(np.array([effects[f] for f in names]), (repeats, 1))
    mean = 0.8 + b[None, :] + sign @ slope.T  # cells × repeats
    y = mean[:, :, None] + rng.normal(0, noise_sd, (*mean.shape, runs))
    c, r, _ = np.meshgrid(np.arange(len(cells)), np.arange(repeats), np.arange(runs),
                          indexing="ij")
    frame = pd.DataFrame({f: np.array(levels[f])[cells[c.ravel(), i]]
                          for i, f in enumerate(names)})
    frame["repeat"] = r.ravel()
    frame["accuracy"] = y.ravel()
    return frame


_FAMILY_REPEAT = ({"data": 0.02, "hparam": 0.005, "downsample": 0.005}, 0.01, 0.003, 0.0)
#: the single-test scenarios of the shares' leader: (effects of data, hparam, training
#: fraction; the repeat's SD; the families' interaction with the repeat; training fraction's
#: own extra interaction), the repeat's tails, and whether a leader is truly first (power) or
#: not (size)
SHARE_CASES = {
    "tie of two families": (({"data": 0.02, "hparam": 0.005, "downsample": 0.02}, 0.005,
                             0.004, 0.0), "normal", False),
    "tie, one with 3× the interaction": (({"data": 0.02, "hparam": 0.005, "downsample": 0.02},
                                          0.005, 0.0, 0.012), "normal", False),
    "tie of a family and the repeat": (_FAMILY_REPEAT, "normal", False),
    "tie of a family and the repeat, t(5) repeats": (_FAMILY_REPEAT, "t5", False),
    "tie of a family and the repeat, 10 % contaminated": (_FAMILY_REPEAT, "contaminated", False),
    "tie of a family and the repeat, t(3) repeats": (_FAMILY_REPEAT, "t3", False),
    "nothing acts": (({"data": 0.0, "hparam": 0.0, "downsample": 0.0}, 0.0, 0.0, 0.0),
                     "normal", False),
    "one family first (power)": (({"data": 0.04, "hparam": 0.005, "downsample": 0.02}, 0.005,
                                  0.004, 0.0), "normal", True),
}


def share_test_rate(case: str, repeats: int, n: int, seed: int) -> float:
    """The share of ``n`` simulated grids of a :data:`SHARE_CASES` case whose leader test
    (against every other factor) rejects at 5 %: the size where no factor is truly first,
    the power where one is (and is the one named)."""
    from modelvar.findings.components import variance_components

    (effects, repeat_sd, interaction_sd, extra), tails, power = SHARE_CASES[case]
    rng = np.random.default_rng([seed, repeats, list(SHARE_CASES).index(case)])
    rejected = 0
    for _ in range(n):
        frame = _grid(rng, repeats, effects, repeat_sd, interaction_sd, tails=tails)
        if extra:
            slope = rng.normal(0, extra, repeats)
            sign = np.where(frame["downsample"] == "down050", 0.5, -0.5)
            frame["accuracy"] += sign * slope[frame["repeat"].to_numpy()]
        table = variance_components(frame, "accuracy", replicated=True, min_repeats=3)
        lead = table.dropna(subset=["lead_p"])
        rejected += bool(len(lead) and lead["lead_p"].iloc[0] <= 0.05 and (
            not power or lead["component"].iloc[0] == "data perturbation"))
    return rejected / n


def equivalence_size(repeats: int, n: int, seed: int, margin: float = 1.25) -> float:
    """The share of ``n`` comparisons whose true ratio is on the margin (a null of the
    equivalence test) called practically equivalent at 5 %."""
    from modelvar.findings.paired import Compared

    rng = np.random.default_rng([seed, repeats, 7])
    hits = 0
    for _ in range(n):
        shared = rng.normal(0, 0.2, repeats)
        a = pd.Series(0.1 * margin * np.exp(shared + rng.normal(0, 0.15, repeats)))
        b = pd.Series(0.1 * np.exp(shared + rng.normal(0, 0.15, repeats)))
        hits += Compared.between("a − b", a, b, margin).p_equivalent <= 0.05
    return hits / n


# ------------------------------------------------------------------ pages
def _pages(task: tuple[str, int, int, int, int]) -> tuple[tuple, pd.DataFrame, float]:
    from modelvar.calibration.pages import run_pages

    name, repeats, datasets, pages, seed = task
    start = time.process_time()
    scored = run_pages(name, pages=pages, repeats=repeats, seed=seed, datasets=datasets,
                       legacy=TODAY_KINDS)
    scored["page"] += seed * 1_000_000
    return (name, repeats, datasets), scored, time.process_time() - start


#: the rows each part prints, in order (rates with these names; the rest of the rates in the
#: order they come)
HEADLINE_ROWS = ("headline: pages with a false claim", "headline: power",
                 "exploratory: FDR", "exploratory: power")


def _rates_table(results: dict[tuple, list[pd.DataFrame]], key_of) -> dict[str, pd.DataFrame]:
    from modelvar.calibration.pages import rates

    tables: dict[str, dict] = {}
    for key, parts in results.items():
        scored = pd.concat(parts, ignore_index=True)
        name, column = key_of(key)
        for control, label in (("tiers", "now"), ("legacy", "today")):
            r = rates(scored[scored["control"] == control])
            tables.setdefault(name, {})[(column, label)] = r
    out = {}
    for name, cols in tables.items():
        frame = pd.DataFrame(cols)
        order = [r for r in HEADLINE_ROWS if r in frame.index] + \
            [r for r in frame.index if r not in HEADLINE_ROWS]
        frame = frame.loc[order].dropna(how="all")
        frame.columns = [f"{c} {label}" for c, label in frame.columns]
        out[name] = frame
    return out


# ------------------------------------------------------------------ twins through the workflow
TWIN = {"estimator": "sklearn.linear_model.SGDClassifier",
        "params": {"loss": "log_loss", "max_iter": 50, "tol": None},
        "seed_param": "random_state", "seconds_per_fit": 0.02,
        "hparams": {"alpha": {"type": "float", "low": 1e-6, "high": 1e-2, "scale": "log",
                              "default": 1e-4}}}


def twins_study(work: Path, repeats: int, cores: int) -> Path:
    """Run (or reuse) the twins study in ``work``: vehicle, two copies of one classifier, the
    default config's perturbations; its results folder."""
    import yaml

    config = {"root_seed": 64, "results_dir": "results",
              "datasets": {"vehicle": {"source": "embedded"}},
              "classifiers": [{"name": "sgda", **TWIN}, {"name": "sgdb", **TWIN}],
              "split": {"test_fraction": 0.25, "repeats": repeats, "runs": 5},
              "design": "both",
              "perturbation": {"data": ["none", {"rel": 0.2}], "hparam": ["none", {"rel": 0.1}],
                               "downsample": [0.5, 1.0], "model_seed": ["per-run"]},
              "simulation": {"enabled": False}, "jobs": {"data_probe_seconds": 0}}
    work.mkdir(parents=True, exist_ok=True)
    path = work / "twins.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
               f"{os.environ.get('PATH', '')}")
    target = "results/aggregated/study/verdicts.parquet"
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                           "--directory", str(work), "--configfile", str(path), "--cores",
                           str(cores), target, "--quiet", "rules"], capture_output=True,
                          text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"the twins study failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return work / "results"


def _twin_tables(results: Path) -> dict:
    from modelvar.findings.study import AGREEMENT_COLUMNS, read_summaries, runs_columns
    from modelvar.pipeline.result_tables import read_tables
    from modelvar.study.design import read_designs, study_roles

    def files(table: str) -> list[Path]:
        return sorted((results / "aggregated" / table).rglob("*.parquet"))

    return {"summary": read_summaries(files("summary")),
            "agreement": read_tables(files("agreement"), columns=AGREEMENT_COLUMNS),
            "runs": read_tables(files("runs"), columns=runs_columns()),
            "roles": study_roles(read_designs(sorted((results / "design").glob("*.json"))))}


def _twin_pages(task: tuple[str, int, int, int]) -> list[dict]:
    """Pages judged on random subsets of ``size`` of the twins study's repeats: per page,
    whether a classifier comparison was told apart (false: the two are copies), now and
    today."""
    from modelvar.calibration.pages import legacy_claims
    from modelvar.findings.kinds import kind
    from modelvar.findings.study import judge_study

    results, size, pages, seed = task
    tables = _twin_tables(Path(results))
    repeats = np.sort(tables["summary"]["repeat"].unique())
    rng = np.random.default_rng([64, size, seed])
    out = []
    for _ in range(pages):
        chosen = np.sort(rng.choice(repeats, size, replace=False))
        renumber = {int(r): i for i, r in enumerate(chosen)}
        part = {}
        for name, t in tables.items():
            if name != "roles":
                mine = t[t["repeat"].isin(chosen)].copy()
                mine["repeat"] = mine["repeat"].map(renumber)
                part[name] = mine
        judged = judge_study(part["summary"], part["agreement"], part["runs"], tables["roles"],
                             weak_below=0.5)
        t = judged.tables
        row = {"repeats": size}
        for label, verdicts in (("now", t["verdicts"]),
                                ("today", legacy_claims(t, t["verdicts"], TODAY_KINDS))):
            compared = verdicts[verdicts["kind"].map(lambda k: kind(k).table == "comparison")]
            apart = compared["holds"] & compared["verdict"].isin(["supported", "contradicted"])
            row[f"false classifier claim {label}"] = bool(apart.any())
            row[f"claims held {label}"] = int(verdicts["holds"].sum())
        out.append(row)
    return out


# ------------------------------------------------------------------ output
def markdown(frame: pd.DataFrame) -> str:
    """A table in Markdown, its index as the first column, numbers with three decimals."""
    def cell(v) -> str:
        if isinstance(v, float | np.floating):
            return "–" if not np.isfinite(v) else f"{v:,.0f}" if v > 1 and v == int(v) \
                else f"{v:.3f}"
        return str(v)

    head = ["", *map(str, frame.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join([str(i), *map(cell, row)]) + " |"
              for i, row in zip(frame.index, frame.to_numpy(), strict=True)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000,
                        help="simulated pages per scenario and repeat count (default 1,000)")
    parser.add_argument("--dataset-pages", type=int, default=200,
                        help="simulated pages per scenario and dataset count (default 200)")
    parser.add_argument("--single", type=int, default=1000,
                        help="simulations per single test and repeat count (default 1,000)")
    parser.add_argument("--subsets", type=int, default=200,
                        help="pages of the twins study per subset size (default 200; 0: skip)")
    parser.add_argument("--twin-repeats", type=int, default=40)
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "modelvar-bench-twins",
                        help="where the twins study runs and is kept")
    parser.add_argument("--repeats", default=",".join(map(str, REPEATS)))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write", action="store_true", help=f"write the tables to {DOC}")
    args = parser.parse_args()
    repeats = [int(r) for r in args.repeats.split(",")]
    out = []
    started = time.time()
    cpu = 0.0

    def show(lines: list[str]) -> None:
        out.extend(lines)
        print("\n".join(lines), flush=True)

    with ProcessPoolExecutor(args.workers) as pool:
        if args.single:
            jobs = {(case, r): pool.submit(share_test_rate, case, r, args.single, 53)
                    for case in SHARE_CASES for r in repeats}
            jobs.update({("equivalence", r): pool.submit(equivalence_size, r, args.single, 53)
                         for r in repeats})
            singles = {k: f.result() for k, f in jobs.items()}
            rows = [{"test": f"shares' leader: {case}", "repeats": r,
                     "rejections at 5 %": singles[(case, r)]}
                    for case in SHARE_CASES for r in repeats]
            rows += [{"test": "equivalence: true ratio on the margin", "repeats": r,
                      "rejections at 5 %": singles[("equivalence", r)]} for r in repeats]
            single = pd.DataFrame(rows).pivot(index="test", columns="repeats",
                                              values="rejections at 5 %")
            single = single.loc[list(dict.fromkeys(r["test"] for r in rows))]
            se = math.sqrt(0.05 * 0.95 / args.single)
            show(["## Single tests at 5 %, before the page's control",
                  f"{args.single:,} simulations each (a size of 0.05 has a standard error of "
                  f"{se:.3f}).", "", markdown(single), ""])
        halves = max(1, args.workers)
        if args.pages:
            tasks = [(name, r, 2, args.pages // halves + (i < args.pages % halves), 1 + i)
                     for name in SCENARIOS for r in repeats for i in range(halves)]
            results: dict[tuple, list[pd.DataFrame]] = {}
            for key, scored, seconds in pool.map(_pages, tasks):
                results.setdefault(key, []).append(scored)
                cpu += seconds
            for name, table in _rates_table(results, lambda k: (k[0], k[1])).items():
                show([f"## Pages: {name}", "", f"{args.pages:,} pages per repeat count; "
                      "`now`: the page's tiers; `today`: one Benjamini–Yekutieli family, as "
                      "before.", "", markdown(table), ""])
        if args.dataset_pages:
            tasks = [(name, 5, d, args.dataset_pages // halves +
                      (i < args.dataset_pages % halves), 101 + i)
                     for name in DATASET_SCENARIOS for d in DATASETS for i in range(halves)]
            results = {}
            for key, scored, seconds in pool.map(_pages, tasks):
                results.setdefault(key, []).append(scored)
                cpu += seconds
            for name, table in _rates_table(results, lambda k: (k[0], f"{k[2]} datasets")
                                            ).items():
                show([f"## Over datasets: {name}", "", f"{args.dataset_pages:,} pages per "
                      "dataset count, 5 repeats, 2 classifiers.", "", markdown(table), ""])
        if args.subsets:
            print(f"running the twins study ({args.twin_repeats} repeats) in {args.work} ...",
                  flush=True)
            begun = time.time()
            results_dir = twins_study(args.work, args.twin_repeats, args.workers)
            study_wall = time.time() - begun
            tasks = [(str(results_dir), size, args.subsets // halves +
                      (i < args.subsets % halves), i) for size in repeats for i in range(halves)]
            rows = [row for part in pool.map(_twin_pages, tasks) for row in part]
            twins = pd.DataFrame(rows).groupby("repeats").mean().T
            twins.columns = [f"{c} repeats" for c in twins.columns]
            show(["## Twins through the workflow", "",
                  f"vehicle, two copies of scikit-learn's SGDClassifier (log loss, 50 "
                  f"iterations, a seed per run), the default perturbations, "
                  f"{args.twin_repeats} repeats × 5 runs ({study_wall / 60:.0f} minutes of "
                  f"Snakemake); {args.subsets} pages per subset size, each on a random subset "
                  "of the repeats. `false classifier claim`: the share of pages telling the "
                  "copies apart; `claims held`: the mean claims that hold per page.", "",
                  markdown(twins), ""])
    took = (f"{cpu / 60:.0f} CPU minutes for the simulated pages, "
            f"{(time.time() - started) / 60:.0f} minutes on {args.workers} workers.")
    print(took)
    if args.write:
        DOC.write_text(HEADER + "\n" + took + "\n\n" + "\n".join(out))
        print(f"written: {DOC}")


HEADER = """# The Findings' verdicts, calibrated (make bench-verdicts)

`benchmarks/bench_verdicts.py` simulates pages whose truth is known
(`modelvar.calibration.pages`: the default config's design, 2 datasets × 2 classifiers,
10 runs a repeat, unless said) and judges them with the Findings' own code, and judges a real
workflow's null (two copies of one classifier) on subsets of its repeats. The page has two
tiers (`modelvar.findings.multiplicity`): headline claims under Holm's family-wise control,
exploratory claims under Benjamini–Yekutieli's false-discovery-rate control. Rates:
`headline: pages with a false claim` is the share of pages stating any false headline claim
(what Holm bounds at 5 %), `exploratory: FDR` the exploratory claims' share of false ones among
those stated, averaged over pages (what Benjamini–Yekutieli bounds at 5 %); `power` the share
of claims whose truth allows one that stated it. Per kind of claim (`modelvar.findings.kinds`),
`false per …` is the share of its rows that stated a false claim, `pages with a false …` the
share of pages carrying one, `power …` as above (NaN: the scenario allows none). `now` is the
page's two tiers; `today` the same pages decided as the page did before them (one
Benjamini–Yekutieli family over every claim's smallest p; over datasets the Wilcoxon test; the
kinds it stated then).
"""

if __name__ == "__main__":
    main()
