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
# Every job the run starts watches this script (and Snakemake): if either ends, so do the jobs
# (modelvar.run_watch), so that no job outlives a killed run.
if [ -r "/proc/$$/stat" ]; then
  stat="$(<"/proc/$$/stat")"
  read -ra fields <<<"${stat##*) }"
  started="${fields[19]}"
else
  started=-
fi
export MODELVAR_WATCH="${MODELVAR_WATCH:+$MODELVAR_WATCH }$(uname -n):$$:$started"
# SLURM's client tools without a controller that answers: Snakemake's SLURM plugin asks the
# controller (`scontrol show config`) each time Snakemake or this script's helpers start, and
# waits 10 s for it. A run on this machine does not need SLURM: say so, and hide scontrol.
if command -v sinfo >/dev/null 2>&1 && command -v scontrol >/dev/null 2>&1; then
  set +e
  timeout 2 scontrol show config >/dev/null 2>&1
  answered=$?
  set -e
  if [ "$answered" = 124 ]; then
    shim="$VENV/modelvar-without-slurm"
    mkdir -p "$shim"
    printf '#!/bin/sh\necho "hidden by modelvar: no SLURM controller answers" >&2\nexit 1\n' \
      >"$shim/scontrol"
    chmod +x "$shim/scontrol"
    export PATH="$shim:$PATH"
    echo "modelvar: SLURM tools found but no controller answers (scontrol show config: no" \
      "answer in 2 s): Snakemake's SLURM plugin would wait 10 s at every start; this run" \
      "hides scontrol from it. A cluster run needs the controller: check \`scontrol ping\`." >&2
  fi
fi
# Snakemake's own parser reads the options: -s and --workflow-profile go first, so that an -s
# or a profile of the caller's still wins.
workflow=(-s "$REPO/Snakefile" --workflow-profile "$REPO/profiles/local")
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
# One helper before Snakemake (modelvar before-run): a run killed earlier (kill -9, power loss)
# leaves Snakemake's lock behind: removed when no other run of this workflow is alive in the
# working directory (modelvar.running.run_lock); a command line that runs no job (-n, a
# listing, --lint, --unlock …) is Snakemake's, run by the helper in its own process (one
# start-up) with nothing to report; a run the address-space limit would fail is refused;
# otherwise it writes the report's path and whether the study runs in rounds.
python -m modelvar before-run --info "$staging/run-info" -- "${workflow[@]}" "$@"
[ -s "$staging/run-info" ] || exit 0
report="$(head -n 1 "$staging/run-info")"
sequential="$(sed -n 2p "$staging/run-info")"
# Snakemake runs as a child in its own process group, with SIGINT at its default (set -m and
# env --default-signal: a script's background child, or a script started in the background,
# ignores SIGINT): a SIGTERM, SIGINT or SIGHUP of this script reaches its process group as
# SIGINT, as Ctrl-C in a terminal does: the running jobs stop and Snakemake removes their
# incomplete outputs, instead of running on (on SIGTERM it would wait for the jobs to finish).
# The report is written in a temporary folder, then placed atomically (modelvar place-report):
# a full disk or an unwritable results folder leaves the earlier report, never a truncated one,
# and says so in one line.
# A job that cannot act on SIGINT (a library spinning in C code, where no handler runs) is ended
# from outside: what is left of Snakemake's process group STOP_SECONDS after a stop is killed.
STOP_SECONDS=${MODELVAR_STOP_SECONDS:-10}
stop_from_outside() {
  (
    for ((i = 0; i < STOP_SECONDS * 5; i++)); do
      kill -0 -- -"$child" 2>/dev/null || exit 0
      sleep 0.2
    done
    echo "modelvar: jobs still running ${STOP_SECONDS} s after the stop: killed" >&2
    kill -KILL -- -"$child" 2>/dev/null
  ) &
  killer=$!
}
# A sequential study (config `sequential`) runs in rounds: after each Snakemake run,
# `modelvar sequential next` gives the blocks whose claims are still open more repeats (exit
# status 10) and the loop runs Snakemake again, which fits only the new repeats; exit status 0
# (every block stopped, or fixed repeats) ends it. A killed run resumes its round.
while :; do
  set -m
  env --default-signal=INT snakemake "${workflow[@]}" "$@" --report "$staging/report.html" \
    --report-after-run &
  child=$!
  set +m
  killer=
  trap 'kill -INT -- -"$child" 2>/dev/null; [ -n "$killer" ] || stop_from_outside' TERM INT HUP
  status=0
  while :; do
    wait "$child" && status=0 || status=$?
    kill -0 "$child" 2>/dev/null || break  # a trapped signal interrupted the wait: wait again
  done
  [ -z "$killer" ] || wait "$killer" || true
  trap - TERM INT HUP
  [ "$status" = 0 ] && [ "$sequential" = sequential ] || break
  round=0
  python -m modelvar sequential next -- "${workflow[@]}" "$@" || round=$?
  [ "$round" = 10 ] || { status=$round; break; }
done
if [ "$status" != 0 ]; then
  limit="$(ulimit -v)"
  if [ "$limit" != unlimited ]; then  # the likely cause, and not one Snakemake names
    echo "modelvar: the run stopped (status $status) with a virtual-memory limit in force" \
      "(ulimit -v $limit kB): threads and libraries reserve address space far beyond what" \
      "they use, so under it Snakemake or a job fails (\"can't start new thread\"," \
      "MemoryError); lift it (ulimit -v unlimited) and size the jobs' memory with" \
      "resources.*.mem_mb" >&2
  fi
  exit "$status"
fi
python -m modelvar place-report "$staging/report.html" "$report" || {
  echo "modelvar: the study's results are complete, but $report is not this run's report:" \
    "run again once it can be written (with nothing left to do, a run only makes the report)" >&2
  exit 1
}
echo "figures: $(dirname "$report")/*/figures/   report: $report"
echo "the modelvar command (modelvar plan, verify, config, …): source $VENV/bin/activate"
