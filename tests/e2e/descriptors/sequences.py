#!/usr/bin/env python3
"""sequences.py A.dump B.dump — compares the per-thread record sequences of two
`pes-dump --expand` listings of the same run (twins.sh). Time marks are
compared without their timestamps. Allocation records are not compared: the
runtime library (libomp, libc) allocates from its own threads at moments that
differ between runs; and since time marks count them too, a thread whose
allocation records differ between the runs has its time marks left out. Addresses inside a thread's stack or a heap block are
written as that block's name plus the offset: worker threads' stacks and
blocks the size of an mmap land where the collector's own buffers left room,
which moves between any two runs (call edges' stack pointers too); a block is
named by the allocating thread,
the allocation's call site (its address: the runs share one layout), its size
and its rank among such blocks. An access that moved inside its block, or out
of one, still differs. Exit 1 with the first
difference of each thread that differs."""
import bisect
import re
import sys

REC = re.compile(r"^T(\d+) (\S+)\s*(.*)$")
HEX = re.compile(r"0x[0-9a-f]+")
SP = re.compile(r"sp=(0x[0-9a-f]+)")


def parse(path):
    seqs, blocks, pending, allocs, heap = {}, [], {}, {}, {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = REC.match(line.rstrip("\n"))
        if not m:
            continue
        t, kind, rest = int(m.group(1)), m.group(2), m.group(3)
        seq = seqs.setdefault(t, [])
        if kind in ("time", "thread_end"):
            seq.append((kind,))
        elif kind == "alloc":
            base = int(rest.split()[0], 16)
            ip = rest.rsplit(" at ", 1)[-1].rstrip(")") if " at " in rest else ""
            pending[t] = (base, "stack" if "thread stack" in rest else ip)
            heap.setdefault(t, []).append(("alloc", ip))
        elif kind == "alloc_size":
            size = int(rest.split()[0])
            if t in pending:
                base, what = pending.pop(t)
                if what == "stack":
                    name = f"S{t}"
                else:
                    key = (t, what, size)
                    allocs[key] = allocs.get(key, 0) + 1
                    name = f"H{t}@{what}:{size}#{allocs[key]}"
                blocks.append((base, base + size, name))
        elif kind == "free":
            heap.setdefault(t, []).append(("free",))
        else:
            seq.append((kind, rest))
    blocks.sort()
    starts = [b[0] for b in blocks]

    def where(addr):
        i = bisect.bisect_right(starts, addr) - 1
        while i >= 0:
            lo, hi, name = blocks[i]
            if lo <= addr < hi:
                return f"{name}+{addr - lo}"
            if hi <= addr and i > 0 and blocks[i - 1][1] <= addr:
                break
            i -= 1
        return hex(addr)

    out = {}
    for t, seq in seqs.items():
        seq = [(*r, heap.get(t)) if r[0] == "time" else r for r in seq]
        norm = []
        for r in seq:
            if r[0] in ("access", "bb") or len(r) == 2 and isinstance(r[1], str):
                rest = r[1]
                m = HEX.match(rest)
                if r[0] == "access" and m:
                    rest = where(int(m.group(0), 16)) + rest[m.end():]
                sp = SP.search(rest) if r[0] in ("call", "return") else None
                if sp:  # a call edge's stack pointer: in the thread's stack
                    rest = rest[:sp.start(1)] + where(int(sp.group(1), 16)) + rest[sp.end(1):]
                norm.append((r[0], rest))
            else:
                norm.append(r)
        out[t] = norm
    return out


def same_heap_marks(x, y):
    """time marks kept where the thread's allocation records agree"""
    hx = next((r[1] for r in x if r[0] == "time"), None)
    hy = next((r[1] for r in y if r[0] == "time"), None)
    if hx == hy:
        return [r[:1] if r[0] == "time" else r for r in x], [r[:1] if r[0] == "time" else r for r in y]
    return [r for r in x if r[0] != "time"], [r for r in y if r[0] != "time"]


def main():
    a, b = parse(sys.argv[1]), parse(sys.argv[2])
    bad = 0
    if sorted(a) != sorted(b):
        print(f"threads differ: {sorted(a)} vs {sorted(b)}", file=sys.stderr)
        return 1
    total = 0
    for t in sorted(a):
        x, y = same_heap_marks(a[t], b[t])
        total += len(x)
        if x == y:
            continue
        i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        print(f"T{t}: {len(x)} vs {len(y)} records; first difference at record {i}: "
              f"{x[i] if i < len(x) else 'end'} vs {y[i] if i < len(y) else 'end'}", file=sys.stderr)
        bad = 1
    if not bad:
        print(total)
    return bad


if __name__ == "__main__":
    sys.exit(main())
