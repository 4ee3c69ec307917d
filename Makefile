# Convenience targets; the README's two commands (scripts/run.sh, scripts/test.sh) need no make.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup run test bench bench-metrics bench-perturb
setup:
	bash scripts/setup-venv.sh
run:
	bash scripts/run.sh
test:
	bash scripts/test.sh
bench: bench-metrics bench-perturb
bench-metrics: setup
	$(PY) benchmarks/bench_metrics.py
bench-perturb: setup
	$(PY) benchmarks/bench_perturb.py
