# modelvar: dataset -> (tuning) -> perturbed fits -> per-repeat predictions -> metric tables
#   -> aggregated dataset -> figure sets -> report
# Run from the repository root, e.g.:
#   snakemake --workflow-profile profiles/local --configfile config/config.yaml


# The embedded default study, unless config files are given (--configfile a.yaml [b.yaml]):
# then only those are read, so a study config never inherits the default's datasets.
# --config KEY=VALUE entries apply on top either way (modelvar.pipeline.workflow_config mirrors this).
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
    print(run_summary())
    refresh_report_landing()
