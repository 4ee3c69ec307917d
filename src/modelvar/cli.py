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
import functools
import logging
import os
import sys
from pathlib import Path

from modelvar import __version__, run_watch
from modelvar.jobs.common import add_ec_local
from modelvar.running.job_commands import ARGS_FROM, arguments_from_file


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


@functools.cache
def job_commands() -> dict[str, tuple[str, dict]]:
    """The workflow's job commands, ``name → (module, COMMAND)``: every module of
    :mod:`modelvar.jobs` that declares a ``COMMAND`` (its name, help line and description),
    read from the module's source without importing it (each job imports only its own)."""
    import ast

    import modelvar.jobs

    found = {}
    for path in sorted(Path(modelvar.jobs.__file__).parent.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] \
                    == ["COMMAND"]:
                command = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords}
                found[command["name"]] = (path.stem, command)
    return found


def _command_of(argv: list[str]) -> str | None:
    """The command a command line runs: its first word that is no option (nor the value of
    ``--log`` or ``--args-from``), as argparse finds the sub-command."""
    values = iter(argv)
    for word in values:
        if word in ("--log", ARGS_FROM):
            next(values, None)
        elif not word.startswith("-"):
            return word
    return None


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






def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``modelvar`` command's parser; with ``only``, of the workflow's jobs only that
    command's arguments (the others are listed, unparsed: a job imports no other job)."""
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
    add_ec_local(p)

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

    # ------------------------------------------- the workflow's jobs, each declared by its module
    for name, (module, command) in job_commands().items():
        p = _command(sub, name, command["help"], _job(module),
                     description=command.get("description"))
        if only is None or only == name:  # a job's own process imports no other job's module
            __import__(f"modelvar.jobs.{module}", fromlist=["add_arguments"]).add_arguments(p)
    return parser


def _fit_failed() -> type[Exception]:
    """The error of a fit that raised (:class:`modelvar.pipeline.fitting.FitFailed`), without
    importing the fit's libraries where it is not loaded."""
    module = sys.modules.get("modelvar.pipeline.fitting")
    return module.FitFailed if module is not None else _NeverRaised


class _NeverRaised(Exception):
    pass


def _named_error(exc: BaseException) -> bool:
    """An error class of modelvar's own (``DatasetError``, ``ConfigProblems``, ``PlanError``,
    ``MetricInputError`` …): each names the input at fault, so its message is the whole
    story."""
    return any(cls.__module__.split(".")[0] == "modelvar" for cls in type(exc).__mro__)




def _without_pandas(args: argparse.Namespace) -> bool:
    """Jobs that never need pandas: pyarrow imports it on its first array conversion if it can
    (a large share of a metrics job's start-up: docs/measurements/design-choices.md), so they
    hide it (issue 13). Only the fit
    jobs of classifiers whose spec says ``hides_pandas``: not the MLP's (torch asks
    ``importlib.util.find_spec("pandas")`` and would take a refusal for a broken installation;
    its own import dwarfs pandas'), nor a user's estimator (which may need pandas)."""
    if args.command != "fit":
        return args.command in ("pairwise", "grouped")
    from modelvar.models.registry import built_in_names, spec  # the fit job's own import

    return args.classifier in built_in_names() and spec(args.classifier).hides_pandas


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

    try:
        argv = arguments_from_file(sys.argv[1:] if argv is None else argv)
    except (OSError, ValueError) as exc:
        reason = _os_error(exc) if isinstance(exc, OSError) else str(exc)
        build_parser(only="").error(f"{ARGS_FROM}: {reason}")
    parser = build_parser(only=_command_of(argv))
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
        run_watch.watch(args.command)
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
    except (ValueError, OSError) as exc:
        # one line for the library's named errors (input a user can fix) and the file system's
        # refusals (a path under a file, no permission, disk full); a bare ValueError is no
        # such verdict (a bug, or a library's check): its traceback first, then the line
        if not (_named_error(exc) or isinstance(exc, OSError)):
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        detail = _os_error(exc) if isinstance(exc, OSError) else exc
        message = f"modelvar {args.command}: error: {detail}"
        print(message, file=sys.stderr)  # once; with --log, also in the log file
        if args.log:
            with open(args.log, "a") as fh:
                fh.write(message + "\n")
        return 2
