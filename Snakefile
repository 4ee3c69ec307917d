# modelvar: dataset -> (tuning) -> perturbed fits -> per-repeat predictions -> metric tables
#   -> aggregated dataset -> figure sets -> report
# Run from the repository root, e.g.:
#   snakemake --workflow-profile profiles/local --configfile config/config.yaml


import gc

# What is loaded (Snakemake's modules here) lives as long as this process. gc.freeze() takes it
# out of the garbage collector's passes, each of which would scan it all again: here while our
# load runs, and at the end of this file while Snakemake builds and runs the DAG (make
# bench-dryrun times a bare DAG with the same freezes too; docs/measurements/design-choices.md).
# Objects made later are collected as before; results do not change.
gc.freeze()

# The embedded default study, unless config files are given (--configfile a.yaml [b.yaml]):
# then only those are read, so a study config never inherits the default's datasets.
# --config KEY=VALUE entries apply on top either way (modelvar.planning.workflow_config mirrors this).
if not workflow.overwrite_configfiles:

    configfile: f"{workflow.current_basedir}/config/config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/fit.smk"
include: "rules/metrics.smk"
include: "rules/plots.smk"
include: "rules/simulation.smk"


# the study's answer once the findings job has written it (rules/common.smk), else the guide
report: report_landing()


rule all:
    default_target: True
    input:
        get_final_outputs,


onstart:
    start_run()


onsuccess:
    tidy_partitions()
    print(run_summary(log))
    refresh_report_landing()


# ... and what the load made (our modules, the config, the plan, the rules), for the DAG's build.
gc.freeze()
