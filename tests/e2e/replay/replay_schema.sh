#!/usr/bin/env bash
# JSON output of pes-replay validates against docs/replay.schema.json, for the
# recorded threads, for mimicked core counts, and with the simulation; and the
# numbers in it are consistent with each other and with the program.
. "$(dirname "$0")/common.sh"
"$PES_BIN/pes-clang" -O2 -fopenmp "$PES_SRC/bench/kernels/gemm.c" -o "$work/gemm"
OMP_NUM_THREADS=1 "$PES_BIN/pes-collect" -q --full -o "$work/g1.zst" -- "$work/gemm" 32 >/dev/null
OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" -q --full -o "$work/g2.zst" -- "$work/gemm" 32 >/dev/null
validate() {
  "${PYTHON:-python3}" - "$1" "$PES_SRC/docs/replay.schema.json" <<'PY'
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
}
"$PES_BIN/pes-replay" "$work/g2.zst" --machine haswell --simulate --format json >"$work/rec.json"
validate "$work/rec.json"
# the PRD worker thread (--jobs 2) changes nothing in the results
"$PES_BIN/pes-replay" "$work/g2.zst" --machine haswell --simulate --format json --jobs 2 >"$work/rec1.json"
cmp -s "$work/rec.json" "$work/rec1.json" || fail "--jobs 1 and --jobs 2 differ"
"$PES_BIN/pes-replay" "$work/g1.zst" --machine haswell --cores 1,2,4 --simulate --format json >"$work/mim.json"
validate "$work/mim.json"
# gemm n=32 does, per (i,k): a load of a, per (i,k,j): a load of b and a load+store of c,
# plus the beta scaling (load+store per c element), 8 bytes each: the kernel alone moves
# this many bytes (vectorised code makes fewer, wider accesses; the bytes stay).
n=32
kernel=$(( 8 * (n*n + n*n*n*3 + n*n*2) ))
bytes=$(jq '.trace.bytes' "$work/rec.json")
[ "$bytes" -ge "$kernel" ] || fail "bytes accessed $bytes < kernel bytes $kernel"
jq -e '.trace.threads == 2 and (.configs | length) == 1 and .configs[0].cores == 2' "$work/rec.json" >/dev/null ||
  fail "recorded config"
jq -e '[.configs[].cores] == [1,2,4] and all(.configs[]; .mimicked)' "$work/mim.json" >/dev/null || fail "mimic configs"
# every PRD histogram's accesses sum to the CRD's (same accesses, per core vs together)
jq -e 'all(.configs[]; ([.prd[].histogram.accesses] | add) == ([.crd[].histogram.accesses] | add))' \
  "$work/mim.json" >/dev/null || fail "PRD and CRD totals differ"
# hit rates are probabilities and the simulation saw every line access once at L1
jq -e 'all(.configs[]; all(.model.hit_global[]; . >= 0 and . <= 1))' "$work/mim.json" >/dev/null || fail "rates"
jq -e '.configs[0].simulation.levels[0].accesses >= .trace.accesses' "$work/rec.json" >/dev/null || fail "sim accesses"
# CSV has one row per configuration and level
"$PES_BIN/pes-replay" "$work/g1.zst" --machine haswell --cores 1,2,4 --format csv >"$work/r.csv"
[ "$(wc -l <"$work/r.csv")" -eq $((1 + 3 * 3)) ] || fail "csv rows: $(wc -l <"$work/r.csv")"
echo "schema and consistency ok"
