#!/usr/bin/env bash
# --sample-rate: SHARDS estimates through the command line. On a uniform
# random and a cyclic text trace the estimated miss-ratio curves stay within
# 0.01 (mean absolute error, --sample-check) of the exact ones at R = 0.1 and
# 0.05; R = 1 is exact; the report validates against the schema; and the
# options that need --sample-rate say so.
. "$(dirname "$0")/common.sh"
R="$PES_BIN/pes-replay"
awk 'BEGIN { x = 7; for (i = 0; i < 400000; i++) { x = (x * 16807) % 2147483647;   # Park-Miller: exact in awk doubles
             printf "0x%x\n", (x % 40000) * 64 } }' >"$work/uniform.txt"
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "0x%x\n", (i % 20000) * 64 }' >"$work/cyclic.txt"
for t in uniform cyclic; do
  for rate in 0.1 0.05; do
    "$R" "$work/$t.txt" --machine haswell --format json --sample-rate "$rate" --sample-check >"$work/a.json"
    jq -e '.configs[0].approximation.profiles | length == 1 and all(.mrc_mae <= 0.01)' "$work/a.json" >/dev/null ||
      fail "$t at $rate: $(jq -c '.configs[0].approximation' "$work/a.json")"
    jq -e '.configs[0].prd[0].histogram.accesses == 400000 and (.configs[0].sites | length) == 0' "$work/a.json" \
      >/dev/null || fail "$t at $rate: totals"
    "$PYTHON" - "$work/a.json" "$PES_SRC/docs/replay.schema.json" <<'PY' || fail "$t at $rate: schema"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
    echo "ok: $t --sample-rate $rate: MAE $(jq '.configs[0].approximation.profiles[0].mrc_mae' "$work/a.json")"
  done
  # a rate of 1 keeps every line: the exact histograms
  "$R" "$work/$t.txt" --machine haswell --format json --sample-rate 1 >"$work/one.json"
  "$R" "$work/$t.txt" --machine haswell --format json >"$work/exact.json"
  [ "$(jq -c '.configs[0].prd' "$work/one.json")" = "$(jq -c '.configs[0].prd' "$work/exact.json")" ] ||
    fail "$t: --sample-rate 1 differs from the exact profiles"
done
# --sample-rate alone drops the lines it does not sample where the text is
# parsed (on 1 or 3 threads); --simulate needs every access, so it does not:
# the same counts, estimates and model either way
sel='{trace: (.trace | del(.path)), c: .configs[0] | {prd, crd, model, approximation}}'
"$R" "$work/uniform.txt" --machine haswell --format json --sample-rate 0.05 --simulate --jobs 1 |
  jq -c "$sel" >"$work/all.json"
for jobs in 1 3; do
  "$R" "$work/uniform.txt" --machine haswell --format json --sample-rate 0.05 --jobs $jobs | jq -c "$sel" >"$work/filtered.json"
  cmp -s "$work/all.json" "$work/filtered.json" || fail "--sample-rate --jobs $jobs: filtered input differs"
done
echo "ok: lines dropped at parse time: same report"
"$R" "$work/cyclic.txt" --machine haswell --sample-rate 0.1 --sample-check >"$work/text.out"
grep -q '^Approximation' "$work/text.out" || fail "no approximation section in the text report"
expect_usage "--sample-seed: only with --sample-rate" "$R" "$work/cyclic.txt" --sample-seed 3
expect_usage "--sample-check: only with --sample-rate" "$R" "$work/cyclic.txt" --sample-check
for bad in 0 1.5 -0.1 abc 0.1x; do
  expect_usage "--sample-rate: expected a rate in (0, 1], e.g. 0.01, got '$bad'" "$R" "$work/cyclic.txt" --sample-rate "$bad"
done
echo "approximate profiles within their stated error"
