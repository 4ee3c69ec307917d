"""Benchmark: job count and `snakemake -n` time of the study configs (issue 8's target: the
full-study config has <= 10,000 jobs and dry-runs in <= 20 s on a 2-core machine)."""

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
TARGET_S, TARGET_JOBS = 20.0, 10_000


def main() -> None:
    for name, files in CONFIGS.items():
        with tempfile.TemporaryDirectory() as work:
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "snakemake", "-n", "-s", str(REPO / "Snakefile"),
                 "--directory", work, "--cores", "1", "--configfile",
                 *[str(REPO / f) for f in files]],
                capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - t0
        total = int(re.search(r"^total\s+(\d+)$", proc.stdout, re.M).group(1))
        print(f"{name:12s} {total:6d} jobs ({total / TARGET_JOBS:.2f} of {TARGET_JOBS}), "
              f"dry run {seconds:5.1f} s ({seconds / TARGET_S:.2f} of {TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
