#!/usr/bin/env bash
# SDCM outside its assumptions (replay/report/assumptions.c), on programs with
# known answers, haswell preset (L1: 512 lines, 8 ways, 64 sets):
#  - cyclic_prog 512: a walk over exactly the L1's lines, 20 times: the
#    simulation hits every read (20 x 512), SDCM about 45 % of them; named
#    cyclic_at_capacity with a positive shift;
#  - cyclic_prog 576: 9 lines per set: the simulation never hits, SDCM about
#    37 %; named with a negative shift;
#  - conflict_prog: a column walk over rows of 4 KiB (a power-of-two leading
#    dimension): every row in one set; named set_conflicts with the site,
#    its stride and the one set it reaches;
#  - stream_prog: a streaming kernel, no warning at all;
#  - a lower level's warning where L1 is named: "level_above", its accesses
#    being L1's misses, whose share differs between model and simulation.
# The band and the shift are recomputed here from the report's own histogram
# with an exact binomial (Python integers), independently of GSL.
. "$(dirname "$0")/common.sh"
cc() { "$PES_BIN/pes-clang" -O1 "$PES_SRC/tests/e2e/replay/$1.c" -o "$work/$1"; }
cc cyclic_prog
cc conflict_prog
cc stream_prog
run() { # NAME PROGRAM ARGS...
  local name=$1; shift
  "$PES_BIN/pes-collect" -q --full -o "$work/$name.zst" -- "$@" >/dev/null
  "$PES_BIN/pes-replay" "$work/$name.zst" --machine haswell --simulate --html "$work/$name.html" >"$work/$name.txt"
  "$PES_BIN/pes-replay" "$work/$name.zst" --machine haswell --simulate --format json >"$work/$name.json"
}
run fit "$work/cyclic_prog" 512
run above "$work/cyclic_prog" 576
run conflict "$work/conflict_prog"
run stream "$work/stream_prog"
line=$(grep -n 's += a\[i\]\[j\]' "$PES_SRC/tests/e2e/replay/conflict_prog.c" | cut -d: -f1)
"${PYTHON:-python3}" - "$work" "$PES_SRC/docs/replay.schema.json" "$line" <<'PY' || fail "SDCM assumptions"
import html, json, math, re, sys
import jsonschema
work, schema, culprit = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
B, A = 512, 8  # haswell L1 lines, ways

def p_hit(d):  # SDCM Eq. 1, exactly: P[Binomial(d, A/B) <= A-1]
    return sum(math.comb(d, a) * A**a * (B - A)**(d - a) for a in range(A)) / B**d

# the band: P(hit|D) more than 5 % from the even-placement step (1 below B, 0 from B)
lo = next(d for d in range(B) if p_hit(d) < 0.95)
hi = next(d for d in range(B, 64 * B) if p_hit(d) <= 0.05)
print(f"band {lo}..{hi - 1} lines")

def load(name):
    r = json.load(open(f"{work}/{name}.json"))
    jsonschema.validate(r, schema)
    txt = open(f"{work}/{name}.txt").read()
    page = html.unescape(re.sub(r"<[^>]*>", "", open(f"{work}/{name}.html").read()))
    return r, r["configs"][0], txt, page

def warnings(txt):
    return re.findall(r"  warning: L([0-9]+): the model \(SDCM\) says ([0-9.]+) % hits, the simulation "
                      r"([0-9.]+) % \(([-+][0-9.]+) pp\)(.*)", txt)

def check_warning(txt, page, c, e):
    l = e["level"]
    w = [x for x in warnings(txt) if int(x[0]) == l]
    assert len(w) == 1, (l, w)
    _, model, sim, pp, rest = w[0]
    assert abs(float(model) - 100 * e["model"]) < 0.051 and abs(float(sim) - 100 * e["simulation"]) < 0.051, w
    lv = c["simulation"]["levels"][l - 1]
    assert abs(e["simulation"] - lv["hits"] / lv["accesses"]) < 1e-6, (e, lv)
    assert abs(e["model"] - c["model"]["hit_local"][l - 1]) < 1e-6, e
    assert f"L{l}: the model (SDCM) says {model} % hits, the simulation {sim} % ({pp} pp){rest}." in page, rest
    return rest

def check_cyclic(name, sign):
    r, c, txt, page = load(name)
    es = [e for e in c["model_assumptions"] if e["reason"] != "level_above"]
    assert [(e["level"], e["reason"]) for e in es] == [(1, "cyclic_at_capacity")], es
    e = es[0]
    assert e["capacity_lines"] == B and e["band_lines"] == [lo, hi - 1] and not e["binned"], e
    # the shift and the band's share from the PRD, here
    h = c["prd"][0]["histogram"]
    assert not h["log2"] or h["log2"][0][0] >= hi, "distances of the walk above the exact range"
    reach = c["simulation"]["levels"][0]["accesses"]
    shift = sum(n * ((1.0 if d < B else 0.0) - p_hit(d)) for d, n in h["exact"] if lo <= d < hi) / reach
    share = sum(n for d, n in h["exact"] if lo <= d < hi) / reach
    assert abs(e["band_shift"] - shift) < 1e-5 and abs(e["band_share"] - share) < 1e-5, (e, shift, share)
    assert (shift > 0) == (sign > 0) and abs(shift) > 0.05
    # SDCM's L1 rate is the profile's mean P(hit|D) (all distances exact here)
    model = sum(n * p_hit(d) for d, n in h["exact"]) / h["accesses"]
    assert abs(model - c["model"]["hit_local"][0]) < 1e-5, (model, c["model"]["hit_local"][0])
    rest = check_warning(txt, page, c, e)
    m = re.search(r"reuses at the capacity, outside the model's assumptions: ([0-9]+) % of the accesses "
                  r"reaching it reuse a line after ([0-9,]+)\.\.([0-9,]+) other lines \(the level holds ([0-9,]+)\),"
                  r".*they alone move the hit rate by ([-+][0-9.]+) pp$", rest)
    assert m, rest
    assert int(m.group(1)) == round(100 * share) and m.group(2) == str(lo) and m.group(3) == str(hi - 1)
    assert m.group(4) == str(B) and abs(float(m.group(5)) - 100 * shift) < 0.051, m.group(0)
    # only L1 has a reason of its own; a later level's warning inherits it: its
    # accesses are L1's misses, whose share differs between the model and the
    # simulation by more than the warning's 5 pp
    inherited = {x["level"]: x for x in c["model_assumptions"] if x["reason"] == "level_above"}
    sim_l1_miss = 1 - c["simulation"]["levels"][0]["hits"] / c["simulation"]["levels"][0]["accesses"]
    for l, *_, more in warnings(txt):
        if l == "1":
            continue
        x = inherited[int(l)]
        assert x["above"] == 1 and abs(sim_l1_miss - (1 - c["model"]["hit_local"][0])) > 0.05, (x, sim_l1_miss)
        assert more == ("; inherited from L1, outside the model's assumptions: this level's accesses are the "
                        "misses of the levels above, which differ between the model and the simulation"), more
        assert f"L{l}: the model (SDCM) says" in page and more in page, more
    assert set(inherited) == {int(w[0]) for w in warnings(txt)} - {1}, (inherited, warnings(txt))
    return c["simulation"]["levels"][0], e, inherited

passes = 20
l1, e, inherited = check_cyclic("fit", +1)
# L2 sees only L1's first touches in the simulation (the 512 lines and the
# program's few others: compulsory misses), while SDCM sends more than half of
# the 20 x 512 reads there, where all 512 lines fit
l2 = json.load(open(f"{work}/fit.json"))["configs"][0]["simulation"]["levels"][1]
assert l2["hits"] == 0 and l2["compulsory"] == l2["accesses"] < 520 and list(inherited) == [2], (l2, inherited)
# hand-derived: 512 lines fill each of the 64 sets with 8: every read pass hits
assert l1["hits"] == passes * 512 and l1["capacity"] == 0 and l1["conflict"] == 0, l1
assert e["simulation"] > 0.95 and e["model"] < 0.5, e
print(f"exact fit: simulation {100 * e['simulation']:.1f} %, SDCM {100 * e['model']:.1f} %, shift {100 * e['band_shift']:+.1f} pp")
l1, e, _ = check_cyclic("above", -1)
# 576 lines: 9 per set, LRU evicts each one access before its reuse: no hit at all
assert l1["hits"] == 0 and l1["capacity"] == passes * 576 and l1["conflict"] == 0, l1
print(f"just above: simulation {100 * e['simulation']:.1f} %, SDCM {100 * e['model']:.1f} %, shift {100 * e['band_shift']:+.1f} pp")

r, c, txt, page = load("conflict")
es = [e for e in c["model_assumptions"] if e["level"] == 1]
assert [e["reason"] for e in es] == ["set_conflicts"], es
e = es[0]
lv = c["simulation"]["levels"][0]
misses = lv["accesses"] - lv["hits"]
assert abs(e["conflict_share"] - lv["conflict"] / misses) < 1e-6 and e["conflict_share"] > 0.9, (e, lv)
assert e["site"] == f"conflict_prog.c:{culprit} main" and e["site_conflict_misses"] == lv["conflict"], e
# rows 4096 bytes apart are 64 lines apart: line mod 64 sets is the same set for all
assert (e["stride_bytes"], e["sets_reached"], e["sets"]) == (4096, 1, 64), e
rest = check_warning(txt, page, c, e)
m = re.fullmatch(r"; ([0-9]+) % of its misses are conflict misses: set conflicts, outside the model's assumptions "
                 r"\(SDCM places lines in sets at random\); most at (\S+) main \(([0-9,]+) of them\), whose "
                 r"accesses step 4,096 bytes and reach 1 of the 64 sets", rest)
assert m and int(m.group(1)) == round(100 * e["conflict_share"]), rest
assert int(m.group(3).replace(",", "")) == lv["conflict"], rest
print(f"conflicts: simulation {100 * e['simulation']:.1f} %, SDCM {100 * e['model']:.1f} %, {100 * e['conflict_share']:.0f} % conflict misses")

r, c, txt, page = load("stream")
assert "model_assumptions" not in c and not warnings(txt) and "Warning:" not in page, warnings(txt)
lv = c["simulation"]["levels"][0]
# two passes over 32,768 lines of 8 doubles: 7 of each line's 8 accesses hit
assert lv["accesses"] >= 2 * 32768 * 8 and lv["hits"] == 2 * 32768 * 7, lv
print("stream: no warning")
PY
echo "sdcm assumptions ok"
