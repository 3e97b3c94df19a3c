#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_sampled (tests/fuzz/sampled_seeds/): small
sampled traces in the target's input layout (see fuzz_sampled.c), one per
collector mode. usage: make_sampled_seeds.py DIR"""
import os
import struct
import sys

SAMPLE, REUSE, INVAL, COMM, LOST, THROTTLE, DROPPED, TOTALS, EXPIRED = range(1, 10)
WRITE, TRAP_WRITE, SPATIAL, SHARED, TRUE_SH, FALSE_SH = (1 << i for i in range(6))
NONE = 0xFFFFFFFF


def event(kind, thread, flags=0, other=NONE, site=0, addr=0x1000, time=0, loads=0, stores=0,
          distance=0, aux=0, size=8, stack=NONE):
    # stack (format version 3): folded by the target into its call stacks or none
    return struct.pack('<BBHIIIQQQQQQQI4x', kind, flags, size, thread, other, site, addr, 0x401000,
                       time, loads, stores, distance, aux, stack)


def seed(threads, periods, flags, events):
    return bytes([threads - 1]) + struct.pack('<6H', *periods) + bytes([flags]) + b''.join(events)


seeds = {
    'reuse': seed(2, (211, 211, 64, 4, 8, 0), 1 << 1, [
        event(SAMPLE, 0, loads=100, stores=20, time=10),
        event(REUSE, 0, other=0, distance=37, aux=3, time=20),
        event(SAMPLE, 1, site=2, flags=WRITE, loads=50, time=15),
        event(INVAL, 0, other=1, site=1, aux=1, time=30),
        event(REUSE, 1, other=1, site=3, distance=1 << 20, time=40),
        event(LOST, 1, aux=5, site=NONE),
        event(EXPIRED, 0, site=NONE),
        event(TOTALS, 0, loads=1000, stores=300, site=NONE),
        event(TOTALS, 1, loads=800, stores=100, site=NONE)]),
    'shared': seed(4, (97, 97, 64, 4, 8, 2), 1 | 2 << 1, [
        event(SAMPLE, 2, loads=10, time=5),
        event(REUSE, 2, flags=SHARED | SPATIAL, other=3, distance=900, time=9),
        event(INVAL, 3, flags=SHARED, other=0, site=2, time=11),
        event(THROTTLE, 0, aux=2, site=NONE),
        event(DROPPED, 1, aux=7, site=NONE)]),
    'comm': seed(2, (500, 400, 64, 4, 8, 0), 3 << 1, [
        event(SAMPLE, 0, flags=WRITE, site=3, time=1, stack=1),
        event(COMM, 1, flags=TRUE_SH | WRITE, other=0, site=3, aux=0),
        event(COMM, 0, flags=FALSE_SH, other=1, site=1, aux=1),
        event(COMM, 1, flags=FALSE_SH, other=1, site=0, aux=1)]),
}
for name, data in seeds.items():
    with open(os.path.join(sys.argv[1], name), 'wb') as f:
        f.write(data)
