"""scripts/test.sh always reports: a failed stage does not stop the later ones, and one closing
line sums the tests of every pytest stage and names the stages that failed (issue 45).

The script runs for real, in a copy of the repository's scripts, with stand-ins for the tools
its stages call (a virtual environment whose ruff fails and whose ``python -m pytest`` writes a
JUnit report with chosen counts), so that the test checks the script's control flow in seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

from conftest import REPO

# what each pytest stage of the stand-in reports: (tests, failures, errors, skipped, exit status)
FAKE_PYTEST = textwrap.dedent("""\
    #!{python}
    import os, sys
    args = sys.argv[1:]
    if args[:2] != ["-m", "pytest"]:
        sys.exit(0)  # scripts/make_*.py --check
    report = next(a.split("=", 1)[1] for a in args if a.startswith("--junitxml="))
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(" ".join(args[2:]) + " OMP=" + os.environ.get("OMP_NUM_THREADS", "-") + "\\n")
    if "tests/test_mlp.py" in args:
        tests, failures, errors, skipped, status = 85, 0, 0, 1, 0
    else:
        tests, failures, errors, skipped, status = 600, 2, 1, 3, 1
    with open(report, "w") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
                  f'<testsuite name="pytest" errors="{{errors}}" failures="{{failures}}" '
                  f'skipped="{{skipped}}" tests="{{tests}}" time="1.0"></testsuite></testsuites>')
    sys.exit(status)
    """)


def _fake_checkout(tmp_path):
    """A folder with the real test.sh and test-machine.sh, a set-up that does nothing, and a
    virtual environment of stand-ins: ruff fails, the other linters pass."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("test.sh", "test-machine.sh"):
        shutil.copy(REPO / "scripts" / name, repo / "scripts" / name)
    (repo / "scripts" / "setup-venv.sh").write_text("exit 0\n")
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    tools = {
        "ruff": "#!/bin/sh\necho 'src/x.py:1:1: F401 unused import'\nexit 1\n",
        "snakefmt": "#!/bin/sh\nexit 0\n",
        "snakemake": "#!/bin/sh\nexit 0\n",
        "python": FAKE_PYTEST.format(python=sys.executable),
    }
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return repo


def test_a_failed_early_stage_leaves_the_later_ones_running_and_the_totals_printed(tmp_path):
    repo = _fake_checkout(tmp_path)
    log = tmp_path / "pytest-calls.log"
    env = {**os.environ, "MODELVAR_VENV": str(tmp_path / "venv"), "FAKE_LOG": str(log),
           "MODELVAR_SLURM": "0", "MODELVAR_BROWSER": "0"}
    env.pop("OMP_NUM_THREADS", None)  # the main pass runs with the caller's threads
    proc = subprocess.run(["bash", str(repo / "scripts" / "test.sh")], capture_output=True,
                          text=True, env=env, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    # every stage ran, in order, after ruff failed
    stages = [line for line in proc.stdout.splitlines() if line.startswith("== ")]
    assert stages == ["== ruff", "== snakefmt", "== snakemake --lint", "== generated files",
                      "== model tests with OMP_NUM_THREADS=1",
                      "== model tests with OMP_NUM_THREADS=2", "== pytest"], out
    calls = log.read_text().splitlines()
    assert [c.rsplit(" OMP=", 1)[1] for c in calls] == ["1", "2", "-"]
    # the closing line is the last, sums the three pytest stages and names the failed stages
    last = proc.stdout.strip().splitlines()[-1]
    passed = 2 * (85 - 1) + (600 - 2 - 1 - 3)
    assert last == (f"tests: {passed} passed, 3 failed, 5 skipped "
                    "(failed stages: ruff; pytest)"), out


def test_a_green_run_exits_zero_and_a_stage_without_a_report_counts_as_failed(tmp_path):
    repo = _fake_checkout(tmp_path)
    bin_dir = tmp_path / "venv" / "bin"
    (bin_dir / "ruff").write_text("#!/bin/sh\nexit 0\n")
    env = {**os.environ, "MODELVAR_VENV": str(tmp_path / "venv"),
           "FAKE_LOG": str(tmp_path / "calls.log"), "MODELVAR_SLURM": "0",
           "MODELVAR_BROWSER": "0"}
    # extra arguments go to pytest alone (no model passes); the stand-in reports all green
    proc = subprocess.run(["bash", str(repo / "scripts" / "test.sh"), "tests/test_mlp.py"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "tests: 84 passed, 0 failed, 1 skipped"
    # a pytest that dies before writing its report (here: not installed) is a failed stage
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    proc = subprocess.run(["bash", str(repo / "scripts" / "test.sh"), "tests/test_mlp.py"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert proc.stdout.strip().splitlines()[-1] == (
        "tests: 0 passed, 0 failed, 0 skipped (failed stages: pytest)")
    assert "pytest wrote no test report" in proc.stdout
