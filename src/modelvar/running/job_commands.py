"""The shell commands of the workflow's jobs: ``python -m modelvar ARGUMENTS`` as a rule's
``shell:`` text (Snakemake placeholders in ARGUMENTS, every value quoted with ``:q``).

Every job's OpenMP and BLAS pools get the job's threads: a pool sized to the machine's cores
reserves address space per core at start-up (:mod:`modelvar.running.address_space`). The
interpreter is ``$MODELVAR_PYTHON``, which the workflow sets (``rules/common.smk``), so that a
command's text does not depend on where the project and its venv live.

A job whose arguments grow with the study (the findings job names about three tables per fit
and metrics job) gets them through a file instead (:func:`job_command_from_file`): one
program's arguments and environment are limited together (Linux's ``ARG_MAX``, 2 MiB with the
default 8 MiB stack), and a shell builtin, which starts no program, is not.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the option of ``modelvar`` that reads a command's arguments from a file
ARGS_FROM = "--args-from"


def arguments_from_file(argv: list[str]) -> list[str]:
    """``argv`` with a leading ``--args-from FILE`` replaced by FILE's arguments, each ended by
    a NUL byte (as the shell's ``printf '%s\\0'`` writes them: any character but NUL allowed),
    for a job whose arguments are more than one command line holds (module docstring; the
    numbers in docs/decisions.md, "Full pipeline").

    Raises ``OSError`` where the file cannot be read, ``ValueError`` where ``--args-from`` has
    no file.
    """
    if not argv or argv[0] != ARGS_FROM:
        return argv
    if len(argv) < 2:
        raise ValueError(f"{ARGS_FROM} needs a FILE")
    words = Path(argv[1]).read_bytes().split(b"\0")
    if words[-1] == b"":  # each argument ends with a NUL, so the last split is empty
        words.pop()
    return [os.fsdecode(word) for word in words] + argv[2:]


#: the environment of every job's command: its thread pools sized to its threads
THREADS = "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads}"


def job_command(arguments: str) -> str:
    """``python -m modelvar ARGUMENTS``, on the command line (ARGUMENTS end with the job's
    redirection of its standard error to its log)."""
    return f'{THREADS} "$MODELVAR_PYTHON" -m modelvar {arguments}'


def job_command_from_file(arguments: str) -> str:
    """``python -m modelvar ARGUMENTS 2> LOG``, with ARGUMENTS passed in a file: the shell's
    ``printf`` builtin writes each, ended by a NUL byte, to a temporary file (removed when the
    command ends), and ``modelvar --args-from FILE`` reads them (:func:`arguments_from_file`).
    Their number and length are limited by the disk alone."""
    return ('args_file="$(mktemp)"; trap \'rm -f "$args_file"\' EXIT; '
            f"printf '%s\\0' {arguments} > \"$args_file\"; "
            f'{THREADS} "$MODELVAR_PYTHON" -m modelvar {ARGS_FROM} "$args_file" 2> {{log:q}}')
