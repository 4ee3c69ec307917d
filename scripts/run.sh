#!/usr/bin/env bash
# The main job: the default study (config/config.yaml) on the embedded datasets with the local
# profile, then the HTML report. Extra arguments go to Snakemake (e.g. --configfile other.yaml,
# -n for a dry run, a target file). Snakemake runs in the directory you call this from, so
# relative paths (config files, targets, --directory, the config's results_dir) mean what they
# mean there; from the repository root that is the README's `results/`. The report goes to
# RESULTS_DIR/report.html, RESULTS_DIR taken from the configs actually given (merged in order,
# --config on top), after every run that executes (also when there is nothing left to do).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$REPO/scripts/setup-venv.sh"
VENV="${MODELVAR_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$REPO/$VENV" ;; esac  # relative: to the repository
export PATH="$VENV/bin:$PATH"
# Snakemake's own parser reads the options: -s and --workflow-profile go first, so that an -s
# or a profile of the caller's still wins.
workflow=(-s "$REPO/Snakefile" --workflow-profile "$REPO/profiles/local")
# A run killed earlier (kill -9, power loss) leaves Snakemake's lock behind: remove it when no
# other run of this workflow is alive in the working directory (modelvar.planning.run_lock).
python -m modelvar unlock-stale -- "${workflow[@]}" "$@"
report="$(python -m modelvar config --report-path -- "${workflow[@]}" "$@")"
if [ -z "$report" ]; then  # a dry run, a listing, --lint, --unlock, …: nothing to report
  exec snakemake "${workflow[@]}" "$@"
fi
# Snakemake runs as a child in its own process group, with SIGINT at its default (set -m and
# env --default-signal: a script's background child, or a script started in the background,
# ignores SIGINT): a SIGTERM, SIGINT or SIGHUP of this script reaches its process group as
# SIGINT, as Ctrl-C in a terminal does: the running jobs stop and Snakemake removes their
# incomplete outputs, instead of running on (on SIGTERM it would wait for the jobs to finish).
set -m
env --default-signal=INT snakemake "${workflow[@]}" "$@" --report "$report" --report-after-run &
child=$!
set +m
trap 'kill -INT -- -"$child" 2>/dev/null' TERM INT HUP
status=0
while :; do
  wait "$child" && status=0 || status=$?
  kill -0 "$child" 2>/dev/null || break  # a trapped signal interrupted the wait: wait again
done
trap - TERM INT HUP
[ "$status" = 0 ] || exit "$status"
echo "figures: $(dirname "$report")/*/figures/   report: $report"
echo "the modelvar command (modelvar plan, verify, config, …): source $VENV/bin/activate"
