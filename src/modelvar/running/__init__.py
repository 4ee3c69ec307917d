"""Running the workflow: what the Snakemake rules, the job steps and the CLI need to run a
planned study, and nothing the plan itself needs (issue 69: planning imports none of it).

* :mod:`~modelvar.running.workflow_config`: the config a Snakemake command line resolves to
  (as Snakemake reads it), whether it executes jobs, and the plan of such a command line;
* :mod:`~modelvar.running.code_hash`, :mod:`~modelvar.running.job_recipes`: what reruns a job
  (its code version, its recipe in the results folder);
* :mod:`~modelvar.running.job_commands`: the jobs' shell commands (arguments past a command
  line's limit through a file);
* :mod:`~modelvar.running.run_lock`: one run per results folder, and a results folder marked as
  made by the workflow;
* :mod:`~modelvar.running.address_space`: a run under an address-space limit (``ulimit -v``);
* :mod:`~modelvar.running.snakemake_log`: what Snakemake's log says of a finished run.
"""
