"""The names a user gives things, as the workflow and the jobs accept them: a classifier's name
is a path part of every table and file of its jobs, so it is spelled the same everywhere (the
registry, the workflow's wildcard, a job's ``--classifier``)."""

#: a classifier's name: lower-case letters, digits, ``_`` and ``-``, a letter first
CLASSIFIER_NAME = r"[a-z][a-z0-9_-]*"
