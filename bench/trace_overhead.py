#!/usr/bin/env python3
"""Full-trace cost per bench kernel: accesses, trace bytes per access, and
wall-time ratios of the instrumented build (tracing off, and pes-collect
--full) against the same source built with plain clang. All ratios come from
one run of this script on one machine (best of --repeat runs each).

usage: bench/trace_overhead.py [--build build] [--threads 2] [--repeat 3]
                               [--sizes small,medium] [--out bench/out]
Prints a markdown table and writes OUT/trace_overhead.{md,json}.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

KERNELS = ["gemm", "transpose", "jacobi2d", "trisolv", "reduction", "atax"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None, capture=True):
    return subprocess.run(cmd, env=env, check=True, text=True,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE)


def timed(cmd, env, repeat):
    """Best of `repeat` wall times: on a shared machine interference only adds time."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


def access_count(pes_dump, trace):
    out = run([pes_dump, "--stats", trace]).stdout
    m = re.search(r"records\s+access\s+(\d+)", out)
    if not m:
        sys.exit(f"trace_overhead: cannot read the access count of {trace} from pes-dump --stats")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default="small,medium")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect, pes_dump = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect", "pes-dump"))
    work = os.path.join(a.out, "trace_overhead")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="false")

    rows = []
    for k in a.kernels.split(","):
        src = os.path.join(ROOT, "bench", "kernels", f"{k}.c")
        plain, inst = os.path.join(work, f"{k}.plain"), os.path.join(work, f"{k}.pes")
        run(["clang-19", "-O2", "-fopenmp", src, "-o", plain])
        run([pes_clang, "-O2", "-fopenmp", src, "-o", inst])
        for size in a.sizes.split(","):
            trace = os.path.join(work, f"{k}.{size}.full.zst")
            t_plain = timed([plain, size], env, a.repeat)
            t_off = timed([inst, size], env, a.repeat)
            t_full = timed([pes_collect, "-q", "--full", "--force", "-o", trace, "--", inst, size], env, a.repeat)
            acc = access_count(pes_dump, trace)
            nbytes = os.path.getsize(trace)
            rows.append(dict(kernel=k, size=size, threads=a.threads, accesses=acc, trace_bytes=nbytes,
                             bytes_per_access=nbytes / acc, plain_s=t_plain, off_s=t_off, full_s=t_full,
                             off_ratio=t_off / t_plain, full_ratio=t_full / t_plain))
            os.remove(trace)
            print(f"  {k} {size}: {acc} accesses, {nbytes / acc:.4f} B/access, full {t_full / t_plain:.2f}x",
                  file=sys.stderr)

    med_bpa = statistics.median(r["bytes_per_access"] for r in rows)
    med_full = statistics.median(r["full_ratio"] for r in rows)
    med_off = statistics.median(r["off_ratio"] for r in rows)
    lines = [
        f"Full-trace cost, {a.threads} OpenMP threads, best of {a.repeat} runs "
        f"(`bench/trace_overhead.py --threads {a.threads} --repeat {a.repeat} --sizes {a.sizes}`)",
        "",
        "| kernel | size | accesses | trace bytes | bytes/access | plain (s) | instrumented, off | full trace |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['size']} | {r['accesses']:,} | {r['trace_bytes']:,} | "
                     f"{r['bytes_per_access']:.4f} | {r['plain_s']:.3f} | {r['off_ratio']:.2f}x | "
                     f"{r['full_ratio']:.2f}x |")
    lines.append(f"| **median** | | | | **{med_bpa:.4f}** | | **{med_off:.2f}x** | **{med_full:.2f}x** |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out, "trace_overhead.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(a.out, "trace_overhead.json"), "w") as f:
        json.dump(dict(rows=rows, median_bytes_per_access=med_bpa, median_full_ratio=med_full,
                       median_off_ratio=med_off, threads=a.threads, repeat=a.repeat), f, indent=1)


if __name__ == "__main__":
    main()
