#!/usr/bin/env bash
# What scripts/test.sh changes on the machine, and how it is undone (issue 24). Sourced by
# test.sh; root on Debian only (elsewhere nothing is installed or started).
#   machine_snapshot   remember the installed Debian packages and which test daemons run
#   machine_restore    stop the daemons this run started; purge the packages it installed, and
#                      the SLURM files its set-up wrote (MODELVAR_KEEP_TEST_PACKAGES=1 keeps the
#                      packages, to save reinstalling them next time)
TEST_DAEMONS="/run/munge/munged.pid /run/slurmctld.pid /run/slurmd.pid /run/slurmdbd.pid
  /run/mysqld/mysqld.pid"
SLURM_FILES="/etc/slurm/slurm.conf /etc/slurm/gres.conf /etc/slurm/slurmdbd.conf /var/lib/slurm
  /var/log/slurm"

_alive() {
  local p; p=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$p" ] && [ -r "/proc/$p/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$p/status"
}

_packages() { dpkg-query -W -f='${Package}\n' 2>/dev/null | sort; }

machine_snapshot() {
  MACHINE_PACKAGES_BEFORE=""
  MACHINE_DAEMONS_OFF=""
  MACHINE_SLURM_BEFORE=0
  MACHINE_MYSQL_BEFORE=0
  if [ "$(id -u)" != 0 ] || ! command -v dpkg-query >/dev/null; then return 0; fi
  MACHINE_PACKAGES_BEFORE="$(_packages)"
  command -v slurmctld >/dev/null && MACHINE_SLURM_BEFORE=1
  [ -e /var/lib/mysql ] && MACHINE_MYSQL_BEFORE=1
  local f
  for f in $TEST_DAEMONS; do _alive "$f" || MACHINE_DAEMONS_OFF="$MACHINE_DAEMONS_OFF $f"; done
  return 0
}

machine_restore() {
  [ -n "${MACHINE_PACKAGES_BEFORE:-}" ] || return 0
  local f pid stopped=""
  for f in ${MACHINE_DAEMONS_OFF:-}; do
    if _alive "$f"; then
      pid=$(cat "$f")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$f"
      stopped="$stopped $(basename "$f" .pid)"
    fi
  done
  [ -z "$stopped" ] || echo "== stopped what the tests started:$stopped"
  if [ "${MODELVAR_KEEP_TEST_PACKAGES:-0}" = 1 ]; then
    echo "== kept the test packages (MODELVAR_KEEP_TEST_PACKAGES=1); 'apt-get purge slurm-wlm" \
      "munge slurmdbd mariadb-server chromium chromium-driver' removes them (installed SLURM tools without a" \
      "controller slow every Snakemake start by ~10 s)"
    return 0
  fi
  local new
  new="$(comm -13 <(echo "$MACHINE_PACKAGES_BEFORE") <(_packages) | tr '\n' ' ')"
  if [ -n "${new// /}" ]; then
    echo "== removing the $(echo "$new" | wc -w) Debian packages this run installed"
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $new >/dev/null 2>&1 \
      || echo "(apt-get purge failed: remove them by hand: $new)"
  fi
  if [ "$MACHINE_SLURM_BEFORE" = 0 ]; then  # the set-up's own files, when SLURM was ours
    rm -rf $SLURM_FILES /dev/fakegpu[0-9]*
    rmdir /etc/slurm 2>/dev/null || true
  fi
  if [ "$MACHINE_MYSQL_BEFORE" = 0 ]; then  # the accounting database the set-up made
    rm -rf /var/lib/mysql /run/mysqld
  fi
  return 0
}
