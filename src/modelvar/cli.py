"""The ``modelvar`` command (also ``python -m modelvar``).

Commands for your own work (``metrics`` on your predictions, ``verify`` a results folder,
``config`` of a Snakemake command line, the offline ``datasets``), and the commands the
workflow's rules run, one per kind of job. ``modelvar --help`` lists them all and
``modelvar COMMAND --help`` explains every option with its default; ``docs/cli.md`` holds the same
text, generated from this parser (``python scripts/make_cli_docs.py``).

Errors in the input (bad files, labels, configs) are reported once, as ``modelvar COMMAND:
error: …``, with exit status 2 and no traceback; a traceback means a bug.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from pathlib import Path

from modelvar import __version__
from modelvar.running.job_commands import ARGS_FROM, arguments_from_file
from modelvar.study.figures import FORMATS as FIGURE_FORMATS


def _setup_logging(log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        handlers=handlers,
        force=True,
    )
    # Python warnings become one log line each (not a block with source code); the default
    # filters show each distinct warning once per place it comes from
    logging.captureWarnings(True)


def _job(module: str):
    """The entry point of a workflow job: ``modelvar.jobs.<module>.run``, imported when the job
    runs (:mod:`modelvar.jobs`)."""

    def run(args: argparse.Namespace) -> int:
        # an import statement's path (not importlib.import_module), so that Python's import
        # log (-X importtime) shows the job's module: tests/test_code_hash.py reads it
        job = __import__(f"modelvar.jobs.{module}", fromlist=["run"])
        return job.run(args)

    run.__name__ = f"job_{module}"
    return run


def cmd_datasets(args: argparse.Namespace) -> int:
    from modelvar.data import list_available

    print(list_available().to_string(index=False))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from modelvar.pipeline.metric_tables import TABLES, repeat_tables
    from modelvar.pipeline.user_predictions import check_paths, read_user_predictions
    from modelvar.table_files import write_tables

    out = Path(args.out)
    paths = {t: out if t == "pairwise" else out.with_name(f"{out.stem}.{t}{out.suffix}")
             for t in TABLES}
    check_paths(args.predictions, list(paths.values()))
    frame = read_user_predictions(args.predictions)
    tables = repeat_tables(frame, ec_local_undefined=args.ec_local_undefined)
    # all tables or none: a failure leaves an earlier set of these files as it was
    write_tables({path: tables[name] for name, path in paths.items()})
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from modelvar.planning.outputs import RULES
    from modelvar.table_files import STATE_DIR, verify

    root = Path(args.results_dir)
    if not (root / STATE_DIR).is_dir():
        raise ValueError(f"{root} holds no modelvar manifests ({root / STATE_DIR} is missing): "
                         "is it a results folder written by the workflow?")
    problems, checked = verify(root, quick=args.quick, rule_order=[r.name for r in RULES])
    print(f"checked {checked} files of {root}: {len(problems)} problem(s)")
    for problem in problems:
        print(f"\n{problem.path}: {problem.problem}"
              + (f" (written by rule {problem.rule})" if problem.rule else ""))
        if problem.command:
            print(f"  fix: {problem.command}")
    status = 1 if problems else 0
    if args.refit:
        from modelvar.pipeline.refit import format_refits, recorded_runs, refit_sample

        results = refit_sample(root, args.refit, seed=args.refit_seed)
        print(format_refits(results, len(recorded_runs(root)), args.refit_seed))
        status = status or int(not all(r.exact for r in results))
    return status


def cmd_unlock_stale(args: argparse.Namespace) -> int:
    from modelvar.running.workflow_config import resolve

    argv = _snakemake_argv(args)
    _unlock_stale(argv, resolve(argv))
    return 0


def _unlock_stale(argv: list[str], resolved) -> None:
    """Remove the Snakemake locks of a killed run in the command line's working directory
    (modelvar.running.run_lock), saying so."""
    from modelvar.running.run_lock import unlock_if_stale
    from modelvar.running.workflow_config import workflow_options

    message = unlock_if_stale(resolved.workdir, workflow_options(argv))
    if message:
        print(message, file=sys.stderr)


def _run_info(resolved) -> list[str]:
    """What scripts/run.sh needs after a run: the report's path and, for a sequential study
    (run in rounds), a second line 'sequential'."""
    lines = [str(resolved.results_dir.resolve() / "report.html")]
    if resolved.config.get("sequential", {}).get("enabled"):  # before the check
        lines.append("sequential")
    return lines


def cmd_before_run(args: argparse.Namespace) -> int:
    """scripts/run.sh's one helper before Snakemake: stale locks, the address-space check, and
    what the run will need afterwards; a command line that runs no job is Snakemake's own, run
    in this process (its start-up is the one this helper paid)."""
    from modelvar.running.workflow_config import resolve

    argv = _snakemake_argv(args)
    resolved = resolve(argv)
    _unlock_stale(argv, resolved)
    if not resolved.executes:  # a dry run, a listing, --lint, --unlock …: nothing to report
        from snakemake.cli import main

        main(argv)  # exits with Snakemake's status
        return 0
    status = _address_space_refusal(argv)
    if status:
        return status
    Path(args.info).write_text("\n".join(_run_info(resolved)) + "\n")
    return 0


def _address_space_refusal(argv: list[str]) -> int:
    """2 (after saying why) where the address-space limit in force would fail the run's jobs,
    checked before any job starts, and before any probe fit (a plan made without them); else
    0, after any warning."""
    from modelvar.running.address_space import address_space_limit

    if address_space_limit() is None:
        return 0
    from modelvar.running.address_space import address_space_check
    from modelvar.running.workflow_config import plan_of_command_line

    plan, config = plan_of_command_line(argv, probe_data=False)
    problem, _ = address_space_check(config, plan)
    if problem:
        print(f"modelvar: {problem}", file=sys.stderr)
        return 2
    return 0


def cmd_place_report(args: argparse.Namespace) -> int:
    from modelvar.table_files import move_file

    move_file(args.report, args.dest)
    return 0


def _snakemake_argv(args: argparse.Namespace) -> list[str]:
    argv = list(args.snakemake_args)
    return argv[1:] if argv[:1] == ["--"] else argv


def cmd_plan(args: argparse.Namespace) -> int:
    from modelvar.planning.plan_report import (
        calibrate_from_results,
        format_jobs,
        format_plan,
    )
    from modelvar.running.workflow_config import plan_of_command_line

    if args.calibrate:
        print(calibrate_from_results(args.calibrate, args.out))
        return 0
    plan, config = plan_of_command_line(_snakemake_argv(args))
    print(format_plan(plan, config, top=args.top))
    if args.jobs:
        print("\n" + format_jobs(plan, config))
    return 0


def cmd_sequential(args: argparse.Namespace) -> int:
    from modelvar.planning.rounds import ANOTHER_ROUND, next_round
    from modelvar.running.workflow_config import plan_of_command_line, resolve

    argv = _snakemake_argv(args)
    plan, config = plan_of_command_line(argv)
    if plan.schedule is None:
        return 0  # a study of fixed repeats: nothing to decide
    results = resolve(argv).results_dir
    decision = next_round(plan, config, results)
    print("\n".join(f"modelvar sequential: {line}" for line in decision.lines), file=sys.stderr)
    return ANOTHER_ROUND if decision.another else 0


def cmd_config(args: argparse.Namespace) -> int:
    import yaml

    from modelvar.running.workflow_config import get_key, resolve

    resolved = resolve(_snakemake_argv(args))
    if args.report_path:
        if resolved.executes:
            status = _address_space_refusal(_snakemake_argv(args))
            if status:
                return status
            print("\n".join(_run_info(resolved)))
        return 0
    if args.get == "results_dir":
        print(resolved.results_dir.resolve())
        return 0
    value = get_key(resolved.config, args.get) if args.get else resolved.config
    print(value if isinstance(value, str | int | float) else
          yaml.safe_dump(value, sort_keys=False).rstrip())
    return 0


# ----------------------------------------------------------------------------- the parser
class _Formatter(argparse.HelpFormatter):
    """Every option's default after its help, where it has one (not for required options,
    flags, or options whose absence means 'not given')."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (action.default not in (None, False, argparse.SUPPRESS) and action.option_strings
                and "%(default)" not in text):
            text += " (default: %(default)s)"
        return text


def _command(sub, name: str, help: str, func, *, description: str | None = None,
             parents=()) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help, description=description or help, parents=list(parents),
                       formatter_class=_Formatter)
    p.set_defaults(func=func)
    return p


def _ec_local(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ec-local-undefined", choices=("nan", "zero", "one"), default="nan",
                   help="value of local EC for a pair of runs of which neither errs")


def _classifier_name(value: str) -> str:
    from modelvar.models.registry import NAME_PATTERN

    if not re.fullmatch(NAME_PATTERN, value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a classifier's name "
                                         f"({NAME_PATTERN})")
    return value


def build_parser() -> argparse.ArgumentParser:
    from modelvar.models.registry import built_in_names
    from modelvar.simulation.class_distributions import DISTRIBUTIONS

    classifier_help = (f"the classifier: a built-in ({', '.join(built_in_names())}) or one the "
                       "config declares (its declaration comes in --settings)")
    parser = argparse.ArgumentParser(
        prog="modelvar", formatter_class=_Formatter,
        description="How much do classifiers vary when their training is perturbed, and how "
        "reproducible are their predictions? The Snakemake workflow runs the study; these "
        "commands are its jobs, plus tools for your own predictions and results.",
        epilog="`modelvar COMMAND --help` explains a command. The README shows the workflow.")
    parser.add_argument("--version", action="version", version=f"modelvar {__version__}")
    parser.add_argument("--log", metavar="FILE", help="also write the log to this file")
    parser.add_argument(ARGS_FROM, metavar="FILE",
                        help="as the first argument: the command's arguments are FILE's, each "
                        "ended by a NUL byte (then any after FILE), for the workflow's jobs "
                        "whose arguments name more files than a command line holds")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # the workflow passes --manifest to every command that writes tables (modelvar.table_files)
    recorded = argparse.ArgumentParser(add_help=False)
    recorded.add_argument("--manifest", metavar="PATH",
                          help="record every file written (path, size, sha256, rows) in this "
                          "JSON manifest, for `modelvar verify`")
    # the jobs that draw figures draw them at the config's figures.width
    drawn = argparse.ArgumentParser(add_help=False)
    drawn.add_argument("--width", required=True, type=_figure_width, metavar="WIDTH",
                       help="single or double (a journal's column width: 3.5 or 7.2 in), or "
                       "inches: the width the figures are drawn and printed at")
    drawn.add_argument("--colours", default="{}", metavar="JSON",
                       help="each classifier's colour, as JSON (the workflow's, from the "
                       "classifier registry); others get the palette's free colours")

    # -------------------------------------------------------------- for your own work
    p = _command(sub, "metrics", "reproducibility metrics of your own predictions", cmd_metrics,
                 description="Pairwise reproducibility metrics, per-repeat summaries, per-run, "
                 "agreement and per-sample tables of your own predictions: a long table (CSV "
                 "or parquet, optionally .csv.gz) with columns run, sample, y_true, y_pred, "
                 "optionally repeat and proba:<class>. docs/results.md explains every table.")
    p.add_argument("predictions", help="the long-format predictions file")
    p.add_argument("--out", required=True,
                   help="the pairwise table (.parquet or .csv); the summary, per_run, agreement "
                   "and per_sample tables go next to it (OUT.summary.parquet, …)")
    _ec_local(p)

    p = _command(sub, "verify", "check every table of a results folder against its manifests",
                 cmd_verify,
                 description="Check every table that the workflow's jobs wrote into RESULTS "
                 "against their manifests (present, size, row count, sha256), list stray "
                 "temporary files and unrecorded tables, and print for each bad table the "
                 "command that regenerates it. With --refit N, also fit N recorded runs "
                 "again, drawn at random, from their recorded seeds and hyperparameters, and "
                 "report how many reproduce their stored predictions exactly (and how far the "
                 "others are). Exit status 1 when a problem is found or a refit differs.")
    p.add_argument("results_dir", metavar="RESULTS", help="the study's results folder")
    p.add_argument("--quick", action="store_true",
                   help="skip the sha256 comparison (size and row counts are still checked)")
    p.add_argument("--refit", type=int, metavar="N", default=0,
                   help="refit N recorded runs drawn at random and compare them with their "
                   "stored predictions (0: none)")
    p.add_argument("--refit-seed", type=int, default=0,
                   help="seed of the random sample of runs to refit")

    p = _command(sub, "config", "the workflow config a Snakemake command line resolves to",
                 cmd_config,
                 description="Print the config that Snakemake would give the workflow for a "
                 "command line (config files merged in order, --config entries on top, profiles "
                 "applied), e.g. `modelvar config --get results_dir -- --configfile study.yaml`.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--get", metavar="KEY",
                      help="print one key (dotted, e.g. split.repeats); results_dir is printed "
                      "as an absolute path: the config's value taken relative to the current "
                      "directory (or --directory)")
    what.add_argument("--report-path", action="store_true",
                      help="print RESULTS_DIR/report.html if the command line runs jobs, "
                      "nothing for a dry run or another non-executing command; a second line "
                      "'sequential' for a sequential study (run in rounds)")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="Snakemake's arguments, after --")

    p = _command(sub, "plan", "the study's jobs, compute time, memory and storage, before it runs",
                 cmd_plan,
                 description="Print the plan of the study that a Snakemake command line would "
                 "run: jobs per rule; per dataset its shape, cells, fits, estimated CPU "
                 "core-hours and MLP hours, storage, the largest job memory and the longest "
                 "job; totals and the biggest items. Snakemake's options follow, e.g. `modelvar "
                 "plan --configfile config/full-study.yaml config/openml/seed-study.yaml`. With "
                 "--calibrate, fit the cost model to a finished run instead.")
    p.add_argument("--top", type=int, default=5, help="how many biggest items to list")
    p.add_argument("--jobs", action="store_true",
                   help="also list every fit and metrics job: dataset, classifier, job id, "
                   "cells, repeats, runs, fits, estimated time and memory")
    p.add_argument("--calibrate", metavar="RESULTS",
                   help="fit the cost model to this finished run's runs tables and write it to "
                   "--out (use it with the config key jobs.cost_model)")
    p.add_argument("--out", default="cost-model.json", help="where --calibrate writes")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="Snakemake's arguments (configfile, config, profile)")

    _command(sub, "datasets", "list the datasets available offline (embedded, scikit-learn)",
             cmd_datasets)

    p = _command(sub, "sequential", "decide a sequential study's next round (scripts/run.sh)",
                 cmd_sequential,
                 description="After a round of a sequential study (config `sequential`): read "
                 "its findings, give each dataset x classifier whose claims are still open "
                 "`sequential.step` more repeats (within `max_repeats` and the CPU budget) and "
                 "write RESULTS/sequential/rounds.json. Exit status 10: run the workflow again "
                 "for the next round; 0: nothing more to run (every block stopped, or not a "
                 "sequential study).")
    p.add_argument("step", choices=("next",), help="what to decide (the next round)")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="Snakemake's arguments (configfile, config, profile)")

    p = _command(sub, "before-run", "scripts/run.sh's checks before Snakemake starts",
                 cmd_before_run,
                 description="Remove stale Snakemake locks (as unlock-stale); if the command "
                 "line runs no job (a dry run, a listing, --lint …), run Snakemake with it in "
                 "this process and exit with its status; otherwise refuse a run the "
                 "address-space limit would fail (status 2) and write to --info the report's "
                 "path and, for a sequential study, a second line 'sequential'.")
    p.add_argument("--info", required=True, help="where to write what the run needs afterwards")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="Snakemake's arguments, after --")

    p = _command(sub, "unlock-stale", "remove Snakemake locks left by a killed run, when safe",
                 cmd_unlock_stale,
                 description="If the working directory of a Snakemake command line holds "
                 "Snakemake locks but no process of this workflow is alive there (a run was "
                 "killed), remove them with snakemake --unlock and say so; otherwise do nothing. "
                 "scripts/run.sh runs this before every run.")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="Snakemake's arguments, after --")

    p = _command(sub, "place-report", "move a report written elsewhere into place, atomically",
                 cmd_place_report,
                 description="Copy REPORT to DEST under a temporary name in DEST's folder, "
                 "then rename it over DEST, and remove REPORT: DEST is the whole new report or "
                 "the one it was before, never a truncated one; a full disk or a folder that "
                 "cannot be written is one line naming DEST. Refused before anything is written "
                 "or removed: DEST the same file as REPORT, a folder, or in a folder that does "
                 "not exist. scripts/run.sh has Snakemake "
                 "write the report to a temporary folder and places it with this.")
    p.add_argument("report", help="the report Snakemake wrote")
    p.add_argument("dest", help="where it goes (RESULTS_DIR/report.html)")

    # -------------------------------------------------------------- the workflow's jobs
    p = _command(sub, "prepare", "(job) write a canonical dataset: parquet + JSON metadata",
                 _job("prepare"), parents=[recorded])
    p.add_argument("--name", required=True, help="the dataset's name in the study")
    p.add_argument("--spec", required=True, help="the dataset's config entry as JSON")
    p.add_argument("--out-parquet", required=True, help="the canonical table to write")
    p.add_argument("--out-meta", required=True, help="its JSON metadata to write")
    p.add_argument("--openml-cache", default="resources/openml",
                   help="download cache for OpenML datasets")
    p.add_argument("--openml-server", default=None,
                   help="OpenML API URL (default: https://www.openml.org/api/v1/xml)")
    p.add_argument("--openml-timeout", type=float, default=60.0,
                   help="seconds to wait for any answer of the OpenML server")
    p.add_argument("--min-class-size", type=int, default=2,
                   help="the smallest class the split needs")
    p.add_argument("--rare-classes", choices=("stop", "keep"), default="stop",
                   help="a smaller class stops here (stop) or is kept, never tested (keep)")

    p = _command(sub, "fit", "(job) fit the runs of several repeats of perturbation cells",
                 _job("fit"), parents=[recorded])
    p.add_argument("--data", required=True, help="canonical dataset (parquet)")
    p.add_argument("--meta", required=True, help="its JSON metadata")
    p.add_argument("--classifier", required=True, type=_classifier_name, help=classifier_help)
    p.add_argument("--cells", nargs="+", required=True,
                   help="perturbation cell ids (modelvar.study.cells)")
    p.add_argument("--repeats", type=int, nargs="+", required=True, help="repeat indices")
    p.add_argument("--runs", type=int, required=True, help="runs per repeat")
    p.add_argument("--run-block", type=int, nargs=2, metavar=("START", "STOP"),
                   help="fit only runs START to STOP - 1 of each repeat (default: all)")
    p.add_argument("--test-fraction", type=float, required=True,
                   help="fraction of rows in each repeat's test set")
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--probabilities", choices=("dense", "compact", "none"), default="dense",
                   help="store every class's probability, or the per-sample statistics the "
                   "probabilistic metrics need (modelvar.pipeline.predictions)")
    p.add_argument("--predictions", required=True, help="the predictions file to write")
    p.add_argument("--runs-out", required=True, help="the runs table to write")
    p.add_argument("--hparams", help="tuned hyperparameters (best.json of the tune command)")
    p.add_argument("--settings", help='classifier settings as JSON: {"hparams": {...} '
                   '(override the defaults or tuned values), "epochs": N (classifiers that '
                   'train for epochs), "declared": {...} (a declared classifier\'s declaration)}')
    p.add_argument("--threads", type=int, default=1, help="threads of the classifier")
    p.add_argument("--progress-seconds", type=float, default=30.0,
                   help="log progress (runs done, ETA) at most this often")
    p.add_argument("--warn-changed-below", type=float,
                   help="warn when a data perturbation changes a smaller share of the numeric "
                   "training cells (default: $MODELVAR_WARN_CHANGED_BELOW, which the workflow "
                   "sets from perturbation.warn_changed_below, else 0.5)")

    p = _command(sub, "tune", "(job) random-search tuning of one classifier on one dataset",
                 _job("tune"), parents=[recorded])
    p.add_argument("--data", required=True, help="canonical dataset (parquet)")
    p.add_argument("--meta", required=True, help="its JSON metadata")
    p.add_argument("--classifier", required=True, type=_classifier_name, help=classifier_help)
    p.add_argument("--settings", help='a declared classifier\'s declaration as JSON: '
                   '{"declared": {...}} (modelvar.models.user), and "gpu" and "epochs" where '
                   'the config sets them')
    p.add_argument("--trials", type=int, required=True,
                   help="random-search trials (trial 0 = the defaults)")
    p.add_argument("--folds", type=int, default=3, help="stratified cross-validation folds")
    p.add_argument("--test-fraction", type=float, required=True,
                   help="fraction of rows set aside by the tuning split")
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--threads", type=int, default=1, help="threads of the classifier")
    p.add_argument("--trials-out", required=True, help="the table of all trials to write")
    p.add_argument("--best-out", required=True, help="the best trial's JSON to write")

    job = argparse.ArgumentParser(add_help=False)
    job.add_argument("--predictions", nargs="+", required=True,
                     help="the prediction files of the job's fit jobs")
    job.add_argument("--meta", required=True, help="the dataset's JSON metadata")
    job.add_argument("--results", required=True, help="the study's results folder")
    job.add_argument("--dataset", required=True, help="the dataset")
    job.add_argument("--classifier", required=True, type=_classifier_name,
                     help="the classifier")
    job.add_argument("--job", required=True, help="the metrics job's id (names its tables)")

    p = _command(sub, "pairwise", "(job) metric tables of a group of fit jobs' predictions",
                 _job("pairwise"), parents=[recorded, job],
                 description="Read the predictions one repeat at a time and write the "
                 "pairwise, summary, per_run, agreement and per_sample tables to "
                 "RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet.")
    _ec_local(p)

    p = _command(sub, "grouped", "(job) metrics and reproducibility by group, per repeat",
                 _job("grouped"), parents=[recorded, job],
                 description="Read the predictions one repeat at a time and write the grouped "
                 "and disparities tables to RESULTS/aggregated/TABLE/dataset=D/classifier=K/"
                 "JOB.parquet.")
    p.add_argument("--data", required=True, help="canonical dataset parquet (grouping columns)")
    p.add_argument("--groupings", required=True,
                   help='JSON list: column names, "@class", or lists of them (intersections)')
    p.add_argument("--metrics", nargs="+", default=["ec_global", "pa"],
                   help="pairwise metrics computed by group")
    _ec_local(p)

    p = _command(sub, "figures", "(job) the figure set of one dataset", _job("figures"),
                 parents=[recorded, drawn])
    p.add_argument("--dataset", required=True, help="the dataset")
    for name in ("summary", "agreement", "runs"):
        p.add_argument(f"--{name}", nargs="+", metavar="TABLE",
                       help=f"the dataset's {name} tables")
    p.add_argument("--disparities", nargs="+", metavar="TABLE",
                   help="the dataset's disparities tables; without --figures, draw only the "
                   "group-disparity figure")
    p.add_argument("--design-file", required=True,
                   help="the dataset's design (the design job's file: each classifier's cells "
                   "and their roles)")
    p.add_argument("--design", choices=("factorial", "one-at-a-time", "both"), default="both",
                   help="the config's design")
    p.add_argument("--figures", nargs="+", metavar="NAME",
                   help="draw only these (default: every figure the design has cells for)")
    p.add_argument("--out-dir", required=True, help="where the figures go")
    p.add_argument("--formats", nargs="+", default=list(FIGURE_FORMATS),
                   help="file formats (the picture first)")

    p = _command(sub, "findings", "(job) the study's findings from its aggregated tables",
                 _job("findings"), parents=[recorded, drawn],
                 description="Sources of variance (each source alone against the control), "
                 "variance components over the factorial grid, seed 004's claims checked, "
                 "the report's Findings page and each dataset's summary page, from the "
                 "summary, agreement and runs tables (never the predictions).")
    for name in ("summary", "agreement", "runs"):
        p.add_argument(f"--{name}", nargs="+", required=True, metavar="TABLE",
                       help=f"every {name} table of the study")
    p.add_argument("--meta", nargs="+", required=True, help="every dataset's JSON metadata")
    p.add_argument("--design-files", nargs="+", required=True,
                   help="every dataset's design (the design jobs' files)")
    p.add_argument("--perturbation", required=True,
                   help="the config's perturbation section as JSON (which figures are drawn)")
    p.add_argument("--design", choices=("factorial", "one-at-a-time", "both"), default="both",
                   help="the config's design")
    p.add_argument("--warn-changed-below", type=float, required=True,
                   help="share of changed cells below which a data perturbation is too weak to "
                   "judge its source (the config's perturbation.warn_changed_below)")
    p.add_argument("--equivalence-ratio", type=float, required=True,
                   help="the equivalence margin of a ratio of two measures (the config's "
                   "findings.equivalence_ratio)")
    p.add_argument("--sequential", default="",
                   help="a sequential study's looks and state as JSON (the workflow's, from "
                   "its rounds file); empty for fixed repeats")
    p.add_argument("--results", required=True, help="the study's results folder")

    p = _command(sub, "design", "(job) one dataset's design, as the plan fits it",
                 _job("design"), parents=[recorded],
                 description="Write one dataset's design (per classifier: its cells, each "
                 "cell's roles, the families collapsed for it), decided by the plan, to the file "
                 "the figures and findings jobs read.")
    p.add_argument("--design", required=True,
                   help="the dataset's design as JSON (modelvar.study.design.DatasetDesign)")
    p.add_argument("--out", required=True, help="JSON file to write")

    p = _command(sub, "dataset-overview", "(job) the report's page of the study's datasets",
                 _job("dataset_overview"), parents=[recorded])
    p.add_argument("--meta", nargs="+", required=True, help="prepared datasets' JSON metadata")
    p.add_argument("--out", required=True, help="HTML file to write")

    p = _command(sub, "simulate", "(job) simulated runs for the metric study (seed 000)",
                 _job("simulate"), parents=[recorded])
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--n-classes", type=int, required=True, help="number of classes")
    p.add_argument("--distributions", nargs="+", choices=DISTRIBUTIONS,
                   default=list(DISTRIBUTIONS), help="class-distribution types")
    p.add_argument("--replicates", type=int, default=10, help="simulations per design point")
    p.add_argument("--n-samples", type=int, default=500, help="test samples per simulation")
    p.add_argument("--runs", type=int, default=10, help="runs per simulation")
    p.add_argument("--out", required=True, help="the simulations table to write")

    p = _command(sub, "evaluate-simulation",
                 "(job) score every pairwise metric on the seed's criteria (seed 000)",
                 _job("evaluate_simulation"), parents=[recorded, drawn])
    p.add_argument("--sims", nargs="+", required=True, help="tables of the simulate command")
    p.add_argument("--out-dir", required=True, help="where the tables and figures go")

    p = _command(sub, "dirichlet", "(job) Dirichlet probability simulation (seed 002)",
                 _job("dirichlet"), parents=[recorded, drawn])
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--n", type=int, default=1000, help="samples per case")
    p.add_argument("--cases", required=True, help='JSON {"case name": [alpha, ...]}')
    p.add_argument("--out-dir", required=True, help="where the tables and figures go")
    return parser


def _fit_failed() -> type[Exception]:
    """The error of a fit that raised (:class:`modelvar.pipeline.fitting.FitFailed`), without
    importing the fit's libraries where it is not loaded."""
    module = sys.modules.get("modelvar.pipeline.fitting")
    return module.FitFailed if module is not None else _NeverRaised


class _NeverRaised(Exception):
    pass


def _figure_width(value: str) -> str | float:
    """``single``, ``double`` or a number of inches."""
    if value in ("single", "double"):
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r}: single, double or a width in inches") from None


def _without_pandas(args: argparse.Namespace) -> bool:
    """Jobs that never need pandas: pyarrow imports it on its first array conversion if it can
    (a large share of a metrics job's start-up: docs/measurements/design-choices.md), so they
    hide it (issue 13). Only the fit
    jobs of classifiers whose spec says ``hides_pandas``: not the MLP's (torch asks
    ``importlib.util.find_spec("pandas")`` and would take a refusal for a broken installation;
    its own import dwarfs pandas'), nor a user's estimator (which may need pandas)."""
    from modelvar.models.registry import built_in_names, spec

    return args.command in ("pairwise", "grouped") or (
        args.command == "fit" and args.classifier in built_in_names()
        and spec(args.classifier).hides_pandas)


class _Unused:
    """A meta-path finder that refuses the named top-level modules: optional imports of them
    (pyarrow's pandas shim, xgboost's compat module) take their fallback instead."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"{name} is not used by this job", name=name)
        return None


@contextlib.contextmanager
def _without(names):
    finder = _Unused([n for n in names if n not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def _os_error(exc: OSError) -> str:
    """An OSError as one line naming the path(s): ``PATH: Not a directory``."""
    from modelvar.table_files import WriteFailed

    if isinstance(exc, WriteFailed):  # names its file and cause itself
        return exc.strerror
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileExistsError | NotADirectoryError) and paths:
        # mkdir of a folder where a file is (``--out afile/x.parquet``)
        file = next((p for p in [Path(paths[0]), *Path(paths[0]).parents] if p.is_file()), None)
        if file is not None:
            return f"{file} is a file, so nothing can be written under it"
    return f"{' -> '.join(paths)}: {reason}" if paths else reason


def main(argv: list[str] | None = None) -> int:
    from modelvar.data.errors import DatasetError
    from modelvar.metrics.errors import MetricInputError
    from modelvar.table_files import TableReadError

    parser = build_parser()
    try:
        argv = arguments_from_file(sys.argv[1:] if argv is None else argv)
    except (OSError, ValueError) as exc:
        reason = _os_error(exc) if isinstance(exc, OSError) else str(exc)
        parser.error(f"{ARGS_FROM}: {reason}")
    args, unknown = parser.parse_known_args(argv)
    if args.args_from is not None:
        parser.error(f"{ARGS_FROM} must be the first argument")
    if unknown:  # Snakemake's options of the commands that take a Snakemake command line
        if not hasattr(args, "snakemake_args"):
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        args.snakemake_args = [*unknown, *args.snakemake_args]
    try:
        _setup_logging(args.log)
    except OSError as exc:
        print(f"modelvar: error: --log {args.log}: cannot be written ({_os_error(exc)})",
              file=sys.stderr)
        return 2
    lean = _without(["pandas"]) if _without_pandas(args) else contextlib.nullcontext()
    if getattr(args.func, "__name__", "").startswith("job_"):  # a workflow job: no orphans
        from modelvar.run_watch import watch

        watch(args.command)
    try:
        with lean:
            return args.func(args)
    except ModuleNotFoundError as exc:  # a light install: name the extra it needs
        from modelvar.extras import extra_for_module, missing_module_message

        if extra_for_module(exc.name or "") is None:
            raise
        print(missing_module_message(args.command, exc), file=sys.stderr)
        return 2
    except _fit_failed() as exc:  # a classifier's fit raised: its traceback, then one line
        import traceback

        traceback.print_exception(exc.__cause__ or exc, file=sys.stderr)
        print(f"modelvar {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or the run that started this job ended (run_watch)
        return 130
    except MemoryError:
        print(f"modelvar {args.command}: error: out of memory (MemoryError); a job's memory is "
              "its resources.*.mem_mb (and any `ulimit -v` of the shell that started it)",
              file=sys.stderr)
        return 2
    except RuntimeError as exc:
        if "can't start new thread" not in str(exc):
            raise
        print(f"modelvar {args.command}: error: out of memory for a new thread ({exc}); "
              "a `ulimit -v` below what threads and libraries reserve stops jobs this way",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # `modelvar verify | head`: the reader left; so do we, quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes stdout
        return 141  # as a command killed by SIGPIPE
    except (DatasetError, MetricInputError, TableReadError, ValueError, OSError) as exc:
        # OSError: the file system refused (a path under a file, no permission, disk full)
        detail = _os_error(exc) if isinstance(exc, OSError) else exc
        message = f"modelvar {args.command}: error: {detail}"
        print(message, file=sys.stderr)  # once; with --log, also in the log file
        if args.log:
            with open(args.log, "a") as fh:
                fh.write(message + "\n")
        return 2
