"""The edit catalogue on the default study (issue 54): after a finished run of
``config/config.yaml`` with a copy of a workflow tree, each edit of
``tests/edit_catalogue.py`` is made to the copy and the dry run's jobs per rule printed (then
the edit is undone). Run it with this checkout's tree and with another (``--tree``: an older
checkout) to compare what each edit reruns.

Usage: ``make bench-edits`` (``python benchmarks/bench_edits.py [--tree PATH] [--work DIR]``);
the default study's run takes ≈ 6 minutes on two cores, each dry run seconds.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from conftest import copy_workflow, job_counts
from edit_catalogue import CATALOGUE


def snakemake(workflow: Path, work: Path, config: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(workflow / "Snakefile"),
                           "--directory", str(work), "--configfile", str(config), *args],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"snakemake failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout + proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO,
                        help="the workflow tree to copy (default: this checkout)")
    parser.add_argument("--work", type=Path, help="where to run (default: a temporary folder)")
    parser.add_argument("--cores", default="2")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-edits-"))
    workflow = work / "workflow"
    if not workflow.exists():
        import conftest

        conftest.REPO = args.tree  # copy the given tree
        copy_workflow(workflow)
    config = work / "study.yaml"
    shutil.copy(workflow / "config" / "config.yaml", config)
    study = work / "study"
    study.mkdir(exist_ok=True)
    print(f"running the default study with {args.tree} in {study} ...", flush=True)
    snakemake(workflow, study, config, "--cores", args.cores)
    print("| edit | jobs | per rule |\n|---|---|---|")
    for edit in CATALOGUE:
        saved = {p: p.read_bytes() for p in [*workflow.rglob("*.py"), *workflow.rglob("*.rst"),
                                             config]}
        try:
            edit.apply(workflow, config)
            text = snakemake(workflow, study, config, "-n", "--cores", "1")
        finally:
            for path, data in saved.items():
                path.write_bytes(data)
        counts = {} if "Nothing to be done" in text else job_counts(text)
        counts.pop("all", None)
        counts.pop("total", None)
        said = ", ".join(f"{rule} {n}" for rule, n in counts.items()) or "nothing"
        print(f"| {edit.name} | {sum(counts.values())} | {said} |", flush=True)


if __name__ == "__main__":
    main()
