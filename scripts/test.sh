#!/usr/bin/env bash
# Set up (if needed) and run the checks: ruff, snakemake --lint, then the test suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-venv.sh
VENV="${MODELVAR_VENV:-.venv}"
export PATH="$PWD/$VENV/bin:$PATH"
echo "== ruff" && ruff check src tests benchmarks
echo "== snakemake --lint" && snakemake --lint --configfile config/config.yaml
echo "== pytest" && python -m pytest -n 2 "$@"
