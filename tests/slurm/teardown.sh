#!/usr/bin/env bash
# Stops the daemons tests/slurm/setup.sh started, listed in DIR/started.pids, in reverse
# order (slurmd, slurmctld, then munged), and nothing else: a PID whose process name no
# longer matches is left alone (it was reused). Waits up to 10 s for each to exit.
#
# Usage: tests/slurm/teardown.sh DIR
set -uo pipefail
dir="${1:?usage: teardown.sh DIR}"
pids="$dir/started.pids"
[ -f "$pids" ] || exit 0
# Running (not a zombie waiting to be reaped) under the expected name.
alive() {
    local stat
    stat="$(cat "/proc/$2/stat" 2>/dev/null)" || return 1
    [[ "$stat" == "$2 ($1) "* && "$stat" != "$2 ($1) Z"* ]]
}
tac "$pids" | while read -r name pid; do
    [ -n "$pid" ] || continue
    alive "$name" "$pid" || continue
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do
        alive "$name" "$pid" || break
        sleep 0.1
    done
    if alive "$name" "$pid"; then
        echo "slurm teardown: $name ($pid) ignored TERM for 10 s; sending KILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
done
: > "$pids"
