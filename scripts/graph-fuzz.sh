#!/usr/bin/env bash
# The long random-Graph sweep: COUNT Graphs from SEED on (defaults 2000 and 1) of each family
# (any op anywhere; the encoder family's shapes), each compiled for two buckets on the x86 targets
# this CPU runs and run against the reference evaluator. Prints each failure and a table per
# family; failing Graphs are kept in build/graph-fuzz-failures. SECONDS_PER_FAMILY (default 0: no
# limit) starts no new Graph of a family after that long; PRECISIONS (default f32) the CPU
# precisions to sweep, e.g. "f32 int8 int8pairs bf16" (each Graph against that precision's
# reference and tolerance). Exits 1 on any refusal or mismatch. Run after scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
seed=${2:-1}
keep=build/graph-fuzz-failures
mkdir -p "$keep"
status=0
for precision in ${PRECISIONS:-f32}; do
  for family in any encoder; do
    build/bin/kime-graph-fuzz --family "$family" --count "$count" --seed "$seed" --quiet --keep "$keep" \
      --cpu-precision "$precision" --seconds "${SECONDS_PER_FAMILY:-0}" || status=1
  done
done
exit $status
