"""Benchmark: job count and `snakemake -n` time of the study configs (issue 13's goal: the
full-study config dry-runs in <= 10 s on this 2-core machine; issue 8's: <= 10,000 jobs).
Each config is dry-run --rounds times; min and median are printed."""

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {
    "default": ["config/config.yaml"],
    "preliminary": ["config/preliminary.yaml"],
    "full study": ["config/full-study.yaml", "config/openml/seed-study.yaml"],
}
TARGET_S, TARGET_JOBS = 10.0, 10_000


def main() -> None:
    import argparse
    import statistics

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for name, files in CONFIGS.items():
        times = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as work:
                t0 = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-m", "snakemake", "-n", "-s", str(REPO / "Snakefile"),
                     "--directory", work, "--cores", "1", "--configfile",
                     *[str(REPO / f) for f in files]],
                    capture_output=True, text=True, check=True)
                times.append(time.perf_counter() - t0)
        total = int(re.search(r"^total\s+(\d+)$", proc.stdout, re.M).group(1))
        best, median = min(times), statistics.median(times)
        print(f"{name:12s} {total:6d} jobs ({total / TARGET_JOBS:.2f} of {TARGET_JOBS}), "
              f"dry run min {best:5.1f} s, median {median:5.1f} s ({median / TARGET_S:.2f} of "
              f"the {TARGET_S:.0f} s goal)")


if __name__ == "__main__":
    main()
