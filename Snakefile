# modelvar: dataset -> fits under perturbation -> per-repeat predictions -> pairwise metrics -> figures
# Run from the repository root, e.g.:
#   snakemake --workflow-profile profiles/local --configfile config/config.yaml


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/fit.smk"
include: "rules/metrics.smk"
include: "rules/plots.smk"


rule all:
    input:
        get_final_outputs(),
    default_target: True
