"""Write docs/cli.md from the `modelvar` command's parser (every command, option and default).

    python scripts/make_cli_docs.py          # rewrite docs/cli.md
    python scripts/make_cli_docs.py --check  # exit 1 if it would change (the tests run this)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "cli.md"


def render() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal width
    from modelvar.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parts = ["# The `modelvar` command", "",
             "Generated from the parser by `scripts/make_cli_docs.py`; do not edit by hand.", "",
             "```text", parser.format_help().rstrip(), "```", ""]
    for name, command in sub.choices.items():
        parts += [f"## `modelvar {name}`", "", "```text", command.format_help().rstrip(),
                  "```", ""]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print("docs/cli.md is out of date: run python scripts/make_cli_docs.py",
                  file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
