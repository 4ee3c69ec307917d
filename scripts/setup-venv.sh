#!/usr/bin/env bash
# Create the virtual environment (if missing) and install modelvar with the tested versions.
# Re-installs only when pyproject.toml or constraints.txt changed since the last install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${MODELVAR_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "modelvar needs Python >= 3.11; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
  exit 1
fi
# A venv whose creation was interrupted has a python but no pip: make it again
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  if [ -e "$VENV" ]; then
    echo "recreating virtual environment $VENV (an earlier setup did not finish)" >&2
  else
    echo "creating virtual environment $VENV" >&2
  fi
  "$PYTHON" -m venv --clear "$VENV"
  rm -f "$VENV/.modelvar-install-stamp"
fi
stamp="$VENV/.modelvar-install-stamp"
want="$(cat pyproject.toml constraints.txt "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "installing modelvar and its tested dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    -c constraints.txt -e ".[all,dev]" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  # irrCAC is a test-only oracle for Gwet's AC1. It pins scipy==1.12 and pandas<3, which would
  # downgrade the stack, but its code runs on the tested versions: install it without its pins.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    irrCAC==0.4.4 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  echo "$want" > "$stamp"
fi
# The many-class SGD classifiers' numba kernels, compiled once into numba's cache (beside their
# source, or NUMBA_CACHE_DIR), so that no fit job compiles them (modelvar.models.kernel_cache);
# again when their source or the install changes.
kernel_stamp="$VENV/.modelvar-kernels-stamp"
kernels="$(cat "$stamp" src/modelvar/models/ovr_sgd.py src/modelvar/models/ovr_sgd_kernels.py \
  <(printf '%s' "${NUMBA_CACHE_DIR:-}") | sha256sum | cut -d' ' -f1)"
cached=(src/modelvar/models/__pycache__/ovr_sgd_kernels.*.nbi)
if [ ! -f "$kernel_stamp" ] || [ "$(cat "$kernel_stamp")" != "$kernels" ] ||
  { [ -z "${NUMBA_CACHE_DIR:-}" ] && [ ! -e "${cached[0]}" ]; }; then
  "$VENV/bin/python" -m modelvar.models.kernel_cache >&2
  echo "$kernels" > "$kernel_stamp"
fi
