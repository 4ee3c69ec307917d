# Convenience targets; the README's two commands (scripts/run.sh, scripts/test.sh) need no make.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup run test bench bench-metrics bench-perturb bench-fit bench-simulation bench-dryrun
setup:
	bash scripts/setup-venv.sh
run:
	bash scripts/run.sh
test:
	bash scripts/test.sh
bench: bench-metrics bench-perturb bench-fit bench-simulation bench-dryrun
bench-metrics: setup
	$(PY) benchmarks/bench_metrics.py
bench-perturb: setup
	$(PY) benchmarks/bench_perturb.py
bench-fit: setup
	$(PY) benchmarks/bench_fit_overhead.py
bench-simulation: setup
	$(PY) benchmarks/bench_simulation.py
bench-dryrun: setup
	$(PY) benchmarks/bench_dryrun.py
