#!/usr/bin/env bash
# Starts a one-node Slurm cluster on localhost for tests/slurm.rs and CI (root, Debian).
#
# Usage: tests/slurm/setup.sh [DIR]
# DIR (default: a fresh temporary directory) receives slurm.conf, the daemons' state,
# spool and logs, and `started.pids` (name and PID of every daemon this script started,
# for teardown.sh). On success stdout holds only KEY=VALUE lines:
#   SLURM_CONF=DIR/slurm.conf  SLURM_TEST_DIR=DIR  SLURMCTLD_PID=…  SLURMD_PID=…
#   MUNGED_PID=… (empty when a munged was already running: it is not ours to stop)
# Progress and errors go to stderr. On failure it stops what it started.
# The configuration is the minimal one-node cluster that Debian 12's Slurm 22.05 accepts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
log() { echo "slurm setup: $*" >&2; }

[ "$(id -u)" = 0 ] || { log "must run as root (installs packages, starts daemons)"; exit 2; }

packages=(slurmctld slurmd slurm-client munge)
installed="$(dpkg-query -W -f='${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null | grep -c '^ii' || true)"
if [ "$installed" = "${#packages[@]}" ]; then
    log "packages already installed"
else
    log "installing ${packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Without package lists (a fresh image) install fails: update once, then retry.
    apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2 \
        || { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2; }
fi

# Another cluster on this machine would hold the ports (6817/6818) or the state.
for daemon in slurmctld slurmd; do
    if pid=$(pgrep -x "$daemon"); then
        log "a $daemon is already running (PID $pid): stop it first"
        exit 2
    fi
done

dir="${1:-$(mktemp -d /tmp/linkrev-slurm.XXXXXX)}"
mkdir -p "$dir/state" "$dir/spool"
dir="$(cd "$dir" && pwd)"
: > "$dir/started.pids"
trap 'log "failed; stopping what was started"; "$here/teardown.sh" "$dir" >&2 || true' ERR

# Hardware as slurmd sees it, so the node registers without a "low core count" drain.
hw="$(slurmd -C | head -n1)"
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$hw"; }
cpus="$(field CPUs)"; boards="$(field Boards)"; sockets="$(field SocketsPerBoard)"
cores="$(field CoresPerSocket)"; threads="$(field ThreadsPerCore)"

cat > "$dir/slurm.conf" <<CONF
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus Boards=$boards SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"

munged_pid=""
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running; using it"
else
    mkdir -p /run/munge
    chown munge:munge /run/munge
    chmod 755 /run/munge
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do
        [ -s /run/munge/munged.pid ] && munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munged_pid="$(cat /run/munge/munged.pid)"
    echo "munged $munged_pid" >> "$dir/started.pids"
    munge -n | unmunge >/dev/null
fi

# -D: stay in the foreground, so $! is the daemon; -i: ignore any stale state.
slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$dir/slurmctld.out" 2>&1 &
slurmctld_pid=$!
echo "slurmctld $slurmctld_pid" >> "$dir/started.pids"
slurmd -D -N localhost -f "$SLURM_CONF" </dev/null >"$dir/slurmd.out" 2>&1 &
slurmd_pid=$!
echo "slurmd $slurmd_pid" >> "$dir/started.pids"

state=""
for _ in $(seq 300); do
    state="$(sinfo -h -o %t 2>/dev/null || true)"
    [ "$state" = idle ] && break
    sleep 0.1
done
if [ "$state" != idle ]; then
    log "node not idle after 30 s (state: '${state}')"
    tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log >&2 || true
    false
fi
trap - ERR
log "cluster up in $dir"
echo "SLURM_CONF=$SLURM_CONF"
echo "SLURM_TEST_DIR=$dir"
echo "SLURMCTLD_PID=$slurmctld_pid"
echo "SLURMD_PID=$slurmd_pid"
echo "MUNGED_PID=$munged_pid"
