"""Write the `modelvar plan` output of the shipped configs into README.md, between the markers
``<!-- plan: NAME -->`` and ``<!-- /plan -->``.

    python scripts/make_readme_plans.py          # rewrite those blocks
    python scripts/make_readme_plans.py --check  # exit 1 if a block is out of date (test.sh)

Run it after changing the cost model, the plan or a shipped config.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {
    "default": ["config/config.yaml"],
    "preliminary": ["config/preliminary.yaml"],
    "full-study": ["config/full-study.yaml", "config/openml/seed-study.yaml"],
    "full-study-xgb-cpu": ["config/full-study.yaml", "config/openml/seed-study.yaml",
                           "config/xgb-on-cpu.yaml"],
}
#: blocks that show only the plan's lines starting so (the rest as in the block above them)
SHORT = {"full-study-xgb-cpu": ("jobs per rule", "total", "  fitting and tuning by classifier",
                                "  CPU time")}
BLOCK = re.compile(r"(<!-- plan: (?P<name>[\w-]+) -->\n)(.*?)(<!-- /plan -->)", re.S)


def plan_text(files: list[str], keep: tuple[str, ...] | None = None) -> str:
    from modelvar.planning.plan_report import format_plan
    from modelvar.running.workflow_config import plan_of_command_line

    cwd = os.getcwd()
    os.chdir(REPO)  # the config files name paths relative to the repository
    try:
        # without probe fits on the data, cached ones included (a run or `snakemake --lint`
        # of the checkout caches them in its results folder): their factors are this
        # machine's timings, the README's blocks the same on every machine (the README says
        # what a plan adds)
        plan, config = plan_of_command_line(["--configfile", *files], probe_data=False,
                                            cached_probes=False)
    finally:
        os.chdir(cwd)
    command = "modelvar plan --configfile " + " ".join(files)
    text = format_plan(plan, config)
    if keep:
        text = "\n".join([*(line for line in text.splitlines() if line.startswith(keep)), "…"])
    return f"```\n$ {command}\n{text}\n```\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md would change")
    args = parser.parse_args(argv)
    readme = REPO / "README.md"
    text = readme.read_text()
    names = [m.group("name") for m in BLOCK.finditer(text)]
    if sorted(names) != sorted(CONFIGS):
        print(f"README.md has plan blocks {names}, expected {list(CONFIGS)}", file=sys.stderr)
        return 1
    new = BLOCK.sub(lambda m: m.group(1) + plan_text(CONFIGS[m.group("name")],
                                                     SHORT.get(m.group("name"))) + m.group(4),
                    text)
    if new == text:
        return 0
    if args.check:
        print("README.md's plan blocks are out of date: run python scripts/make_readme_plans.py",
              file=sys.stderr)
        return 1
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
