#!/usr/bin/env python3
"""Sampling-collector cost per bench kernel: for each mode of the soft backend
(samples, reuse, reuse-shared, comm) at one period, wall-time and peak-RSS
ratios against the plain-clang build and against the instrumented build with
sampling off, plus samples, watchpoint traps and sampled-trace bytes per
second. Best of --repeat runs for times; peak RSS from wait4 (the largest of
pes-collect and the program).

usage: bench/sampling_overhead.py [--build build] [--threads 2] [--repeat 3]
                                  [--size medium] [--period 100000] [--out bench/out]
Prints a markdown table and writes OUT/sampling_overhead.{md,json}.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

KERNELS = ["gemm", "transpose", "jacobi2d", "trisolv", "reduction", "atax", "false_sharing"]
MODES = ["samples", "reuse", "reuse-shared", "comm"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(cmd, env, repeat):
    """(best wall seconds, largest peak RSS in KiB) over `repeat` runs."""
    best, rss = None, 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            sys.exit(f"sampling_overhead: {' '.join(cmd)} exited {p.returncode}: {err.strip()}")
        best = dt if best is None else min(best, dt)
        rss = max(rss, ru.ru_maxrss)
    return best, rss


def event_counts(pes_dump, trace):
    """Samples and traps from the per-thread TOTALS events (aux = samples, distance = traps)."""
    out = subprocess.run([pes_dump, trace], check=True, text=True, stdout=subprocess.PIPE).stdout
    samples = traps = 0
    for line in out.splitlines():
        if re.match(r"^T\d+ totals\b", line):
            samples += int(re.search(r"\baux=(\d+)", line).group(1))
            traps += int(re.search(r"\bdistance=(\d+)", line).group(1))
    return samples, traps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", default="medium")
    ap.add_argument("--period", type=int, default=100000)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect, pes_dump = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect", "pes-dump"))
    work = os.path.join(a.out, "sampling_overhead")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="false")
    for k in list(env):
        if k.startswith("PES_"):
            del env[k]

    rows = []
    for k in a.kernels.split(","):
        src = os.path.join(ROOT, "bench", "kernels", f"{k}.c")
        plain, inst = os.path.join(work, f"{k}.plain"), os.path.join(work, f"{k}.pes")
        subprocess.run(["clang-19", "-O2", "-fopenmp", src, "-o", plain], check=True)
        subprocess.run([pes_clang, "-O2", "-fopenmp", src, "-o", inst], check=True)
        args = ["adjacent"] if k == "false_sharing" else [a.size]
        t_plain, rss_plain = measure([plain] + args, env, a.repeat)
        t_off, rss_off = measure([inst] + args, env, a.repeat)
        for m in a.modes.split(","):
            trace = os.path.join(work, f"{k}.{m}.zst")
            cmd = [pes_collect, "-q", "--mode", m, "--backend", "soft", "--period", str(a.period),
                   "--force", "-o", trace, "--", inst] + args
            t, rss = measure(cmd, env, a.repeat)
            samples, traps = event_counts(pes_dump, trace)
            nbytes = os.path.getsize(trace)
            rows.append(dict(kernel=k, mode=m, period=a.period, threads=a.threads,
                             plain_s=t_plain, off_s=t_off, mode_s=t,
                             time_vs_plain=t / t_plain, time_vs_off=t / t_off,
                             rss_plain_kib=rss_plain, rss_off_kib=rss_off, rss_kib=rss,
                             rss_vs_plain=rss / rss_plain, rss_vs_off=rss / rss_off,
                             samples=samples, traps=traps, trace_bytes=nbytes,
                             samples_per_s=samples / t, traps_per_s=traps / t, bytes_per_s=nbytes / t))
            os.remove(trace)
            print(f"  {k} {m}: {t / t_plain:.2f}x plain, {t / t_off:.2f}x off, {samples} samples, "
                  f"{traps} traps", file=sys.stderr)

    lines = [
        f"Sampling cost, soft backend, period {a.period}, size {a.size}, {a.threads} OpenMP threads, "
        f"best of {a.repeat} runs (`bench/sampling_overhead.py --threads {a.threads} --repeat {a.repeat} "
        f"--size {a.size} --period {a.period}`)",
        "",
        "| kernel | mode | time vs plain | time vs off | RSS vs plain | RSS vs off | samples/s | traps/s | trace B/s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['mode']} | {r['time_vs_plain']:.2f}x | {r['time_vs_off']:.2f}x | "
                     f"{r['rss_vs_plain']:.2f}x | {r['rss_vs_off']:.2f}x | {r['samples_per_s']:,.0f} | "
                     f"{r['traps_per_s']:,.0f} | {r['bytes_per_s']:,.0f} |")
    medians = {}
    for m in a.modes.split(","):
        rs = [r for r in rows if r["mode"] == m]
        med = {key: statistics.median(r[key] for r in rs)
               for key in ("time_vs_plain", "time_vs_off", "rss_vs_plain", "rss_vs_off")}
        medians[m] = med
        lines.append(f"| **median** | **{m}** | **{med['time_vs_plain']:.2f}x** | **{med['time_vs_off']:.2f}x** | "
                     f"**{med['rss_vs_plain']:.2f}x** | **{med['rss_vs_off']:.2f}x** | | | |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out, "sampling_overhead.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(a.out, "sampling_overhead.json"), "w") as f:
        json.dump(dict(rows=rows, medians=medians, period=a.period, size=a.size, threads=a.threads,
                       repeat=a.repeat), f, indent=1)


if __name__ == "__main__":
    main()
