#!/usr/bin/env bash
# Golden reports (a refactoring guard, issue 11): pes-replay on the committed
# traces in tests/data prints exactly what tests/golden/*.out hold, for every
# line of tests/golden/reports.list, with --jobs 1 and with the default jobs.
# After a change that is meant to alter a figure: bash tests/golden/update.sh,
# and say why in the commit (tests/golden/update.sh explains).
. "$(dirname "$0")/common.sh"
golden=$PES_SRC/tests/golden
failed=0
while IFS='|' read -r name trace args; do
  case $name in '' | '#'*) continue ;; esac
  for jobs in "" "--jobs 1"; do
    # shellcheck disable=SC2086  # ARGS are words
    (cd "$PES_SRC/tests/data" && "$PES_BIN/pes-replay" "$trace" --machine haswell $args $jobs) \
      >"$work/$name.out" 2>/dev/null || { echo "FAIL: $name ${jobs:-default jobs}: exit $?" >&2; failed=1; continue; }
    if ! cmp -s "$golden/$name.out" "$work/$name.out"; then
      echo "FAIL: $name ${jobs:-default jobs} differs from tests/golden/$name.out:" >&2
      diff "$golden/$name.out" "$work/$name.out" | head -n 10 >&2
      failed=1
    fi
  done
done <"$golden/reports.list"
[ $failed = 0 ] || fail "golden reports differ (tests/golden/update.sh regenerates them after an intended change)"
# every JSON report validates against its published schema: sampled and
# --compare reports against docs/sampled.schema.json, --diff reports against
# docs/diff.schema.json, the others against docs/replay.schema.json
"${PYTHON:-python3}" - "$work" "$PES_SRC/docs" <<'PY' || fail "a JSON report does not match its schema"
import glob, json, os, sys, jsonschema
work, docs = sys.argv[1], sys.argv[2]
schema = {k: json.load(open(os.path.join(docs, k + ".schema.json"))) for k in ("replay", "sampled", "diff")}
for path in sorted(glob.glob(os.path.join(work, "*.json.out"))):
    name = os.path.basename(path)
    kind = "sampled" if name.startswith(("sampled_", "compare_")) else "diff" if name.startswith("diff_") else "replay"
    try:
        jsonschema.validate(json.load(open(path)), schema[kind])
    except jsonschema.ValidationError as e:
        sys.exit(f"{name}: {kind}.schema.json: {e.message}")
PY
echo "golden reports: $(grep -c '^[^#]' "$golden/reports.list") reports identical, default jobs and --jobs 1; JSON valid"
