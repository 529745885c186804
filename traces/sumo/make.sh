#!/usr/bin/env bash
# Regenerates the SUMO vehicular scenario in this folder from nothing:
#   4x4 grid net -> random trips/routes -> sumo FCD -> ns-2 mobility/activity/config.
# Deterministic: every random step has a fixed seed. Needs Debian's `sumo` and
# `sumo-tools` packages (apt-get install -y sumo sumo-tools); written against SUMO 1.15.0.
# Usage (from the repo root): bash traces/sumo/make.sh
set -euo pipefail

OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export SUMO_HOME="${SUMO_HOME:-/usr/share/sumo}"
TOOLS="$SUMO_HOME/tools"

for bin in netgenerate duarouter sumo python3; do
    command -v "$bin" >/dev/null || { echo "make.sh: '$bin' not found (apt-get install -y sumo sumo-tools)" >&2; exit 1; }
done
for py in randomTrips.py traceExporter.py; do
    [ -f "$TOOLS/$py" ] || { echo "make.sh: $TOOLS/$py not found (apt-get install -y sumo-tools, or set SUMO_HOME)" >&2; exit 1; }
done

SEED=42
BEGIN=0
END=300      # simulated seconds
PERIOD=10    # one trip every 10 s -> 30 vehicles

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

# 1. network: 4x4 junctions, 200 m apart (600 m x 600 m)
netgenerate --grid --grid.number=4 --grid.length=200 --seed "$SEED" \
    --output-file=grid.net.xml >netgenerate.log

# 2. random trips, routed by duarouter (randomTrips calls it for --route-file)
python3 "$TOOLS/randomTrips.py" -n grid.net.xml --seed "$SEED" \
    -b "$BEGIN" -e "$END" -p "$PERIOD" --validate \
    -o grid.trips.xml -r grid.rou.xml >randomTrips.log

# 3. simulate and record floating car data (positions every 1 s step)
sumo -n grid.net.xml -r grid.rou.xml --begin "$BEGIN" --end "$END" --seed "$SEED" \
    --fcd-output grid.fcd.xml --no-step-log true >sumo.log

# 4. export to ns-2 (relative names: the config file records them as written here)
python3 "$TOOLS/traceExporter.py" --fcd-input grid.fcd.xml --seed "$SEED" \
    --ns2mobility-output grid.ns2mobility.tcl \
    --ns2activity-output grid.ns2activity.tcl \
    --ns2config-output grid.ns2config.tcl >traceExporter.log

cp grid.ns2mobility.tcl grid.ns2activity.tcl grid.ns2config.tcl "$OUT/"
echo "make.sh: wrote $OUT/grid.ns2{mobility,activity,config}.tcl"
