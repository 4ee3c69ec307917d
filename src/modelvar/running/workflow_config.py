"""The workflow config that a Snakemake command line resolves to, resolved the way Snakemake does.

``scripts/run.sh`` and ``modelvar config`` need to know, before or after Snakemake runs, what
config a command line such as ``--configfile study.yaml extra.yaml --config results_dir=out``
gives the workflow (for instance where ``results_dir`` is, to write the report there). Rather
than re-implementing Snakemake's rules, this module calls Snakemake's own pieces:

* ``snakemake.cli.parse_args``: the command line, including ``--workflow-profile``/``--profile``
  settings (a profile may set ``configfile`` or ``config`` too);
* ``snakemake.common.configfile.load_configfile`` and ``snakemake.utils.update_config``: each
  config file, merged recursively in the order given (later files win key by key);
* ``snakemake.cli.parse_config``: ``--config KEY=VALUE`` entries, applied last.

When no config file is given, the workflow reads its default ``config/config.yaml`` next to the
Snakefile (the root ``Snakefile`` does the same), and ``--config`` entries still apply on top.
Relative paths in the config (``results_dir``) are relative to the working directory,
``--directory`` when given.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from modelvar.planning.config_check import safe_yaml_loader
from modelvar.table_files import INVOCATION_FILE, STATE_DIR, write_text

if TYPE_CHECKING:
    from modelvar.planning.plan import StudyPlan

DEFAULT_CONFIGFILE = Path("config") / "config.yaml"

#: Snakemake options that make a command line do something other than run jobs (listings, graphs,
#: lint, reports, unlock, touch, clean-ups, …): after such a command there is no run to report.
NON_EXECUTING_OPTIONS = (
    "dryrun", "report", "lint", "list_rules", "list_target_rules", "dag", "rulegraph", "filegraph",
    "d3dag", "summary", "detailed_summary", "archive", "cleanup_metadata", "cleanup_shadow",
    "unlock", "list_changes", "list_input_changes", "list_params_changes", "list_untracked",
    "delete_all_output", "delete_temp_output", "touch", "generate_unit_tests", "containerize",
    "export_cwl", "print_compilation", "conda_create_envs_only", "conda_cleanup_envs",
    "list_conda_envs", "debug_dag",
)


class ConfigError(ValueError):
    """A config file is missing, or a key asked for is not in the config."""


@dataclass(frozen=True)
class ResolvedConfig:
    """What a Snakemake command line gives the workflow."""

    config: dict
    configfiles: tuple[Path, ...]
    workdir: Path
    executes: bool

    @property
    def results_dir(self) -> Path:
        """``results_dir`` of the merged config, relative to the working directory."""
        return self.workdir / str(self.config.get("results_dir", "results"))  # before the check


#: the most values a config file may expand to (YAML aliases repeat what an anchor holds)
MAX_CONFIG_VALUES = 100_000


def check_config_file(path: str | Path) -> None:
    """Read a config file safely before Snakemake does, and refuse, in one line naming the
    file: YAML it cannot parse (a tab, an unknown ``!!python`` tag), a top level that is not a
    mapping, a key given twice at one level (YAML keeps the last silently), Snakemake's config
    templating (``__use_yte__: true`` evaluates expressions in the file: code), and aliases that
    expand to more than :data:`MAX_CONFIG_VALUES` values."""
    import yaml

    class Loader(safe_yaml_loader()):
        pass

    def mapping(loader, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(f"config file {path}: key {key!r} is given twice (line "
                                  f"{key_node.start_mark.line + 1}); YAML would keep the last "
                                  "silently")
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    text = Path(path).read_text()
    try:
        data = yaml.load(text, Loader=Loader)  # a safe loader: no code runs
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: "
                          f"{' '.join(str(exc).split())}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys (results_dir: …, "
                          f"datasets: …), not a {type(data).__name__}")
    if "__use_yte__" in data:
        raise ConfigError(f"config file {path} asks for templating (__use_yte__), which "
                          "evaluates the file's expressions as code; modelvar configs are plain "
                          "YAML: remove the key")
    budget = [MAX_CONFIG_VALUES]

    def count(value) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise ConfigError(f"config file {path} expands to more than "
                              f"{MAX_CONFIG_VALUES:,} values (YAML anchors and aliases?)")
        if isinstance(value, dict):
            for item in value.values():
                count(item)
        elif isinstance(value, list):
            for item in value:
                count(item)

    count(data)


def resolve(argv: Sequence[str], *, snakefile_dir: str | Path | None = None) -> ResolvedConfig:
    """Resolve the config of a Snakemake command line ``argv`` (without the program name).

    ``snakefile_dir`` is where the default config lives (default: the directory of ``-s``/
    ``--snakefile`` if given — the one above it for ``workflow/Snakefile`` —, else the current
    directory, where Snakemake looks for the Snakefile).
    """
    from snakemake.cli import parse_config
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    args = _parsed(argv)
    if snakefile_dir is None:
        snakefile_dir = Path(args.snakefile).parent if args.snakefile else Path.cwd()
        if Path(snakefile_dir).name == "workflow":  # workflow/Snakefile reads ../config
            snakefile_dir = Path(snakefile_dir).parent
    configfiles = tuple(Path(p) for p in (args.configfile or []))
    files = configfiles or (Path(snakefile_dir) / DEFAULT_CONFIGFILE,)
    config: dict = {}
    for path in files:
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        check_config_file(path)
        update_config(config, load_configfile(str(path)))
    dotted = [entry for entry in args.config or []
              if "." in entry.split("=", 1)[0] and "=" in entry]
    if dotted:
        raise ConfigError(
            f"--config {dotted[0]}: --config sets top-level keys only (Snakemake reads no "
            "dotted key); put a nested key in a small file of your own given last, e.g. "
            f"--configfile YOUR_CONFIG more.yaml with more.yaml holding "
            f"{_nested_yaml(dotted[0])} (README, \"Set up and run\")")
    update_config(config, parse_config(args.config or []))
    workdir = Path(args.directory) if args.directory else Path.cwd()
    return ResolvedConfig(config=config, configfiles=files, workdir=workdir,
                          executes=_executes(args))


def _nested_yaml(entry: str) -> str:
    """``a.b=4`` as the flow-style YAML of the nested key, ``{a: {b: 4}}``."""
    key, value = entry.split("=", 1)
    text = value
    for part in reversed(key.split(".")):
        text = f"{{{part}: {text}}}"
    return text


def _parsed(argv: Sequence[str]):
    """Snakemake's own reading of a command line ``argv`` (its options namespace; read once
    per process, command line and working directory — a default profile is found from it —
    and only read)."""
    import os

    return _parsed_once(tuple(argv), os.getcwd())


@functools.lru_cache(maxsize=4)
def _parsed_once(argv: tuple[str, ...], cwd: str):
    from snakemake.cli import parse_args
    from snakemake.exceptions import CliException

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            _, args = parse_args(list(argv))  # prints which profile it uses; not our output
    except SystemExit as exc:  # Snakemake's parser exits on a bad command line or profile
        raise ConfigError(f"snakemake cannot parse {list(argv)}: {err.getvalue().strip()}") \
            from exc
    except CliException as exc:  # a value it checks after parsing (--cores abc)
        raise ConfigError(f"snakemake cannot parse {list(argv)}: {exc}") from exc
    return args


def _executes(args) -> bool:
    """No option of :data:`NON_EXECUTING_OPTIONS` set; ``--report`` with
    ``--report-after-run`` (what ``scripts/run.sh`` passes) runs the jobs first, then reports."""
    after_run = bool(getattr(args, "report_after_run", False))
    return not any(getattr(args, name, None) for name in NON_EXECUTING_OPTIONS
                   if not (name == "report" and after_run))


def executes_jobs(argv: Sequence[str]) -> bool:
    """Whether the Snakemake command line ``argv`` runs jobs (not a dry run, listing, lint, …,
    :data:`NON_EXECUTING_OPTIONS`); False where Snakemake cannot parse it (the workflow used
    through Snakemake's API: nothing is assumed)."""
    try:
        return _executes(_parsed(argv))
    except ConfigError:
        return False


#: Snakemake options whose command reads the rules without building the jobs (no input function
#: runs): the workflow's load writes nothing for them (issue 69)
PARSE_ONLY_OPTIONS = ("lint", "list_rules", "list_target_rules", "print_compilation")


def parses_only(argv: Sequence[str]) -> bool:
    """Whether the Snakemake command line ``argv`` only reads the rules (a lint, a listing of
    rules: :data:`PARSE_ONLY_OPTIONS`); False where Snakemake cannot parse it."""
    try:
        args = _parsed(argv)
    except ConfigError:
        return False
    return any(getattr(args, name, None) for name in PARSE_ONLY_OPTIONS)


def slurm_arrays(argv: Sequence[str]) -> tuple[str | None, int | None] | None:
    """The ``--slurm-array-jobs`` and ``--slurm-array-limit`` of a command line (its profile's
    included) that runs on the SLURM executor; None for another executor, or where Snakemake
    cannot parse it."""
    try:
        args = _parsed(argv)
    except ConfigError:
        return None
    if getattr(args, "executor", None) != "slurm":
        return None
    limit = getattr(args, "slurm_array_limit", None)
    arrays = getattr(args, "slurm_array_jobs", None)  # unset: the plugin's MISSING sentinel
    return (arrays if isinstance(arrays, str) else None,
            limit if isinstance(limit, int) else None)


def get_key(config: dict, dotted: str):
    """``config["a"]["b"]`` for ``"a.b"``; a missing key raises :class:`ConfigError`."""
    value = config
    for i, part in enumerate(dotted.split(".")):
        if not isinstance(value, dict) or part not in value:
            raise ConfigError(f"config has no key {'.'.join(dotted.split('.')[: i + 1])!r}")
        value = value[part]
    return value


def workflow_options(argv: Sequence[str]) -> list[str]:
    """The options of a Snakemake command line that choose the workflow, working directory,
    profiles and config (not targets, not one-off flags), as given (profiles not applied)."""
    from snakemake.cli import get_argument_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            args, _ = get_argument_parser().parse_known_args(list(argv))
    except SystemExit as exc:
        raise ConfigError(f"snakemake cannot parse {list(argv)}: {err.getvalue().strip()}") \
            from exc
    out: list[str] = []
    if args.snakefile:
        out += ["-s", str(args.snakefile)]
    if args.directory:
        out += ["--directory", str(args.directory)]
    if getattr(args, "workflow_profile", None) not in (None, "none"):
        out += ["--workflow-profile", str(args.workflow_profile)]
    if getattr(args, "profile", None):
        out += ["--profile", str(args.profile)]
    if args.configfile:
        out += ["--configfile", *map(str, args.configfile)]
    if args.config:
        out += ["--config", *args.config]
    return out


def record_invocation(results_dir: str | Path, argv: Sequence[str], *,
                      working_dir: str | Path, snakefile: str | Path,
                      configfiles: Sequence[str | Path]) -> Path:
    """Write ``RESULTS/.modelvar/invocation.json``: the working directory and the Snakemake
    options that select the workflow, profile and config, every path absolute (the workflow's
    onstart calls it with Snakemake's resolved snakefile and config files;
    :func:`modelvar.table_files.regenerate_command` reads it)."""
    workdir, snakefile = Path(working_dir).resolve(), Path(snakefile).resolve()
    options = workflow_options(argv)
    out = ["-s", str(snakefile), "--directory", str(workdir)]
    i = 0
    while i < len(options):
        name = options[i]
        if name in ("-s", "--directory"):
            i += 2
        elif name in ("--workflow-profile", "--profile"):
            value = Path(options[i + 1])
            for base in (snakefile.parent, workdir):  # where Snakemake looks for profiles/NAME
                if not value.is_absolute() and (base / value).exists():
                    value = base / value
                    break
            out += [name, str(value)]
            i += 2
        elif name == "--configfile":
            out += ["--configfile", *(str(Path(p).resolve()) for p in configfiles)]
            i += 1
            while i < len(options) and not options[i].startswith("-"):
                i += 1
        else:  # --config KEY=VALUE …
            out.append(name)
            i += 1
    body = {"cwd": str(workdir), "results_dir": str(Path(results_dir).resolve()),
            # as the config names it: the rules' paths are absolute where it is
            "results_dir_absolute": Path(results_dir).is_absolute(), "options": out}
    return write_text(json.dumps(body, indent=1) + "\n",
                      Path(results_dir) / STATE_DIR / INVOCATION_FILE)


def plan_of_command_line(argv: list[str], *, probe_data: bool = True,
                         cached_probes: bool = True) -> tuple[StudyPlan, dict]:
    """The plan of the study a Snakemake command line runs: its config resolved as Snakemake
    does (:mod:`modelvar.running.workflow_config`), checked and completed with the schema's
    defaults as the workflow does, then planned (``probe_data`` False: without probe fits,
    cached probes only, :func:`modelvar.planning.plan.plan_study`; ``cached_probes`` False as
    well: the cost model alone and no recorded batches of repeats, as in a results folder that
    was never run, on a machine that never probed)."""
    import modelvar
    from modelvar.planning.config_check import check_config, read_schema
    from modelvar.planning.plan import plan_study

    workflow_dir = Path(modelvar.__file__).resolve().parents[2]
    resolved = resolve(argv, snakefile_dir=None)
    schema_path = workflow_dir / "workflow" / "schemas" / "config.schema.yaml"
    if not schema_path.is_file():
        raise FileNotFoundError(f"{schema_path}: the workflow's config schema is missing (run "
                                "modelvar plan from a checkout of the modelvar repository)")
    config = resolved.config
    schema = read_schema(schema_path)
    study = check_config(config, schema)
    return plan_study(config, study.schemas, probes=probe_data and cached_probes,
                      from_results=cached_probes), config
