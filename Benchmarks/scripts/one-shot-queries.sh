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

# measure LABEL COMMAND...: prints "LABEL  median-ms  peak-KB" over $runs runs: wall time
# from the shell's microsecond clock, peak resident memory from GNU time.
measure() {
    local label=$1; shift
    local times=() peak=0
    for _ in $(seq "$runs"); do
        local start=$EPOCHREALTIME out
        out=$( { /usr/bin/time -f "%M" "$@" > /dev/null; } 2>&1 | tail -1)
        local end=$EPOCHREALTIME
        times+=("$(echo "($end - $start) * 1000" | bc -l)")
        (( out > peak )) && peak=$out
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    printf '%-52s %8.1f ms %8s KB\n' "$label" "$median" "$peak"
}

echo "question                                              median         peak memory"
measure "entity-store: flights --where carrier=UA --count" "$tool" query "$snapshot" flights --where carrier=UA --count
measure "sqlite3: count(*) where carrier='UA'" sqlite3 "$snapshot" "select count(*) from flights where carrier = 'UA'"
measure "entity-store: flights --id 838" "$tool" query "$snapshot" flights --id 838
measure "sqlite3: where id = 838" sqlite3 "$snapshot" "select * from flights where id = 838"
measure "entity-store: flights --where dep_delay>60 --count" "$tool" query "$snapshot" flights --where "dep_delay>60" --count
measure "sqlite3: count(*) where dep_delay > 60" sqlite3 "$snapshot" "select count(*) from flights where dep_delay > 60"
measure "entity-store: airlines (16 rows)" "$tool" query "$snapshot" airlines
measure "sqlite3: select * from airlines" sqlite3 "$snapshot" "select * from airlines"
measure "entity-store: flights --group-by carrier --count" "$tool" query "$snapshot" flights --group-by carrier --count
measure "sqlite3: select carrier, count(*) group by carrier" sqlite3 "$snapshot" "select carrier, count(*) from flights group by carrier"
measure "entity-store: flights --sort dep_delay --desc --limit 3" "$tool" query "$snapshot" flights --sort dep_delay --desc --limit 3
measure "sqlite3: order by dep_delay desc limit 3" sqlite3 "$snapshot" "select * from flights order by dep_delay desc limit 3"
measure "entity-store: flights --sort tailnum --limit 2" "$tool" query "$snapshot" flights --sort tailnum --limit 2
measure "sqlite3: order by tailnum limit 2" sqlite3 "$snapshot" "select * from flights order by tailnum limit 2"
measure "entity-store: flights --format ndjson (336,776 rows)" "$tool" query "$snapshot" flights --format ndjson
measure "sqlite3 -json: select * from flights" sqlite3 -json "$snapshot" "select * from flights"
measure "entity-store: flights --where carrier=UA --format csv" "$tool" query "$snapshot" flights --where carrier=UA --format csv
measure "sqlite3 -csv: where carrier = 'UA'" sqlite3 -csv -header "$snapshot" "select * from flights where carrier = 'UA'"
