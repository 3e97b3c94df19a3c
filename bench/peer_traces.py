#!/usr/bin/env python3
"""Reuse histograms from other tools' traces: pes-replay end to end on the
three address traces of issue 11 (bench/peer_trace_gen.c: uniform random 20 M
accesses over 1 M lines, cyclic 20 M over 100 K lines, matmul 256^3 ijk, 67 M),
written in the formats pes-replay reads (one hex address per line as PARDA and
libCacheSim read, valgrind lackey, little-endian binary), and peers on the
same files where the user has them built (never vendored):

  PES_PEER_PARDA="/path/parda.x --input={trace} --lines={lines}"
  PES_PEER_OLKEN="/path/online_mrc {trace}"

({trace}: the addr-format file; {lines}: its line count). All variants run
interleaved round-robin, best of --repeat; pes-replay with --jobs 1 (exact PRD
and CRD, SDCM), and the reader alone is not timed separately.

usage: bench/peer_traces.py [--build build] [--out bench/out] [--repeat 3]
                            [--formats addr,binary64] [--traces uniform,cyclic,matmul]
Prints a markdown table and writes OUT/peer_traces.{md,json}.
"""
import argparse
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ACCESSES = {"uniform": 20_000_000, "cyclic": 20_000_000, "matmul": 4 * 256 ** 3}
SUFFIX = {"addr": "txt", "lackey": "lackey", "binary64": "bin"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(benchlib.ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(benchlib.ROOT, "bench", "out"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default="addr,binary64")
    ap.add_argument("--traces", default="uniform,cyclic,matmul")
    a = ap.parse_args()
    formats, traces = a.formats.split(","), a.traces.split(",")
    for f in formats:
        if f not in SUFFIX:
            sys.exit(f"peer_traces.py: unknown format '{f}' (addr, lackey, binary64)")
    for t in traces:
        if t not in ACCESSES:
            sys.exit(f"peer_traces.py: unknown trace '{t}' (uniform, cyclic, matmul)")
    work = os.path.join(a.out, "peer_traces")
    os.makedirs(work, exist_ok=True)
    gen = os.path.join(a.build, "bin", "peer_trace_gen")
    replay = os.path.join(a.build, "bin", "pes-replay")
    runner = benchlib.build_runner(work)
    peers = {name: os.environ[var] for name, var in (("PARDA", "PES_PEER_PARDA"), ("Olken", "PES_PEER_OLKEN"))
             if os.environ.get(var)}

    variants, files = {}, {}
    for t in traces:
        for f in set(formats) | ({"addr"} if peers else set()):
            path = os.path.join(work, f"{t}.{SUFFIX[f]}")
            subprocess.run([gen, t, f, path], check=True)
            files[(t, f)] = path
        for f in formats:
            variants[(t, f"pes-replay ({f})")] = [replay, files[(t, f)], "--machine", "haswell", "--jobs", "1",
                                                  "--format", "json"]
        for name, template in peers.items():
            cmd = template.format(trace=files[(t, "addr")], lines=ACCESSES[t])
            variants[(t, name)] = shlex.split(cmd)
    best = benchlib.interleaved(runner, {k: v for k, v in variants.items()}, os.environ.copy(), a.repeat)

    cols = [f"pes-replay ({f})" for f in formats] + list(peers)
    head = "| trace | accesses | " + " | ".join(f"{c} s (M acc/s)" for c in cols) + " |"
    rows = [head, "|" + "---|" * (2 + len(cols))]
    data = []
    for t in traces:
        cells = []
        for c in cols:
            s, rss = best[(t, c)]
            cells.append(f"{s:.2f} ({ACCESSES[t] / s / 1e6:.1f})")
            data.append({"trace": t, "tool": c, "accesses": ACCESSES[t], "seconds": s, "peak_rss_kib": rss})
        rows.append(f"| {t} | {ACCESSES[t] / 1e6:.0f} M | " + " | ".join(cells) + " |")
    benchlib.write_outputs(a.out, "peer_traces", "\n".join(rows), data)


if __name__ == "__main__":
    main()
