#!/usr/bin/env bash
# The main job: the default study (config/config.yaml) on the embedded datasets with the local
# profile, then the HTML report. Extra arguments go to Snakemake (e.g. --configfile other.yaml,
# -n for a dry run, a target file).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-venv.sh
VENV="${MODELVAR_VENV:-.venv}"
export PATH="$PWD/$VENV/bin:$PATH"
snakemake --workflow-profile profiles/local "$@"
case " $* " in
  *" -n "*|*" --dry-run "*|*" --dryrun "*) exit 0 ;;
esac
results_dir="$(python -c 'import yaml,sys; print(yaml.safe_load(open("config/config.yaml")).get("results_dir","results"))')"
snakemake --workflow-profile profiles/local "$@" --report "$results_dir/report.html"
echo "figures: $results_dir/*/figures/   report: $results_dir/report.html"
