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
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
        return self.workdir / str(self.config.get("results_dir", "results"))


def resolve(argv: Sequence[str], *, snakefile_dir: str | Path | None = None) -> ResolvedConfig:
    """Resolve the config of a Snakemake command line ``argv`` (without the program name).

    ``snakefile_dir`` is where the default config lives (default: the directory of ``-s``/
    ``--snakefile`` if given, else the current directory, where Snakemake looks for the
    Snakefile).
    """
    from snakemake.cli import parse_args, parse_config
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        _, args = parse_args(list(argv))  # prints which profile it uses; not our output
    if snakefile_dir is None:
        snakefile_dir = Path(args.snakefile).parent if args.snakefile else Path.cwd()
    configfiles = tuple(Path(p) for p in (args.configfile or []))
    files = configfiles or (Path(snakefile_dir) / DEFAULT_CONFIGFILE,)
    config: dict = {}
    for path in files:
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        update_config(config, load_configfile(str(path)))
    update_config(config, parse_config(args.config or []))
    workdir = Path(args.directory) if args.directory else Path.cwd()
    executes = not any(getattr(args, name, None) for name in NON_EXECUTING_OPTIONS)
    return ResolvedConfig(config=config, configfiles=files, workdir=workdir, executes=executes)


def get_key(config: dict, dotted: str):
    """``config["a"]["b"]`` for ``"a.b"``; a missing key raises :class:`ConfigError`."""
    value = config
    for i, part in enumerate(dotted.split(".")):
        if not isinstance(value, dict) or part not in value:
            raise ConfigError(f"config has no key {'.'.join(dotted.split('.')[: i + 1])!r}")
        value = value[part]
    return value
