"""The jobs' shell commands (modelvar.running.job_commands): a job whose arguments are more than
one program may start with (the findings job of a large study) gets every one of them, intact,
through a file; the command line's way fails there."""

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from snakemake.utils import format as snakemake_format

from modelvar.running.job_commands import (
    ARGS_FROM,
    arguments_from_file,
    job_command,
    job_command_from_file,
)

#: a findings input of the full study, as long as its longest
TABLE = ("results-full/aggregated/summary/dataset=jungle_chess_2pcs_raw_endgame_complete/"
         "classifier=svm-sgd/dnone_cnone_hnone+{}.r9.parquet")
#: arguments a shell must pass through unchanged
AWKWARD = ["with space.parquet", "it's \"quoted\".parquet", "$HOME and `ls`.parquet",
           "two\nlines.parquet", "naïve ∂ata.parquet", "--looks-like-an-option", "*"]


def _shell(template: str, tables: list[str], tmp_path) -> subprocess.CompletedProcess:
    """The job's command as Snakemake formats it (its ``{input.summary:q}``, ``{log:q}``,
    ``{threads}``) and runs it (bash in strict mode, from a script file), with
    ``$MODELVAR_PYTHON`` a stand-in that records the arguments ``modelvar`` would parse
    (``arguments_from_file`` of its own)."""
    command = snakemake_format(template, input=SimpleNamespace(summary=tables),
                               log=str(tmp_path / "job.log"), threads=1)
    stand_in = tmp_path / "python"
    stand_in.write_text(f"""#!/bin/sh
exec {sys.executable} -c '
import json, sys
from modelvar.running.job_commands import arguments_from_file
assert sys.argv[2:4] == ["-m", "modelvar"], sys.argv[:4]
json.dump(arguments_from_file(sys.argv[4:]), open(sys.argv[1] + "-args.json", "w"))
' "$0" "$@"
""")
    stand_in.chmod(0o755)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "MODELVAR_PYTHON": str(stand_in), "TMPDIR": str(tmp_path / "tmp")}
    # a command this long goes to bash in a script file, as Snakemake hands it over
    # (snakemake.shell: past 64 KiB)
    script = tmp_path / "job.sh"
    script.write_text(f"set -euo pipefail; {command}\n")
    return subprocess.run(["bash", str(script)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)


def test_arguments_past_the_limit_of_a_command_line_reach_the_job_through_a_file(tmp_path):
    """More table paths than fit in ARG_MAX (this machine's, with 25 % over): the command
    line's form fails with "Argument list too long"; the file's form hands every argument,
    in order and byte for byte, to the job, and removes its file."""
    limit = os.sysconf("SC_ARG_MAX")
    n = int(1.25 * limit / len(TABLE.format(0))) + 1
    tables = [TABLE.format(i) for i in range(n)] + AWKWARD
    expected = ["findings", "--summary", *tables, "--width", "single"]

    direct = _shell(job_command("findings --summary {input.summary:q} --width single "
                                "2> {log:q}"), tables, tmp_path)
    assert direct.returncode == 126  # bash could not start the program
    assert "Argument list too long" in (tmp_path / "job.log").read_text()
    assert not (tmp_path / "python-args.json").exists()

    proc = _shell(job_command_from_file("findings --summary {input.summary:q} --width single"),
                  tables, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    received = json.loads((tmp_path / "python-args.json").read_text())
    assert len(received) == len(expected)
    assert received == expected
    assert sum(len(a) for a in received) > limit  # more than one command line holds
    assert list((tmp_path / "tmp").iterdir()) == []  # the arguments' file is gone


def test_a_failing_job_keeps_its_status_and_removes_its_file(tmp_path):
    """The job's exit status is the command's, not the clean-up's."""
    proc = _shell(job_command_from_file("findings --summary {input.summary:q}")
                  .replace('"$MODELVAR_PYTHON"', "false"), ["a.parquet"], tmp_path)
    assert proc.returncode == 1
    assert list((tmp_path / "tmp").iterdir()) == []


def test_arguments_from_file_reads_nul_ended_arguments_and_keeps_the_rest(tmp_path):
    written = ["findings", "--summary", *AWKWARD, ""]
    path = tmp_path / "args"
    path.write_bytes(b"".join(os.fsencode(a) + b"\0" for a in written))
    assert arguments_from_file([ARGS_FROM, str(path)]) == written
    assert arguments_from_file([ARGS_FROM, str(path), "--log", "x"]) == [*written, "--log", "x"]
    # without the option, the arguments are the command line's
    assert arguments_from_file(["fit", ARGS_FROM, "x"]) == ["fit", ARGS_FROM, "x"]
    assert arguments_from_file([]) == []
    with pytest.raises(ValueError, match="needs a FILE"):
        arguments_from_file([ARGS_FROM])


def _modelvar(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "modelvar", *args], capture_output=True,
                          text=True, timeout=120, **kwargs)


def test_the_modelvar_command_takes_its_arguments_from_a_file(tmp_path):
    """`modelvar --args-from FILE`: the command FILE names runs (here `metrics` on a
    predictions file whose name has a space and a quote); a missing file or the option
    anywhere but first is a clear error."""
    preds = tmp_path / "my \"runs\".csv"
    preds.write_text("run,sample,y_true,y_pred\n" + "".join(
        f"{r},{s},{s % 2},{(s + r) % 3 % 2}\n" for r in range(3) for s in range(20)))
    out = tmp_path / "out dir" / "my metrics.csv"
    out.parent.mkdir()
    args = tmp_path / "args"
    args.write_bytes(b"".join(os.fsencode(a) + b"\0"
                              for a in ["metrics", str(preds), "--out", str(out)]))
    direct = _modelvar("metrics", str(preds), "--out", str(tmp_path / "direct.csv"))
    assert direct.returncode == 0, direct.stderr[-2000:]
    proc = _modelvar(ARGS_FROM, str(args))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_bytes() == (tmp_path / "direct.csv").read_bytes()
    assert out.read_text().count("\n") > 1

    missing = _modelvar(ARGS_FROM, str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert f"{ARGS_FROM}: " in missing.stderr and "nowhere" in missing.stderr
    late = _modelvar("--log", str(tmp_path / "l.log"), ARGS_FROM, str(args), "metrics",
                     str(preds), "--out", str(tmp_path / "late.csv"))
    assert late.returncode == 2
    assert f"{ARGS_FROM} must be the first argument" in late.stderr
