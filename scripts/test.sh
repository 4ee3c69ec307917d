#!/usr/bin/env bash
# Set up (if needed) and run the checks: ruff, snakefmt, snakemake --lint, the generated files,
# the model tests at 1 and 2 threads, then the test suite. Extra arguments go to pytest (and
# leave out the model passes).
# Every stage runs even when an earlier one failed; at the end one line sums the tests of every
# pytest stage ("tests: N passed, N failed, N skipped"), names the stages that failed, and the
# exit status is non-zero if any did.
# As root on Debian (as in CI) it installs and starts what two tests need: a one-machine SLURM
# cluster (packages slurm-wlm, munge, slurmdbd and mariadb-server; daemons munged, mariadbd,
# slurmdbd, slurmctld, slurmd) and Chromium with its
# driver (packages chromium, chromium-driver). At the end, also on failure or Ctrl-C, it stops
# the daemons it started and purges the packages it installed (scripts/test-machine.sh);
# MODELVAR_KEEP_TEST_PACKAGES=1 keeps the packages for the next run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/test-machine.sh
REPORTS="$(mktemp -d)"
FAILED_STAGES=()
PASSED=0 FAILED=0 SKIPPED=0

# stage NAME COMMAND...: run one stage; a failure is recorded, not fatal
stage() {
  local name=$1
  shift
  echo "== $name"
  if ! "$@"; then
    FAILED_STAGES+=("$name")
  fi
}

# The number in attribute $2 of the first <testsuite> of a JUnit XML file $1 (0 if none)
_junit() {
  local n
  n=$(grep -o '<testsuite [^>]*' "$1" 2>/dev/null | head -1 | grep -oE " $2=\"[0-9]+\"" \
    | grep -oE '[0-9]+')
  echo "${n:-0}"
}

# pytest_stage NAME [ENV=VALUE ...] -- PYTEST ARGUMENTS...: one pytest run, its counts added to
# the totals from its JUnit report; a run that failed or wrote no report is a failed stage
pytest_stage() {
  local name=$1
  shift
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  local report="$REPORTS/${#FAILED_STAGES[@]}-$RANDOM.xml" status=0
  echo "== $name"
  env "${env[@]}" python -m pytest --junitxml="$report" "$@" || status=$?
  if [ ! -s "$report" ]; then
    echo "($name wrote no test report: pytest did not run its tests)"
    FAILED_STAGES+=("$name")
    return
  fi
  local tests failures errors skipped
  tests=$(_junit "$report" tests)
  failures=$(_junit "$report" failures)
  errors=$(_junit "$report" errors)
  skipped=$(_junit "$report" skipped)
  PASSED=$((PASSED + tests - failures - errors - skipped))
  FAILED=$((FAILED + failures + errors))
  SKIPPED=$((SKIPPED + skipped))
  [ "$status" = 0 ] || FAILED_STAGES+=("$name")
}

finish() {
  local status=$?
  trap - EXIT INT TERM
  machine_restore
  [ -z "${VENV:-}" ] || echo "the modelvar command (modelvar plan, verify, config, …): source $VENV/bin/activate"
  rm -rf "$REPORTS"
  # the counts last, after the clean-up's lines
  local line="tests: $PASSED passed, $FAILED failed, $SKIPPED skipped"
  if [ "${#FAILED_STAGES[@]}" -gt 0 ]; then
    local joined
    joined=$(printf '%s; ' "${FAILED_STAGES[@]}")
    line="$line (failed stages: ${joined%; })"
    [ "$status" != 0 ] || status=1
  fi
  echo "$line"
  exit "$status"
}
machine_snapshot
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if ! bash scripts/setup-venv.sh; then
  FAILED_STAGES+=("virtual environment (nothing else could run)")
  exit 1
fi
VENV="${MODELVAR_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export PATH="$VENV/bin:$PATH"
stage "ruff" ruff check src tests benchmarks scripts
stage "snakefmt" snakefmt --check Snakefile workflow/Snakefile rules/
stage "snakemake --lint" snakemake -s workflow/Snakefile --lint --configfile config/config.yaml
stage "generated files" bash -c "python scripts/make_envs.py --check \
  && python scripts/make_cli_docs.py --check && python scripts/make_readme_plans.py --check"
# The SLURM integration test needs a local cluster: start one where we can (root on Debian, as in
# CI); elsewhere tests/test_slurm.py is skipped and says why. MODELVAR_SLURM=0 skips the set-up.
if [ "${MODELVAR_SLURM:-1}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "== local SLURM cluster" && bash tests/slurm/setup.sh \
    || echo "(SLURM set-up failed: the SLURM test will be skipped)"
fi
# The report's browser test needs Chromium and its driver: install them from Debian where we can
# (root, as in CI); elsewhere tests/test_report.py is skipped and says why. MODELVAR_BROWSER=0
# skips the set-up.
if [ "${MODELVAR_BROWSER:-1}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
    && ! command -v chromedriver >/dev/null; then
  echo "== chromium (report browser test)" && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null) \
    || echo "(chromium set-up failed: the browser test will be skipped)"
fi
# Results must not depend on the thread count (docs/decisions.md, "Determinism"): the model tests
# again with one and with two OpenMP/BLAS/torch threads (only for a whole-suite run).
if [ "$#" = 0 ]; then
  for threads in 1 2; do
    pytest_stage "model tests with OMP_NUM_THREADS=$threads" OMP_NUM_THREADS=$threads \
      OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads -- \
      -q -p no:cacheprovider tests/test_mlp.py tests/test_models.py
  done
fi
pytest_stage "pytest" -- -n 2 "$@"
