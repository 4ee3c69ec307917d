#!/usr/bin/env bash
# A new user's first hour, measured (issue 24; `make first-hour`): in a fresh clone of this
# checkout's HEAD, the README's two commands as a newcomer runs them, timed; the install's size;
# the `modelvar` command as the README shows it; a run from the user's own folder with relative
# paths; and what `bash scripts/test.sh` leaves on the machine (Debian packages, processes).
# Prints one line per check and exits 1 if any failed. Takes ~20 minutes on 2 cores.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d)"
CLONE="$WORK/modelvar"
git clone -q "$REPO" "$CLONE"
cd "$CLONE" || exit 1
failed=0
check() {  # check NAME COMMAND...: run it, print ok/FAILED
  if "${@:2}" >"$WORK/check.log" 2>&1; then echo "ok      $1"
  else echo "FAILED  $1"; tail -5 "$WORK/check.log" | sed 's/^/        /'; failed=1; fi
}
timed() {  # timed LABEL COMMAND...: wall and CPU (children's user + system) seconds
  local log="$WORK/$1.log" status real user sys TIMEFORMAT="%R %U %S"
  { time "${@:2}" >"$log" 2>&1; } 2>"$WORK/time"
  status=$?
  read -r real user sys <"$WORK/time"
  printf '%-28s %6.0f s wall, %6.0f s CPU, exit %d\n' "$1" "$real" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" "$status"
  return "$status"
}
packages() { dpkg-query -W -f='${Package}\n' 2>/dev/null | sort; }
daemons() { ps -e -o comm= | grep -E '^(munged|slurmctld|slurmd|slurmstepd|chromium|chromedriver)$' | sort -u; }

echo "fresh clone of $(git -C "$REPO" rev-parse --short HEAD) in $CLONE, $(nproc) cores"
timed "install (.venv)" bash scripts/setup-venv.sh
echo "venv size: $(du -sh .venv | cut -f1)"
timed "run.sh (default study)" bash scripts/run.sh
check "report written" test -s results/report.html
check "results/ ignored by git" git check-ignore -q results/report.html
check "run.sh says how to get modelvar" grep -q "source $CLONE/.venv/bin/activate" \
  "$WORK/run.sh (default study).log"
check "modelvar after the README's step" \
  bash -c "source .venv/bin/activate && modelvar --version && modelvar plan --jobs >/dev/null"
mkdir -p "$WORK/mine"
sed 's/^results_dir: .*/results_dir: my-results/' tests/configs/tiny.yaml > "$WORK/mine/my.yaml"
check "run.sh from the user's folder, relative config" \
  bash -c "cd '$WORK/mine' && bash '$CLONE/scripts/run.sh' --configfile my.yaml"
check "its results in the user's folder" test -s "$WORK/mine/my-results/report.html"

before_packages="$(packages)"; before_daemons="$(daemons)"
timed "test.sh" bash scripts/test.sh
status=$?
grep -E "^tests: " "$WORK/test.sh.log" | tail -1
check "test.sh passed" test "$status" = 0
after_packages="$(packages)"; after_daemons="$(daemons)"
check "test.sh left no Debian package behind" test "$before_packages" = "$after_packages"
check "test.sh left no daemon running" test "$before_daemons" = "$after_daemons"
start=$(date +%s.%N)
bash -c "source .venv/bin/activate && snakemake -n --cores 1 >/dev/null 2>&1"
printf 'a Snakemake dry run after test.sh: %.1f s wall\n' "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')"
echo "work folder: $WORK"
exit $failed
