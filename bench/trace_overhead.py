#!/usr/bin/env python3
"""Full-trace cost per bench kernel, size and thread count: accesses, trace
bytes per access, and wall-time ratios of the instrumented build (tracing off,
and pes-collect --full) against the same source built with plain clang. The
column "full, affine only" is pes-collect --full of a build with
-mllvm -pes-no-mixed: loop descriptors only for bodies whose every address is
affine, as before mixed bodies took them (its bytes per access too).

The three variants of one kernel x size x thread count run interleaved
round-robin (run 1 of each, then run 2 of each, ...) and each keeps its best
of --repeat runs, so all ratios come from one run of this script on one
machine with the same background load. Median and max rows summarise all rows
and, separately, the team-written kernels and the NPB-like ones (cg, mg, is).

usage: bench/trace_overhead.py [--build build] [--threads 1,2] [--repeat 5]
                               [--sizes small,medium] [--kernels gemm,cg,...]
                               [--out bench/out]
Prints a markdown table and writes OUT/trace_overhead.{md,json}.
"""
import argparse
import os
import re
import subprocess
import sys

from benchlib import (NPB, ROOT, build_kernel, build_runner, csv, interleaved, kernel_set, omp_env, summaries,
                      write_outputs)

KERNELS = ["gemm", "transpose", "jacobi2d", "trisolv", "reduction", "atax"]
VARIANTS = ["plain", "off", "full", "affine"]


def access_count(pes_dump, trace):
    out = subprocess.run([pes_dump, "--stats", trace], check=True, text=True, stdout=subprocess.PIPE).stdout
    m = re.search(r"records\s+access\s+(\d+)", out)
    if not m:
        sys.exit(f"trace_overhead: cannot read the access count of {trace} from pes-dump --stats")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="1,2", help="comma-separated OMP_NUM_THREADS values")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default="small,medium")
    ap.add_argument("--kernels", default=",".join(KERNELS + NPB))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    threads, sizes, kernels = csv(a.threads, int), csv(a.sizes), csv(a.kernels)
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect, pes_dump = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect", "pes-dump"))
    work = os.path.join(a.out, "trace_overhead")
    os.makedirs(work, exist_ok=True)
    runner = build_runner(work)

    rows = []
    for k in kernels:
        plain, inst, affine = build_kernel(k, work, pes_clang, affine_only=True)
        for size in sizes:
            for nt in threads:
                trace = os.path.join(work, f"{k}.{size}.t{nt}.full.zst")
                atrace = os.path.join(work, f"{k}.{size}.t{nt}.affine.zst")
                best = interleaved(runner, {"plain": [plain, size], "off": [inst, size],
                                    "full": [pes_collect, "-q", "--full", "--force", "-o", trace, "--", inst, size],
                                    "affine": [pes_collect, "-q", "--full", "--force", "-o", atrace, "--", affine,
                                               size]},
                                   omp_env(nt), a.repeat)
                acc = access_count(pes_dump, trace)  # of the last full run; every run traces the same program
                nbytes, abytes = os.path.getsize(trace), os.path.getsize(atrace)
                os.remove(trace)
                os.remove(atrace)
                t = {v: best[v][0] for v in VARIANTS}
                rows.append(dict(kernel=k, set=kernel_set(k), size=size, threads=nt, accesses=acc,
                                 trace_bytes=nbytes, bytes_per_access=nbytes / acc,
                                 affine_bytes_per_access=abytes / acc,
                                 plain_s=t["plain"], off_s=t["off"], full_s=t["full"], affine_s=t["affine"],
                                 off_ratio=t["off"] / t["plain"], full_ratio=t["full"] / t["plain"],
                                 affine_ratio=t["affine"] / t["plain"]))
                print(f"  {k} {size} {nt}t: {acc} accesses, {nbytes / acc:.4f} B/access, "
                      f"off {t['off'] / t['plain']:.2f}x, full {t['full'] / t['plain']:.2f}x, "
                      f"affine only {t['affine'] / t['plain']:.2f}x", file=sys.stderr)

    summary = summaries(rows, ["bytes_per_access", "affine_bytes_per_access", "off_ratio", "full_ratio",
                               "affine_ratio"])
    med = summary["median, all"]
    lines = [
        f"Full-trace cost, OpenMP threads {a.threads}, best of {a.repeat} interleaved runs "
        f"(`bench/trace_overhead.py --threads {a.threads} --repeat {a.repeat} --sizes {a.sizes}`)",
        "",
        "| kernel | set | size | threads | accesses | trace bytes | bytes/access | bytes/access, affine only | "
        "plain (s) | instrumented, off | full trace | full, affine only |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['set']} | {r['size']} | {r['threads']} | {r['accesses']:,} | "
                     f"{r['trace_bytes']:,} | {r['bytes_per_access']:.4f} | {r['affine_bytes_per_access']:.4f} | "
                     f"{r['plain_s']:.3f} | {r['off_ratio']:.2f}x | {r['full_ratio']:.2f}x | "
                     f"{r['affine_ratio']:.2f}x |")
    for label, v in summary.items():
        lines.append(f"| **{label}** | | | | | | **{v['bytes_per_access']:.4f}** | "
                     f"**{v['affine_bytes_per_access']:.4f}** | | **{v['off_ratio']:.2f}x** | "
                     f"**{v['full_ratio']:.2f}x** | **{v['affine_ratio']:.2f}x** |")
    write_outputs(a.out, "trace_overhead", "\n".join(lines),
                  dict(rows=rows, summary=summary, median_bytes_per_access=med["bytes_per_access"],
                       median_full_ratio=med["full_ratio"], median_off_ratio=med["off_ratio"],
                       median_affine_ratio=med["affine_ratio"],
                       threads=threads, sizes=sizes, repeat=a.repeat, interleaved=True))


if __name__ == "__main__":
    main()
