"""The workflow's jobs, one module per command that a rule runs (``python -m modelvar fit …``
runs :func:`modelvar.jobs.fit.run`).

Each module holds its job's logic (``run(args)``), its command (``COMMAND = dict(name=…,
help=…, description=…)``: its line in ``modelvar --help``) and its arguments
(``add_arguments(parser)``, with the shared ones of :mod:`modelvar.jobs.common`);
:mod:`modelvar.cli` builds the parser from them and calls ``run(args)``. A rule's code version
is the import closure of its job module (:mod:`modelvar.running.code_hash`): editing a module
reruns exactly the jobs that import it. Each module declares ``NOT_RESULTS = ("help",
"description", "metavar")``: editing a help text reruns nothing, while a default or a type is
part of the version.
"""
