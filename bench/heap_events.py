#!/usr/bin/env python3
"""Heap events in sampled traces (issue 31): bench/micro/alloc_heavy.cpp (a
std::map / std::list workload, many small new/delete) built with pes-clang++
and run under --mode samples (soft backend) with heap recording on and with
--no-heap. For each run: samples, events, events per sample, trace size.
Without heap recording a sampled trace has about one event per sample (plus a
few per thread); every allocation and free adds one.

Several builds can be compared (--builds before after): each build's
pes-clang++ and pes-collect run the same workload with the same seed.

usage: bench/heap_events.py [--builds build ...] [--rounds 200] [--period 100000]
                            [--out bench/out]
Prints a markdown table and writes OUT/heap_events.{md,json}.
"""
import argparse
import os
import re
import subprocess

from benchlib import ROOT, write_outputs

SUMMARY = re.compile(r"pes-collect: \S+: [^,]+, (\d+) threads?, (\d+) events: (\d+) samples")


def run(build, work, rounds, period, heap):
    binp = os.path.join(build, "bin")
    exe = os.path.join(work, os.path.basename(os.path.normpath(build)) + ".alloc_heavy")
    if not os.path.exists(exe):
        subprocess.run([os.path.join(binp, "pes-clang++"), "-O2",
                        os.path.join(ROOT, "bench", "micro", "alloc_heavy.cpp"), "-o", exe], check=True)
    out = exe + (".heap" if heap else ".noheap") + ".zst"
    cmd = [os.path.join(binp, "pes-collect"), "--force", "--mode", "samples", "--backend", "soft",
           "--period", str(period), "--seed", "1", "-o", out]
    if not heap:
        cmd.append("--no-heap")
    p = subprocess.run(cmd + ["--", exe, str(rounds)], capture_output=True, text=True, check=True)
    m = SUMMARY.search(p.stderr)
    if not m:
        raise SystemExit(f"no summary line from pes-collect: {p.stderr.strip()}")
    threads, events, samples = (int(g) for g in m.groups())
    return {"build": build, "heap": heap, "threads": threads, "events": events, "samples": samples,
            "events_per_sample": events / samples if samples else None,
            "bytes": os.path.getsize(out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", nargs="+", default=[os.path.join(ROOT, "build")])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--period", type=int, default=100000)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    work = os.path.join(a.out, "heap_events")
    os.makedirs(work, exist_ok=True)
    rows = [run(b, work, a.rounds, a.period, heap) for b in a.builds for heap in (True, False)]
    lines = [f"alloc_heavy {a.rounds} rounds, --mode samples --backend soft --period {a.period}",
             "",
             "| build | heap events | samples | events | events / sample | trace size |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        eps = f"{r['events_per_sample']:.2f}" if r["events_per_sample"] is not None else "-"
        lines.append(f"| {os.path.basename(os.path.normpath(r['build']))} | "
                     f"{'recorded' if r['heap'] else '--no-heap'} | {r['samples']} | {r['events']} | "
                     f"{eps} | {r['bytes'] / 1024:.1f} KiB |")
    write_outputs(a.out, "heap_events", "\n".join(lines),
                  {"rounds": a.rounds, "period": a.period, "rows": rows})


if __name__ == "__main__":
    main()
