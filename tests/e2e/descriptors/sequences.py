#!/usr/bin/env python3
"""sequences.py A.dump B.dump — compares the per-thread record sequences of two
`pes-dump --expand` listings of the same run (twins.sh). Time marks are
compared without their timestamps. Allocation records are not compared: the
runtime library (libomp, libc) allocates from its own threads at moments that
differ between runs; and since time marks count them too, a thread whose
allocation records differ between the runs has its time marks left out.

Addresses inside a thread's stack or a heap block are written as that block's
name plus the offset: worker threads' stacks and blocks the size of an mmap
land where the collector's own buffers left room, which moves between any two
runs (call edges' stack pointers too); a block is named by the allocating
thread, the allocation's call site (its address: the runs share one layout),
its size and its rank among such blocks.

An address is named by the block that is live at that point of the thread's
sequence: the thread's own allocations and frees take effect in record order,
a freed block is no candidate. Why: libomp allocates and frees blocks of one
site and size in every reduction, on whichever thread gets there, often where
the program freed an array before; naming an early access by any block that
ever covered the address made its name depend on how many such blocks the
runtime made later (cg at 2 threads failed once in three runs so). Another
thread's allocations and frees are ordered against this thread's records by
the time marks around them, taken as early (an allocation) or as late (a free)
as the marks allow; of two live blocks at one place, the one allocated last.

An access that moved inside its block, to another block or out of one still
differs. Exit 1 with the first difference of each thread that differs."""
import bisect
import re
import sys

REC = re.compile(r"^T(\d+) (\S+)\s*(.*)$")
HEX = re.compile(r"0x[0-9a-f]+")
SP = re.compile(r"sp=(0x[0-9a-f]+)")
INF = float("inf")


class Block:
    __slots__ = ("lo", "hi", "name", "thread", "pos", "lb", "freed")

    def __init__(self, lo, hi, name, thread, pos, lb):
        self.lo, self.hi, self.name = lo, hi, name
        self.thread, self.pos, self.lb = thread, pos, lb
        self.freed = None  # (thread, position, latest time) of its free


def read(path):
    """per thread: its records in order, as (kind, rest)"""
    raw = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = REC.match(line.rstrip("\n"))
        if m:
            raw.setdefault(int(m.group(1)), []).append((m.group(2), m.group(3)))
    return raw


def time_bounds(recs):
    """per record: the timestamps of the time marks before and after it"""
    lb, ub, last = [], [0] * len(recs), -INF
    for kind, rest in recs:
        if kind in ("time", "thread_end"):
            last = int(rest.split()[0])
        lb.append(last)
    nxt = INF
    for i in range(len(recs) - 1, -1, -1):
        kind, rest = recs[i]
        if kind in ("time", "thread_end"):
            nxt = int(rest.split()[0])
        ub[i] = nxt
    return lb, ub


def heap_blocks(raw, bounds):
    """every block with its allocation, and the free that ends it"""
    blocks, frees = [], []  # frees: (thread, position, addr, earliest, latest time)
    for t, recs in raw.items():
        lb, ub = bounds[t]
        ranks, pending = {}, None
        for p, (kind, rest) in enumerate(recs):
            if kind == "alloc":
                base = int(rest.split()[0], 16)
                ip = rest.rsplit(" at ", 1)[-1].rstrip(")") if " at " in rest else ""
                pending = (base, "stack" if "thread stack" in rest else ip, p)
            elif kind == "alloc_size" and pending:
                base, what, ap = pending
                pending = None
                size = int(rest.split()[0])
                if what == "stack":
                    name = f"S{t}"
                else:
                    key = (what, size)
                    ranks[key] = ranks.get(key, 0) + 1
                    name = f"H{t}@{what}:{size}#{ranks[key]}"
                blocks.append(Block(base, base + size, name, t, ap, lb[ap]))
                if what == "stack" and recs[-1][0] == "thread_end":
                    # a stack ends with its thread (no FREE follows)
                    blocks[-1].freed = (t, len(recs) - 1, ub[-1])
            elif kind == "free":
                addr = int(rest.split()[0], 16)
                frees.append((t, p, addr, lb[p], ub[p]))
    # A free ends the block at its address that its thread allocated last
    # before it; else another thread's, the last one allocated (by its time
    # mark) before the free's latest time.
    at = {}
    for b in blocks:
        at.setdefault(b.lo, []).append(b)
    for t, p, addr, _, latest in sorted(frees, key=lambda f: (f[4], f[0], f[1])):
        cands = [b for b in at.get(addr, ()) if b.freed is None]
        own = [b for b in cands if b.thread == t and b.pos < p]
        other = [b for b in cands if b.thread != t and b.lb <= latest]
        pick = (max(own, key=lambda b: b.pos) if own else
                max(other, key=lambda b: (b.lb, b.thread, b.pos)) if other else None)
        if pick:
            pick.freed = (t, p, latest)
    return blocks


class Live:
    """the blocks live at one point: at most a few share a start"""

    def __init__(self):
        self.starts, self.at = [], {}

    def add(self, b):
        if b.lo not in self.at:
            bisect.insort(self.starts, b.lo)
            self.at[b.lo] = []
        self.at[b.lo].append(b)

    def remove(self, b):
        blocks = self.at.get(b.lo)
        if blocks and b in blocks:
            blocks.remove(b)
            if not blocks:
                del self.at[b.lo]
                del self.starts[bisect.bisect_left(self.starts, b.lo)]

    def name(self, addr):
        # live heap blocks do not overlap: the nearest start is the one; a
        # few more only where the time marks left two blocks live at once
        i = bisect.bisect_right(self.starts, addr) - 1
        for j in range(i, max(i - 8, -1), -1):
            for b in reversed(self.at[self.starts[j]]):
                if addr < b.hi:
                    return f"{b.name}+{addr - b.lo}"
        return hex(addr)


def normalise(t, recs, bounds, blocks):
    """thread t's records, allocation records left out, addresses named"""
    lb, ub = bounds[t]
    own_alloc = {b.pos: b for b in blocks if b.thread == t}
    own_free = {b.freed[1]: b for b in blocks if b.freed and b.freed[0] == t}
    # another thread's block: live from the earliest time its allocation may
    # have had until the latest its free may have had
    starts = sorted((b for b in blocks if b.thread != t), key=lambda b: (b.lb, b.thread, b.pos))
    ends = sorted((b for b in blocks if b.freed and b.freed[0] != t),
                  key=lambda b: (b.freed[2], b.freed[0], b.freed[1]))
    live, si, ei, heap, norm = Live(), 0, 0, [], []
    for p, (kind, rest) in enumerate(recs):
        while si < len(starts) and starts[si].lb <= ub[p]:
            live.add(starts[si])
            si += 1
        while ei < len(ends) and ends[ei].freed[2] < lb[p]:
            live.remove(ends[ei])
            ei += 1
        if kind == "alloc":
            heap.append(("alloc", rest.rsplit(" at ", 1)[-1].rstrip(")") if " at " in rest else ""))
        elif kind == "alloc_size":
            if p - 1 in own_alloc:
                live.add(own_alloc[p - 1])
        elif kind == "free":
            heap.append(("free",))
            if p in own_free:
                live.remove(own_free[p])
        elif kind in ("time", "thread_end"):
            norm.append((kind,))
        else:
            m = HEX.match(rest)
            if kind == "access" and m:
                rest = live.name(int(m.group(0), 16)) + rest[m.end():]
            sp = SP.search(rest) if kind in ("call", "return") else None
            if sp:  # a call edge's stack pointer: in the thread's stack
                rest = rest[:sp.start(1)] + live.name(int(sp.group(1), 16)) + rest[sp.end(1):]
            norm.append((kind, rest))
    # a thread's time marks carry its allocation records (same_heap_marks)
    return [(*r, heap) if r[0] == "time" else r for r in norm]


def parse(path):
    raw = read(path)
    bounds = {t: time_bounds(recs) for t, recs in raw.items()}
    blocks = heap_blocks(raw, bounds)
    return {t: normalise(t, recs, bounds, blocks) for t, recs in raw.items()}


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
