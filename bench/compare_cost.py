#!/usr/bin/env python3
"""The cost of `pes-replay --compare SAMPLED FULL` against a plain
`pes-replay FULL` of the same full trace (its default analyses): CPU time
(user + system) and peak RSS of each, on bench kernels recorded once with
`pes-collect --mode reuse --full --backend soft` (sampled and full trace of
one execution). Timed through bench/rusage_run.c; best CPU time and largest
peak of --repeat interleaved runs.

usage: bench/compare_cost.py [--build build] [--out bench/out] [--repeat 1]
                             [--cases atax:1500:2,is:65536:4,is:524288:4]
A case is KERNEL:SIZE:THREADS (bench/kernels/KERNEL.c run with SIZE under
OMP_NUM_THREADS=THREADS). Prints a markdown table and writes
OUT/compare_cost.{md,json}.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CASES = "atax:1500:2,is:65536:4,is:524288:4"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--cases", default=DEFAULT_CASES,
                    help=f"comma-separated KERNEL:SIZE:THREADS (default {DEFAULT_CASES}: 11 M, 11 M, 89 M accesses)")
    ap.add_argument("--period", type=int, default=100000, help="sampling period of the sampled trace")
    ap.add_argument("--mode", default="reuse", help="pes-collect --mode of the sampled trace")
    ap.add_argument("--repeat", type=int, default=1, help="interleaved repetitions (best CPU, largest RSS)")
    ap.add_argument("--replay", action="append", default=[], metavar="LABEL=PATH",
                    help="also time another pes-replay binary (an older build) on the same traces")
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "compare_cost")
    os.makedirs(work, exist_ok=True)
    runner = benchlib.build_runner(work)
    rows = []
    for case in benchlib.csv(a.cases):
        kernel, size, threads = case.split(":")
        exe = os.path.join(work, kernel)
        if not os.path.exists(exe):
            subprocess.run([os.path.join(b, "pes-clang"), "-O2", "-fopenmp",
                            os.path.join(ROOT, "bench", "kernels", f"{kernel}.c"), "-o", exe], check=True)
        sampled, full = os.path.join(work, f"{kernel}-{size}.s.zst"), os.path.join(work, f"{kernel}-{size}.f.zst")
        subprocess.run([os.path.join(b, "pes-collect"), "--mode", a.mode, "--full", "--backend", "soft", "--period",
                        str(a.period), "--seed", "1", "-q", "--force", "-o", sampled, "--full-output", full, "--",
                        exe, size], check=True, stdout=subprocess.DEVNULL,
                       env=benchlib.omp_env(int(threads)))
        replay = os.path.join(b, "pes-replay")
        variants = {"plain": [replay, full, "-o", "/dev/null"],
                    "compare": [replay, "--compare", sampled, full, "-o", "/dev/null"]}
        for other in a.replay:
            label, path = other.split("=", 1)
            variants[f"compare {label}"] = [path, "--compare", sampled, full, "-o", "/dev/null"]
        best = {k: (float("inf"), 0) for k in variants}
        for _ in range(a.repeat):
            for k, cmd in variants.items():
                cpu, rss, _wall = benchlib.run_cost(runner, cmd)
                best[k] = (min(best[k][0], cpu), max(best[k][1], rss))
        info = json.loads(subprocess.run([replay, "--compare", sampled, full, "--format", "json"], check=True,
                                         stdout=subprocess.PIPE, text=True).stdout)
        rows.append(dict(kernel=kernel, size=int(size), threads=int(threads), accesses=info["accesses"],
                         plain_cpu_s=best["plain"][0], plain_rss_kib=best["plain"][1],
                         compare_cpu_s=best["compare"][0], compare_rss_kib=best["compare"][1],
                         cpu_ratio=best["compare"][0] / best["plain"][0],
                         rss_ratio=best["compare"][1] / best["plain"][1],
                         others={k: dict(cpu_s=v[0], rss_kib=v[1]) for k, v in best.items()
                                 if k not in ("plain", "compare")}))
        os.remove(sampled)
        os.remove(full)

    lines = [f"`pes-replay --compare` against a plain `pes-replay` of the same full trace "
             f"(`bench/compare_cost.py --cases {a.cases}`; mode {a.mode}, period {a.period}; "
             f"CPU = user + system, best of {a.repeat})", "",
             "| kernel | size | threads | accesses | plain CPU (s) | --compare CPU (s) | CPU ratio "
             "| plain RSS (MiB) | --compare RSS (MiB) | RSS ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['size']} | {r['threads']} | {r['accesses']:,} | {r['plain_cpu_s']:.2f} "
                     f"| {r['compare_cpu_s']:.2f} | {r['cpu_ratio']:.2f}x | {r['plain_rss_kib'] / 1024:.0f} "
                     f"| {r['compare_rss_kib'] / 1024:.0f} | {r['rss_ratio']:.1f}x |")
    for r in rows:
        for k, v in r["others"].items():
            lines.append(f"| {r['kernel']} ({k}) | {r['size']} | {r['threads']} | {r['accesses']:,} "
                         f"| {r['plain_cpu_s']:.2f} | {v['cpu_s']:.2f} | {v['cpu_s'] / r['plain_cpu_s']:.2f}x "
                         f"| {r['plain_rss_kib'] / 1024:.0f} | {v['rss_kib'] / 1024:.0f} "
                         f"| {v['rss_kib'] / r['plain_rss_kib']:.1f}x |")
    benchlib.write_outputs(a.out, "compare_cost", "\n".join(lines),
                           dict(rows=rows, cases=a.cases, mode=a.mode, period=a.period, repeat=a.repeat))


if __name__ == "__main__":
    main()
