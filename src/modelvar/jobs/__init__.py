"""The workflow's jobs, one module per command that a rule runs (``python -m modelvar fit …``
runs :func:`modelvar.jobs.fit.run`).

Each module holds its job's logic; :mod:`modelvar.cli` only parses the options and calls
``run(args)``. A rule's code version is the import closure of its job module
(:mod:`modelvar.running.code_hash`): editing a module reruns exactly the jobs that import it,
and editing the argument parser reruns none.
"""
