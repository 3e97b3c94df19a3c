#!/usr/bin/env python3
"""test_sequences.py — sequences.py (the twins' checker) on hand-made dump
pairs: the runtime's later blocks at a freed block's place do not rename an
access made while the program's block was live, and the check stays strict (an
access moved inside its block, to another live block, out of its block or to
a freed block's place differs). Each case says whether the pair must pass and,
if it passes, how many records it compares."""
import os
import subprocess
import sys
import tempfile

# SEQUENCES=path: another version of the checker (the one before live blocks
# fails the first case)
CHECKER = os.environ.get("SEQUENCES") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "sequences.py")
PROG, LIBOMP = "0x401000", "0x7f0000"  # allocation call sites


def alloc(t, base, size, site=PROG, n=1):
    return [f"T{t} alloc {base} site {n} (malloc at {site})", f"T{t} alloc_size {size}"]


def access(t, addr, rw="R", size=8):
    return [f"T{t} access  {addr} {size} {rw}  k.c:1:1 (site 7)"]


def stack(t, base, size=4096):
    return [f"T{t} alloc {base} thread stack", f"T{t} alloc_size {size}"]


def program(t0_after_free, t1=None, before=None, early=None):
    """T0 allocates P (64 B, 0x1000) and Q (64 B, 0x2000), reads them, frees
    P; then what the runtime does (t0_after_free). T1's records follow."""
    early = early or access(0, "0x1008") + access(0, "0x1030", "W") + access(0, "0x2008")
    lines = ["T0 time 100"] + stack(0, "0x7000") + (before or [])
    lines += alloc(0, "0x1000", 64) + alloc(0, "0x2000", 64) + early
    lines += access(0, "0x7ff0") + ["T0 free 0x1000"] + t0_after_free + ["T0 time 900"]
    return lines + (t1 or [])


def run(x, y):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, lines in (("a.dump", x), ("b.dump", y)):
            paths.append(os.path.join(d, name))
            with open(paths[-1], "w") as f:
                f.write("# pes trace\n" + "\n".join(lines) + "\n")
        p = subprocess.run([sys.executable, CHECKER, *paths], capture_output=True, text=True)
        return p.returncode, p.stdout.strip(), p.stderr.strip()


failures = 0


def case(what, x, y, ok, records=None, says=None):
    global failures
    rc, out, err = run(x, y)
    good = (rc == 0) == ok and (records is None or out == str(records)) and (says is None or says in err)
    print(f"{'ok  ' if good else 'FAIL'} {what}: rc {rc} {out or err}")
    failures += not good


# The cg failure: libomp allocates 32-byte blocks from one site where P was,
# a different number of them and in another order in the two runs (which
# thread frees which reduction block). P's early accesses keep P's name.
runtime1 = alloc(0, "0x1010", 32, LIBOMP) + alloc(0, "0x1030", 32, LIBOMP)
runtime2 = alloc(0, "0x5000", 32, LIBOMP) + ["T0 free 0x5000"] + alloc(0, "0x1010", 32, LIBOMP) + \
    alloc(0, "0x1030", 32, LIBOMP) + alloc(0, "0x5000", 32, LIBOMP)
case("runtime blocks later at a freed block's place", program(runtime1), program(runtime2), True,
     records=4)

# the same pair, one access moved by 8 bytes inside P
case("an access moved by 8 bytes", program(runtime1),
     program(runtime2, early=access(0, "0x1010") + access(0, "0x1030", "W") + access(0, "0x2008")),
     False, says="H0@0x401000:64#1+8 8 R")

# moved to the other live block of the same site and size (Q = #2, same offset)
case("an access moved to another live block", program(runtime1),
     program(runtime2, early=access(0, "0x2008") + access(0, "0x1030", "W") + access(0, "0x2008")),
     False, says="H0@0x401000:64#2+8")

# moved out of its block: 8 bytes past P's end, where nothing is live
case("an access moved out of its block", program(runtime1),
     program(runtime2, early=access(0, "0x1008") + access(0, "0x1040", "W") + access(0, "0x2008")),
     False, says="0x1040")

# A freed block is no candidate: after P's free, both runs read at P's old
# place; in one a new program block R took it, in the other nothing did
late = alloc(0, "0x1000", 48, "0x402000") + access(0, "0x1008")
late_elsewhere = alloc(0, "0x3000", 48, "0x402000") + access(0, "0x1008")
case("an access to a freed block's place", program(late), program(late_elsewhere), False,
     says="H0@0x402000:48#1+8")
# ...and the same block read where each run put it is the same access
case("a block read where each run put it", program(late),
     program(alloc(0, "0x3000", 48, "0x402000") + access(0, "0x3008")), True, records=7)

# Another thread: T1 (its stack elsewhere in each run) reads Q, which T0
# allocated before T1's first time mark, and frees its own runtime block
t1 = ["T1 time 1000"] + stack(1, "0x9000") + access(1, "0x2010") + \
    alloc(1, "0x8000", 32, LIBOMP) + access(1, "0x9ff8", "W") + ["T1 free 0x8000", "T1 time 1100"]
t1_moved = ["T1 time 1000"] + stack(1, "0xa000") + access(1, "0x2010") + \
    alloc(1, "0x8100", 32, LIBOMP) + access(1, "0xaff8", "W") + ["T1 free 0x8100", "T1 time 1100"]
case("another thread's block and its own stack", program(runtime1, t1), program(runtime2, t1_moved),
     True, records=8)
case("another thread's access moved", program(runtime1, t1),
     program(runtime2, [r.replace("0x2010", "0x2018") for r in t1_moved]), False,
     says="T1: ")
# T0 frees Q at time 900 and libomp takes its place: T1's read of that place
# after its next mark (1000 > 900) is no access to Q any more
freed_q = runtime1 + ["T0 free 0x2000"] + alloc(0, "0x2000", 64, LIBOMP)
freed_q2 = runtime2 + ["T0 free 0x2000"] + alloc(0, "0x6000", 64, LIBOMP)
case("another thread reads a place freed before its time mark", program(freed_q, t1),
     program(freed_q2, [r.replace("0x2010", "0x6010") for r in t1_moved]), True, records=8)
case("...and reads the freed place itself in one run", program(freed_q, t1),
     program(freed_q2, t1_moved), False, says="0x2010")

sys.exit(1 if failures else 0)
