#!/usr/bin/env bash
# A one-machine SLURM cluster for the integration test (Debian 12, as root): munge + slurmctld +
# slurmd, with WITH_DBD=1 (the default) slurmdbd + MariaDB so that `sacct` answers (the
# executor's efficiency report reads it; the profile's `slurm-status-command: squeue` is
# exercised either way), and FAKE_GPUS fake GPUs declared as gres. Idempotent; stop it with
# tests/slurm/teardown.sh. Adapted from the team's shared slurm-local-setup.sh (see
# ../shared/reference/slurm-local.md).
set -euo pipefail
FAKE_GPUS=${FAKE_GPUS:-1}
WITH_DBD=${WITH_DBD:-1}
if [ "$(id -u)" != 0 ]; then echo "slurm setup: needs root" >&2; exit 3; fi
command -v apt-get >/dev/null || { echo "slurm setup: needs apt-get (Debian)" >&2; exit 3; }
H=$(hostname -s)
alive() { local p; p=$(cat "$1" 2>/dev/null) || return 1; [ -n "$p" ] && [ -r "/proc/$p/status" ] \
  && ! grep -q '^State:[[:space:]]*Z' "/proc/$p/status"; }
# the CPUs this process may use; nproc alone would honour OMP_NUM_THREADS (a suite run with
# OMP_NUM_THREADS=1 would declare one CPU, too few for a GPU job's --cpus-per-gpu=2)
NCPU=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
MEM_MB=$(awk '/MemTotal/{print int($2/1024*0.9)}' /proc/meminfo)

export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null \
    || { [ "$WITH_DBD" = 1 ] && ! command -v slurmdbd >/dev/null; }; then
  PKGS="slurm-wlm munge"
  [ "$WITH_DBD" = 1 ] && PKGS="$PKGS slurmdbd mariadb-server"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
fi

# A machine's own SLURM configuration is never overwritten: only one this script wrote.
MARK="# written by modelvar's tests/slurm/setup.sh"
if [ -s /etc/slurm/slurm.conf ] && ! grep -qF "$MARK" /etc/slurm/slurm.conf; then
  echo "slurm setup: /etc/slurm/slurm.conf is this machine's own; not touching it" >&2; exit 3
fi

# munge: Debian's postinst creates the key; start the daemon once
[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
install -d -o munge -g munge -m 0755 /run/munge
munge -n >/dev/null 2>&1 || runuser -u munge -- /usr/sbin/munged
munge -n | unmunge >/dev/null

GRES_TYPES=""; GRES_NODE=""
if [ "$FAKE_GPUS" -gt 0 ]; then
  GRES_TYPES="GresTypes=gpu"; GRES_NODE="Gres=gpu:$FAKE_GPUS"
  # Character devices cloned from /dev/null: SLURM needs distinct device files per GPU and only
  # then sets CUDA_VISIBLE_DEVICES for jobs that get one.
  for i in $(seq 0 $((FAKE_GPUS - 1))); do
    [ -e "/dev/fakegpu$i" ] || mknod -m 666 "/dev/fakegpu$i" c 1 3
  done
  if [ "$FAKE_GPUS" = 1 ]; then F=/dev/fakegpu0; else F="/dev/fakegpu[0-$((FAKE_GPUS - 1))]"; fi
  printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s\n' "$H" "$F" > /etc/slurm/gres.conf
else
  rm -f /etc/slurm/gres.conf
fi
install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
if [ "$WITH_DBD" = 1 ]; then  # job comments hold the rule's name in sacct's answer
  ACCOUNTING="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoreFlags=job_comment"
else
  ACCOUNTING="AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.txt"
fi
cat > /etc/slurm/slurm.conf <<CONF
$MARK
ClusterName=modelvartest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
JobAcctGatherType=jobacct_gather/linux
$ACCOUNTING
ReturnToService=2
MinJobAge=300
$GRES_TYPES
NodeName=$H NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$MEM_MB $GRES_NODE State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# the accounting database first: slurmctld registers the cluster with slurmdbd when it starts
if [ "$WITH_DBD" = 1 ]; then
  install -d -o mysql -g root -m 0755 /run/mysqld
  if ! mysqladmin ping >/dev/null 2>&1; then
    nohup /usr/sbin/mariadbd --user=mysql >/var/log/slurm/mariadbd.out 2>&1 &
    for i in $(seq 60); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.5; done
  fi
  mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > /etc/slurm/slurmdbd.conf <<DBD
$MARK
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
DBD
  chown slurm:slurm /etc/slurm/slurmdbd.conf
  chmod 600 /etc/slurm/slurmdbd.conf
  alive /run/slurmdbd.pid || slurmdbd
  for i in $(seq 60); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
fi
alive /run/slurmctld.pid || slurmctld
alive /run/slurmd.pid || slurmd
for i in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
  sleep 0.5
  [ "$i" = 10 ] && { scontrol update nodename="$H" state=resume 2>/dev/null || true; }
done
sinfo -o '%P %N %c %m %G %T'
