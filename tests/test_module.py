"""modelvar used as a Snakemake module of another workflow, from another folder (issue 16)."""

import shutil

import pytest

from conftest import CONFIGS, copy_workflow, job_counts, snakemake

pytestmark = pytest.mark.workflow

HOST = """\
configfile: "study.yaml"


module modelvar:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from modelvar
"""


def dry(host):
    proc = snakemake(host, host / "study.yaml", "-n", "--cores", "1",
                     snakefile=host / "Snakefile")
    text = proc.stdout + proc.stderr
    return {} if "Nothing to be done" in text else job_counts(proc.stdout)


def test_module_runs_and_reruns_exactly_what_a_library_edit_touches(tmp_path):
    workflow = copy_workflow(tmp_path / "modelvar-workflow")
    host = tmp_path / "my-project"
    host.mkdir()
    (host / "Snakefile").write_text(HOST.format(snakefile=workflow / "Snakefile"))
    shutil.copy(CONFIGS / "tiny.yaml", host / "study.yaml")
    snakemake(host, host / "study.yaml", "--cores", "2", snakefile=host / "Snakefile")
    assert (host / "results" / "vehicle" / "figures" / "ec_distributions.png").exists()
    assert dry(host) == {}
    # the library's code is hashed where the module imports it from, not the host's folder
    pairwise = workflow / "src" / "modelvar" / "metrics" / "pairwise.py"
    pairwise.write_text(pairwise.read_text() + "\nEDITED = 1\n")
    counts = dry(host)
    assert "fit" not in counts and "prepare_dataset" not in counts
    assert counts["pairwise_metrics"] == 2 and counts["grouped_metrics"] == 2  # a batch each
    assert counts["figures"] == 1
    plots = workflow / "src" / "modelvar" / "plots" / "study.py"
    pairwise.write_text(pairwise.read_text().replace("\nEDITED = 1\n", ""))
    plots.write_text(plots.read_text() + "\nEDITED = 1\n")
    assert dry(host) == {"figures": 1, "group_disparities_figure": 1, "all": 1, "total": 3}
