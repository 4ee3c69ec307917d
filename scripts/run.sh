#!/usr/bin/env bash
# The main job: the default study (config/config.yaml) on the embedded datasets with the local
# profile, then the HTML report. Extra arguments go to Snakemake (e.g. --configfile other.yaml,
# -n for a dry run, a target file). The report goes to RESULTS_DIR/report.html, RESULTS_DIR
# taken from the configs actually given (merged in order, --config on top), after every run
# that executes (also when there is nothing left to do).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-venv.sh
VENV="${MODELVAR_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export PATH="$VENV/bin:$PATH"
# A run killed earlier (kill -9, power loss) leaves Snakemake's lock behind: remove it when no
# other run of this workflow is alive in the working directory (modelvar.pipeline.run_lock).
python -m modelvar unlock-stale -- --workflow-profile profiles/local "$@"
report="$(python -m modelvar config --report-path -- --workflow-profile profiles/local "$@")"
if [ -z "$report" ]; then  # a dry run, a listing, --lint, --unlock, …: nothing to report
  exec snakemake --workflow-profile profiles/local "$@"
fi
snakemake --workflow-profile profiles/local "$@" --report "$report" --report-after-run
echo "figures: $(dirname "$report")/*/figures/   report: $report"
