"""Check every figure of a results folder against the figure set's rules
(modelvar.plots.figure_rules: nothing cut, densities from enough distinct values, global EC on
its own scale, a page's size), from each figure's source data (FIGURE.csv).

    python scripts/check_figures.py RESULTS [--width single|double|INCHES]

Prints each breach and a count; exits 1 where any figure breaks a rule, 2 where a figure has
no source data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modelvar.plots.common import WIDTHS
from modelvar.plots.figure_rules import check_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--width", default="double",
                        help="the width the figures were drawn at (single, double or inches)")
    args = parser.parse_args(argv)
    width = WIDTHS[args.width] if args.width in WIDTHS else float(args.width)
    missing = [p for p in sorted(args.results.rglob("*.png"))
               if ("figures" in p.parts or "findings" in p.parts or "simulation" in p.parts)
               and not p.with_suffix(".csv").exists()]
    for path in missing:
        print(f"{path}: no source data beside it")
    checked = check_results(args.results, width)
    broken = {name: found for name, found in checked.items() if found}
    for found in broken.values():
        for line in found:
            print(line)
    print(f"{len(checked)} figures checked at {width:g} in: {len(broken)} break a rule")
    return 2 if missing else 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
