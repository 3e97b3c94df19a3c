#!/usr/bin/env python3
"""Distributed replay: wall time of pes-replay-mpi on 1, 2 and 4 MPI ranks
against pes-replay --jobs 1 and --jobs 2, on text traces from
bench/peer_trace_gen.c (uniform: 20 M accesses over 1 M lines; cyclic:
20 M over 100 K lines) and on a full trace of bench/kernels/gemm.c (2
OpenMP threads, two shared caches: --sockets 2).

Runs are interleaved (rep 1 of every variant, then rep 2, ...) and the best
of --repeat is kept: interference on a shared machine only adds time. Every
variant's JSON report is first checked byte for byte against pes-replay
--jobs 1. MPI ranks run with --jobs 1 (one thread each); ranks beyond the
CPUs oversubscribe them.

usage: bench/mpi_scaling.py [--build build] [--repeat 3] [--window N] [--n 448]
                            [--ranks 1,2,4] [--skip-gemm] [--out bench/out]
Prints a markdown table and writes OUT/mpi_scaling.{md,json}.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--window", type=int, default=0, help="--mpi-window (0: the default)")
    ap.add_argument("--n", type=int, default=448, help="gemm size of the full trace")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "mpi_scaling")
    os.makedirs(work, exist_ok=True)
    runner = benchlib.build_runner(work)
    mpirun, env = benchlib.mpi_launcher()

    traces = []
    for kind in ["uniform", "cyclic"]:
        path = os.path.join(work, f"{kind}.txt")
        if not os.path.exists(path):
            subprocess.run([os.path.join(b, "peer_trace_gen"), kind, "addr", path], check=True)
        traces.append((kind, path, []))
    if not a.skip_gemm:
        exe, path = os.path.join(work, "gemm"), os.path.join(work, "gemm.full.zst")
        if not os.path.exists(path):
            subprocess.run([os.path.join(b, "pes-clang"), "-O2", "-fopenmp",
                            os.path.join(ROOT, "bench", "kernels", "gemm.c"), "-o", exe], check=True)
            subprocess.run([os.path.join(b, "pes-collect"), "-q", "--full", "--force", "-o", path, "--", exe,
                            str(a.n)], check=True, stdout=subprocess.DEVNULL,
                           env=dict(os.environ, OMP_NUM_THREADS="2"))
        traces.append((f"gemm {a.n}", path, ["--sockets", "2"]))

    window = ["--mpi-window", str(a.window)] if a.window else []
    rows = []
    for name, path, extra in traces:
        base = [path, "--machine", "haswell", "--format", "json", "--top", "0"] + extra
        variants = {"pes-replay --jobs 1": [os.path.join(b, "pes-replay")] + base + ["--jobs", "1"],
                    "pes-replay --jobs 2": [os.path.join(b, "pes-replay")] + base + ["--jobs", "2"]}
        for r in benchlib.csv(a.ranks, int):
            variants[f"pes-replay-mpi, {r} rank{'s' if r > 1 else ''}"] = (
                mpirun + ["-np", str(r), os.path.join(b, "pes-replay-mpi")] + base + ["--jobs", "1"] + window)
        reports = {}
        for label, cmd in variants.items():
            reports[label] = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE).stdout
            if reports[label] != reports["pes-replay --jobs 1"]:
                sys.exit(f"mpi_scaling.py: {name}: {label} reports differently from pes-replay --jobs 1")
        accesses = json.loads(reports["pes-replay --jobs 1"])["trace"]["accesses"]
        print(f"  {name}: {accesses:,} accesses, reports identical", file=sys.stderr)
        best = benchlib.interleaved(runner, variants, env, a.repeat)
        ref = best["pes-replay --jobs 1"][0]
        for label, (sec, rss) in best.items():
            rows.append(dict(trace=name, accesses=accesses, variant=label, wall_s=sec, peak_rss_kib=rss,
                             speedup=ref / sec))
            print(f"  {name}: {label}: {sec:.2f} s", file=sys.stderr)

    cpus = os.cpu_count()
    lines = [f"pes-replay-mpi vs pes-replay (`bench/mpi_scaling.py`, best of {a.repeat}, {cpus} CPUs"
             f"{'; more ranks than CPUs oversubscribe them' if max(benchlib.csv(a.ranks, int)) > cpus else ''};"
             f" --mpi-window {a.window or 'default'})", "",
             "| trace | accesses | replay | wall (s) | speed-up vs --jobs 1 | peak RSS (MiB) |",
             "|---|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['trace']} | {r['accesses']:,} | {r['variant']} | {r['wall_s']:.2f} | "
                     f"{r['speedup']:.2f}x | {r['peak_rss_kib'] / 1024:.0f} |")
    table = "\n".join(lines)
    benchlib.write_outputs(a.out, "mpi_scaling", table,
                           dict(rows=rows, repeat=a.repeat, window=a.window, cpus=cpus))


if __name__ == "__main__":
    main()
