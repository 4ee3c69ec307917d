#!/usr/bin/env bash
# Set up (if needed) and run the checks: ruff, snakemake --lint, then the test suite.
# Extra arguments go to pytest.
# As root on Debian (as in CI) it installs and starts what two tests need: a one-machine SLURM
# cluster (packages slurm-wlm and munge; daemons munged, slurmctld, slurmd) and Chromium with its
# driver (packages chromium, chromium-driver). At the end, also on failure or Ctrl-C, it stops
# the daemons it started and purges the packages it installed (scripts/test-machine.sh);
# MODELVAR_KEEP_TEST_PACKAGES=1 keeps the packages for the next run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/test-machine.sh
PYTEST_LOG="$(mktemp)"
finish() {
  local status=$?
  trap - EXIT INT TERM
  machine_restore
  [ -z "${VENV:-}" ] || echo "the modelvar command (modelvar plan, verify, config, …): source $VENV/bin/activate"
  # pytest's own count, last, after the clean-up's lines
  local counts
  counts="$(grep -E '^=+ .*(passed|failed|error).* in [0-9.]+s' "$PYTEST_LOG" | tail -1 || true)"
  if [ -n "$counts" ]; then
    local passed failed=0 skipped n
    passed=$(grep -oE '[0-9]+ passed' <<<"$counts" | cut -d' ' -f1 || true)
    for n in $(grep -oE '[0-9]+ (failed|errors?)' <<<"$counts" | cut -d' ' -f1 || true); do
      failed=$((failed + n))
    done
    skipped=$(grep -oE '[0-9]+ skipped' <<<"$counts" | cut -d' ' -f1 || true)
    echo "tests: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
  fi
  rm -f "$PYTEST_LOG"
  exit "$status"
}
machine_snapshot
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
bash scripts/setup-venv.sh
VENV="${MODELVAR_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export PATH="$VENV/bin:$PATH"
echo "== ruff" && ruff check src tests benchmarks scripts
echo "== snakefmt" && snakefmt --check Snakefile rules/
echo "== snakemake --lint" && snakemake --lint --configfile config/config.yaml
echo "== generated files" && python scripts/make_envs.py --check \
  && python scripts/make_cli_docs.py --check && python scripts/make_readme_plans.py --check
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
    echo "== model tests with OMP_NUM_THREADS=$threads"
    OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
      python -m pytest -q -p no:cacheprovider tests/test_mlp.py tests/test_models.py
  done
fi
echo "== pytest" && python -m pytest -n 2 "$@" 2>&1 | tee "$PYTEST_LOG"
