#!/usr/bin/env python3
"""Checks the interleave estimator's model (docs/accuracy.md, "Communication
volume from the sampled interleaving") with the timeline known exactly.

Reads a FULL trace (pes-dump --format json, slow: about a minute per 10 M
records), takes each thread's segments between consecutive time marks (its
accesses spread evenly, as the merge spreads them), each segment's accesses
and stores per cache line, and integrates the model's owner-change rate
2 λ_i λ_j / Λ × (1 − (1 − s_i)(1 − s_j)) over time for every line that two
threads or more access. Prints the model's transfers per line in the
convention of `pes-replay --compare` (symmetric matrix sum: every transfer
counted twice), to set against its comm_volume_true for the same trace.

  python3 bench/comm_model_check.py --bin build/bin FULL.zst
"""
import argparse
import collections
import json
import os
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("PES_BIN", "build/bin"))
    ap.add_argument("--min-accesses", type=int, default=100, help="lines with fewer accesses per thread are skipped")
    ap.add_argument("full")
    args = ap.parse_args()
    p = subprocess.Popen([os.path.join(args.bin, "pes-dump"), args.full, "--format", "json"],
                         stdout=subprocess.PIPE, text=True)
    segs = collections.defaultdict(list)      # thread -> [(t0, t1, {line: (accesses, stores)})]
    cur = {}                                  # thread -> [t_mark, {line: [accesses, stores]}]
    per_line = collections.defaultdict(collections.Counter)
    for l in p.stdout:
        if l.startswith('{"type":"access"'):
            d = json.loads(l)
            c = cur.get(d["thread"])
            if c is None:
                continue
            line = int(d["addr"], 16) & ~63
            a = c[1].setdefault(line, [0, 0])
            a[0] += 1
            a[1] += "W" in d.get("rw", "")
            per_line[line][d["thread"]] += 1
        elif l.startswith('{"type":"time"'):
            d = json.loads(l)
            th, t = d["thread"], d["value"]
            if th in cur:
                segs[th].append((cur[th][0], t, cur[th][1]))
            cur[th] = [t, {}]
    p.wait()
    total = 0.0
    for line, by in per_line.items():
        if sum(1 for n in by.values() if n >= args.min_accesses) < 2:
            continue
        ev = []   # (time, thread, d rate, d store rate)
        for th, s in segs.items():
            for t0, t1, lines in s:
                if t1 > t0 and line in lines:
                    a, w = lines[line]
                    ev.append((t0, th, a / (t1 - t0), w / (t1 - t0)))
                    ev.append((t1, th, -a / (t1 - t0), -w / (t1 - t0)))
        ev.sort()
        rate, store = collections.defaultdict(float), collections.defaultdict(float)
        x, i = 0.0, 0   # this line's transfers
        while i < len(ev):
            t = ev[i][0]
            while i < len(ev) and ev[i][0] == t:
                rate[ev[i][1]] += ev[i][2]
                store[ev[i][1]] += ev[i][3]
                i += 1
            if i == len(ev):
                break
            w = ev[i][0] - t
            th = [k for k, v in rate.items() if v > 1e-15]
            lam = sum(rate[k] for k in th)
            for a in range(len(th)):
                for b in range(a + 1, len(th)):
                    sa = min(1.0, store[th[a]] / rate[th[a]])
                    sb = min(1.0, store[th[b]] / rate[th[b]])
                    x += 2 * rate[th[a]] * rate[th[b]] / lam * (1 - (1 - sa) * (1 - sb)) * w
        print(f"line {line:#x}: accesses per thread {dict(by)}, model transfers x 2 = {2 * x:.0f}")
        total += 2 * x
    print(f"all lines: model transfers x 2 = {total:.0f} (compare with pes-replay --compare's comm_volume_true)")


if __name__ == "__main__":
    main()
