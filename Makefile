# Convenience targets; the README's two commands (scripts/run.sh, scripts/test.sh) need no make.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup run test bench bench-metrics bench-perturb bench-fit bench-simulation bench-dryrun \
	bench-storage bench-memory bench-startup bench-mlp bench-mlp-plain bench-tables bench-strength bench-plan bench-sgd bench-xgb-gpu bench-cost-model bench-cost-realistic bench-verdicts bench-sequential bench-sequential-replay bench-edits bench-default-study calibrate \
	first-hour
setup:
	bash scripts/setup-venv.sh
run:
	bash scripts/run.sh
test:
	bash scripts/test.sh
bench: bench-metrics bench-perturb bench-fit bench-simulation bench-dryrun bench-storage \
	bench-memory bench-startup bench-mlp bench-tables
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
bench-storage: setup
	$(PY) benchmarks/bench_storage.py
bench-memory: setup
	$(PY) benchmarks/bench_memory.py
bench-startup: setup
	$(PY) benchmarks/bench_startup.py
bench-mlp: setup
	$(PY) benchmarks/bench_mlp.py
# issue 67, item 4: the MLP's CPU fit against a plain PyTorch loop of the same network (≤ 1.1)
bench-mlp-plain: setup
	$(PY) benchmarks/bench_mlp_plain.py $(ARGS)
bench-tables: setup
	$(PY) benchmarks/bench_tables.py
bench-strength: setup
	$(PY) benchmarks/bench_strength.py
# the plan against a finished run (default: results/ of `bash scripts/run.sh`)
bench-plan: setup
	$(PY) benchmarks/bench_plan.py
# many-class SGD: per-fit speed-up against scikit-learn at 2 to 1,000 classes (issue 23)
bench-sgd: setup
	$(PY) benchmarks/bench_sgd.py
# xgb on one CPU core vs a GPU, per fit, on the full study's dearest shapes (issue 23; needs a
# CUDA-enabled xgboost and a GPU for its GPU side)
bench-xgb-gpu: setup
	$(PY) benchmarks/bench_xgb_gpu.py
# the shipped cost model against fits it was not fitted on, timed on this machine (issue 23: every
# one within 0.5-2x), then xgb's growth check: full fits of 10,000-40,000 rows x 355 classes, the
# model against each and a growth extrapolated from the smaller two (issue 50; ~25 minutes)
bench-cost-model: setup
	$(PY) benchmarks/calibrate_cost_model.py --held-out-only
# the plan's estimates against fits on noisy data and the embedded datasets, with and without
# its probe fits on the data (issue 55; about 10 CPU minutes, most of them xgb's)
bench-cost-realistic: setup
	$(PY) benchmarks/bench_cost_realistic.py
# the Findings' verdicts calibrated on simulated pages with a known truth: false-claim rates and
# power at 3-20 repeats, over datasets, and twins through the workflow (issues 53, 64; about
# four hours on two cores at the default sizes; --write updates docs/measurements/verdicts.md)
bench-verdicts: setup
	$(PY) benchmarks/bench_verdicts.py $(ARGS)
# sequential studies calibrated: false claims under optional stopping, repeats against the fixed
# design of equal power, futility's cost (issues 56, 68; 10-20 minutes on two cores at ARGS="--paths
# 10000 --pages 400 --findings-pages 20", more at the defaults; --write updates
# docs/measurements/sequential.md)
bench-sequential: setup
	$(PY) benchmarks/bench_sequential.py $(ARGS)
# a sequential study replayed on a fixed study's folder: its stops, claims and fitting CPU beside
# the fixed study's (issue 68; ARGS="RESULTS [--decide all]"; ~3 minutes on the default study)
bench-sequential-replay: setup
	$(PY) benchmarks/bench_sequential_replay.py $(ARGS)
# the edit catalogue (tests/edit_catalogue.py) on the default study: the dry run's jobs per rule
# after each edit (issue 54; ARGS="--tree OTHER_CHECKOUT" for another tree; ~8 minutes)
bench-edits: setup
	$(PY) benchmarks/bench_edits.py $(ARGS)
# the default study's CPU against another checkout (ARGS="--old DIR"), per block its fit jobs'
# CPU over their fitting CPU
bench-default-study: setup
	$(PY) benchmarks/bench_default_study.py $(ARGS)
# re-fit the shipped cost model on this machine (writes src/modelvar/planning/cost_model.json)
calibrate: setup
	$(PY) benchmarks/calibrate_cost_model.py --write
# a new user's first hour in a fresh clone of HEAD: the README's commands timed, what test.sh
# leaves behind (scripts/first-hour.sh; ~20 minutes)
first-hour:
	bash scripts/first-hour.sh
