# modelvar's workflow: the design card's entry point at the repository's root, e.g.
#   snakemake --workflow-profile profiles/local --configfile config/config.yaml
# The rules are workflow/Snakefile's (where the Snakemake Workflow Catalog, snakedeploy and
# `snakemake -s gh:…` look); this file runs the same workflow (tests/test_deploy.py).


include: "workflow/Snakefile"


# An included file's `default_target` holds inside it only (Snakemake restores the including
# file's after an include): the workflow's `all` is this file's default target too.
workflow.default_target = "all"
