#!/usr/bin/env python3
"""Replay throughput: accesses per second and peak RSS of pes-replay on a
full trace of a bench kernel with >= 100 M accesses (exact PRD + CRD; with
--jobs 1 and --jobs 2 for the speed-up of the replay threads; and with the
cache + MESI simulation), plus the engines alone on synthetic streams
(bench/reuse_bench.c: uniform random over 1 M and 16 M distinct lines;
bench/sim_bench.c: 1, 4 and 16 simulated cores).

usage: bench/replay_throughput.py [--build build] [--n 448] [--out bench/out] [--repeat 3]
Prints markdown tables and writes OUT/replay_throughput.{md,json}.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=448, help="gemm size (448: about 136 M accesses)")
    ap.add_argument("--threads", type=int, default=2, help="OpenMP threads of the traced run")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (best of)")
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "replay_throughput")
    os.makedirs(work, exist_ok=True)
    exe, trace = os.path.join(work, "gemm"), os.path.join(work, "gemm.full.zst")
    subprocess.run([os.path.join(b, "pes-clang"), "-O2", "-fopenmp",
                    os.path.join(ROOT, "bench", "kernels", "gemm.c"), "-o", exe], check=True)
    subprocess.run([os.path.join(b, "pes-collect"), "-q", "--full", "--force", "-o", trace, "--", exe, str(a.n)],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS=str(a.threads)))
    info = json.loads(subprocess.run([os.path.join(b, "pes-replay"), trace, "--machine", "haswell", "--top", "0",
                                      "--format", "json"], check=True, stdout=subprocess.PIPE, text=True).stdout)
    accesses = info["trace"]["accesses"]

    cases = [("PRD + CRD, --jobs 1", ["--jobs", "1"]),
             ("PRD + CRD, --jobs 2", ["--jobs", "2"]),
             ("PRD + CRD + L1/L2/L3 MESI simulation, --jobs 2", ["--jobs", "2", "--simulate"])]
    runner = benchlib.build_runner(work)
    variants = {label: [os.path.join(b, "pes-replay"), trace, "--machine", "haswell", "--top", "0", "--format",
                        "json", "-o", "/dev/null"] + extra for label, extra in cases}
    best = benchlib.interleaved(runner, variants, os.environ.copy(), a.repeat)
    rows = [dict(case=label, accesses=accesses, wall_s=best[label][0], rss_kib=best[label][1],
                 maccess_per_s=accesses / best[label][0] / 1e6) for label, _ in cases]
    speedup = rows[0]["wall_s"] / rows[1]["wall_s"]

    subprocess.run(["ninja", "-C", a.build, "reuse_bench", "pes-sim-bench"], check=True, stdout=subprocess.DEVNULL)
    rb_json = os.path.join(work, "reuse_bench.json")
    subprocess.run([os.path.join(b, "reuse_bench"), "--case", "strided", "--case", "rand-1m", "--case", "rand-16m",
                    "--json", rb_json], check=True, stdout=subprocess.DEVNULL)
    reuse = json.load(open(rb_json))
    sb_json = os.path.join(work, "sim_bench.json")
    subprocess.run([os.path.join(b, "pes-sim-bench"), "-n", "100000000", "-o", sb_json], check=True,
                   stdout=subprocess.DEVNULL)
    sim = json.load(open(sb_json))

    lines = [f"pes-replay on a full trace of gemm n={a.n} ({a.threads} threads, {accesses:,} accesses), "
             f"`bench/replay_throughput.py --n {a.n}`", "",
             "| replay | wall (s) | M accesses/s | peak RSS (MiB) |", "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['wall_s']:.2f} | {r['maccess_per_s']:.1f} | {r['rss_kib'] / 1024:.0f} |")
    lines += ["", f"Replay threads speed-up (--jobs 2 vs 1, best of {a.repeat} interleaved runs): {speedup:.2f}x", "",
              "Reuse-distance engine alone (bench/reuse_bench.c, 100 M accesses, batched pushes, per CPU second):", "",
              "| stream | distinct lines | M accesses/s | peak RSS (MiB) |", "|---|---:|---:|---:|"]
    for r in reuse:
        lines.append(f"| {r['case']} | {r['distinct']:,} | {r['maccesses_per_cpu_s']:.1f} | {r['peak_rss_kib'] / 1024:.0f} |")
    lines += ["", "Cache + MESI simulator alone (bench/sim_bench.c, 100 M accesses, L1/L2/L3 + MESI, per CPU second):", "",
              "| stream | simulated cores | L1 hit rate | M accesses/s |", "|---|---:|---:|---:|"]
    for r in sim["runs"]:
        lines.append(f"| {r['mix']} | {r['cores']} | {r['l1_hit']:.2f} | {r['maccesses_per_cpu_s']:.1f} |")
    table = "\n".join(lines)
    benchlib.write_outputs(a.out, "replay_throughput", table,
                           dict(rows=rows, jobs_speedup=speedup, reuse_bench=reuse, sim_bench=sim, n=a.n))
    os.remove(trace)


if __name__ == "__main__":
    main()
