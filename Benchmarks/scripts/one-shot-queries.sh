#!/usr/bin/env bash
# One-shot CLI queries against the sqlite3 shell on the same snapshot: wall time (median
# of RUNS) and peak resident memory of each whole process, start-up included.
#
#   Benchmarks/scripts/one-shot-queries.sh SNAPSHOT [ENTITY_STORE_BINARY]
#
# SNAPSHOT is the flights dataset imported as the Benchmarks README shows; the binary
# defaults to a release build of entity-store. Needs GNU time (/usr/bin/time) and sqlite3.
set -euo pipefail
snapshot=${1:?usage: one-shot-queries.sh SNAPSHOT [ENTITY_STORE_BINARY]}
tool=${2:-.build/release/entity-store}
runs=${RUNS:-5}

# measure LABEL COMMAND...: prints "LABEL  median-seconds  peak-KB" over $runs runs.
measure() {
    local label=$1; shift
    local times=() peak=0
    for _ in $(seq "$runs"); do
        local out
        out=$( { /usr/bin/time -f "%e %M" "$@" > /dev/null; } 2>&1 | tail -1)
        times+=("${out% *}")
        local kb=${out#* }
        (( kb > peak )) && peak=$kb
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    printf '%-52s %8s s %8s KB\n' "$label" "$median" "$peak"
}

echo "question                                              median      peak memory"
measure "entity-store: flights --where carrier=UA --count" "$tool" query "$snapshot" flights --where carrier=UA --count
measure "sqlite3: count(*) where carrier='UA'" sqlite3 "$snapshot" "select count(*) from flights where carrier = 'UA'"
measure "entity-store: flights --id 838" "$tool" query "$snapshot" flights --id 838
measure "sqlite3: where id = 838" sqlite3 "$snapshot" "select * from flights where id = 838"
measure "entity-store: flights --where dep_delay>60 --count" "$tool" query "$snapshot" flights --where "dep_delay>60" --count
measure "sqlite3: count(*) where dep_delay > 60" sqlite3 "$snapshot" "select count(*) from flights where dep_delay > 60"
measure "entity-store: airlines (16 rows)" "$tool" query "$snapshot" airlines
measure "sqlite3: select * from airlines" sqlite3 "$snapshot" "select * from airlines"
