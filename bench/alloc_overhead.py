#!/usr/bin/env python3
"""Cost of recording heap blocks: bench/micro/malloc_churn.c (N malloc(32) /
free pairs, no other memory access) built with plain clang and with
pes-clang, the latter run with tracing off, sampled (--mode samples, soft
backend: every pair is an alloc and a free event) and full (every pair is
ALLOC, ALLOC_SIZE and FREE records). The variants run interleaved
round-robin, each keeps its best of --repeat runs (benchlib.interleaved).

Per pair: (variant - plain) / N nanoseconds of wall time (the whole run: the
collector's start-up, its encoder threads, its final flush); "recording" =
(variant - off) / N, what recording adds over the interposer's forwarding.
"loop CPU": the program's own measure of its loop, in CPU time of its thread
(best of --repeat runs): what the application thread pays per pair, apart
from the encoder threads, and less disturbed by other load on the machine.

usage: bench/alloc_overhead.py [--build build] [--pairs 10000000] [--repeat 5]
                               [--out bench/out]
Prints a markdown table and writes OUT/alloc_overhead.{md,json}.
"""
import argparse
import os
import re
import subprocess
import sys

from benchlib import ROOT, build_runner, interleaved, omp_env, write_outputs

VARIANTS = ["plain", "off", "sampled", "full"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--pairs", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect"))
    work = os.path.join(a.out, "alloc_overhead")
    os.makedirs(work, exist_ok=True)
    runner = build_runner(work)
    src = os.path.join(ROOT, "bench", "micro", "malloc_churn.c")
    plain, inst = os.path.join(work, "churn.plain"), os.path.join(work, "churn.pes")
    subprocess.run(["clang-19", "-O2", src, "-o", plain], check=True)
    subprocess.run([pes_clang, "-O2", src, "-o", inst], check=True)
    full, sampled = os.path.join(work, "churn.full.zst"), os.path.join(work, "churn.sampled.zst")
    n = str(a.pairs)

    commands = {
        "plain": [plain, n],
        "off": [inst, n],
        "sampled": [pes_collect, "-q", "--force", "--mode", "samples", "--backend", "soft", "-o", sampled,
                    "--", inst, n],
        "full": [pes_collect, "-q", "--force", "--full", "-o", full, "--", inst, n],
    }
    best = interleaved(runner, commands, omp_env(1), a.repeat)
    loop = {v: float("inf") for v in VARIANTS}
    for _ in range(a.repeat):
        for v in VARIANTS:
            out = subprocess.run(commands[v], env=omp_env(1), check=True, text=True,
                                 stdout=subprocess.PIPE).stdout
            m = re.search(r"loop ([0-9.]+) ns/pair", out)
            if not m:
                sys.exit(f"alloc_overhead: no loop time in the output of {v}: {out!r}")
            loop[v] = min(loop[v], float(m.group(1)))
    sizes = {"sampled": os.path.getsize(sampled), "full": os.path.getsize(full)}
    os.remove(sampled)
    os.remove(full)
    t = {v: best[v][0] for v in VARIANTS}
    rows = []
    for v in VARIANTS:
        rows.append(dict(variant=v, seconds=t[v], rss_kib=best[v][1],
                         ns_per_pair=t[v] / a.pairs * 1e9,
                         added_ns_per_pair=(t[v] - t["plain"]) / a.pairs * 1e9,
                         recording_ns_per_pair=(t[v] - t["off"]) / a.pairs * 1e9,
                         loop_cpu_ns_per_pair=loop[v],
                         loop_cpu_added_ns_per_pair=loop[v] - loop["plain"],
                         trace_bytes=sizes.get(v, 0)))
    lines = [
        f"Heap recording cost, {a.pairs} malloc(32)/free pairs, best of {a.repeat} interleaved runs "
        f"(`bench/alloc_overhead.py --pairs {a.pairs} --repeat {a.repeat}`)",
        "",
        "| variant | seconds | ns/pair | added vs plain (ns/pair) | recording vs off (ns/pair) "
        "| loop CPU (ns/pair) | loop CPU added vs plain | trace bytes | peak RSS (KiB) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['variant']} | {r['seconds']:.3f} | {r['ns_per_pair']:.1f} | "
                     f"{r['added_ns_per_pair']:.1f} | {r['recording_ns_per_pair']:.1f} | "
                     f"{r['loop_cpu_ns_per_pair']:.1f} | {r['loop_cpu_added_ns_per_pair']:.1f} | "
                     f"{r['trace_bytes']} | {r['rss_kib']} |")
    write_outputs(a.out, "alloc_overhead", "\n".join(lines), dict(pairs=a.pairs, repeat=a.repeat, rows=rows))


if __name__ == "__main__":
    main()
