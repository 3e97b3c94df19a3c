#!/usr/bin/env python3
"""Sampling-collector cost per bench kernel, size and thread count: for each
mode of the soft backend (samples, reuse, reuse-shared, comm) at one period,
wall-time and peak-RSS ratios against the plain-clang build and against the
instrumented build with sampling off ("off"), plus samples, watchpoint traps
and sampled-trace bytes per second.

The variants of one kernel x size x thread count (plain, off, each mode) run
interleaved round-robin (run 1 of each, then run 2 of each, ...), so all
ratios come from one run of this script with the same background load. Times
are the best of --repeat runs; peak RSS is the largest, from wait4 in
bench/rusage_run.c (which covers both pes-collect and the program it runs).
Median and max rows summarise all rows and, separately, the team-written
kernels and the NPB-like ones (cg, mg, is).
--samples N adds a column per mode, "MODE+sN": the same mode with
pes-collect --samples N (adaptive period capped at --period), in the same
interleaved rounds, so both costs come from one table.
false_sharing takes no size: it runs once per thread count, as "adjacent".

usage: bench/sampling_overhead.py [--build build] [--threads 1,2] [--repeat 3]
                                  [--sizes medium] [--kernels gemm,cg,...]
                                  [--modes samples,...] [--period 100000] [--samples N]
                                  [--out bench/out]
Prints markdown tables (time vs plain, peak RSS vs plain, per-mode details)
and writes OUT/sampling_overhead.{md,json}.
"""
import argparse
import os
import re
import subprocess
import sys

from benchlib import (NPB, ROOT, build_kernel, build_runner, csv, interleaved, kernel_set, omp_env, summaries,
                      write_outputs)

KERNELS = ["gemm", "transpose", "jacobi2d", "trisolv", "reduction", "atax", "false_sharing"]
MODES = ["samples", "reuse", "reuse-shared", "comm"]


def event_counts(pes_dump, trace):
    """Samples and traps from the per-thread TOTALS events (aux = samples, distance = traps)."""
    out = subprocess.run([pes_dump, trace], check=True, text=True, stdout=subprocess.PIPE).stdout
    samples = traps = 0
    for line in out.splitlines():
        if re.match(r"^T\d+ totals\b", line):
            samples += int(re.search(r"\baux=(\d+)", line).group(1))
            traps += int(re.search(r"\bdistance=(\d+)", line).group(1))
    return samples, traps


def size_args(kernel, sizes):
    """(label, program arguments) per size; false_sharing takes a layout instead."""
    return [("adjacent", ["adjacent"])] if kernel == "false_sharing" else [(s, [s]) for s in sizes]


def wide_table(rows, summary, variants, suffix, plain_col, plain_cell):
    """One row per kernel x size x threads: the plain build's absolute figure,
    then one ratio column per variant."""
    lines = ["| kernel | set | size | threads | " + plain_col + " | " + " | ".join(variants) + " |",
             "|---|---|---|---:|---:|" + "---:|" * len(variants)]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['set']} | {r['size']} | {r['threads']} | {plain_cell(r)} | " +
                     " | ".join(f"{r[f'{v}_{suffix}']:.2f}x" for v in variants) + " |")
    for label, s in summary.items():
        lines.append(f"| **{label}** | | | | | " + " | ".join(f"**{s[f'{v}_{suffix}']:.2f}x**" for v in variants) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="1,2", help="comma-separated OMP_NUM_THREADS values")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", "--size", dest="sizes", default="medium")
    ap.add_argument("--period", type=int, default=100000)
    ap.add_argument("--kernels", default=",".join(KERNELS + NPB))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--samples", type=int, default=0,
                    help="also run each mode with pes-collect --samples N (columns MODE+sN)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    threads, sizes, kernels, base_modes = csv(a.threads, int), csv(a.sizes), csv(a.kernels), csv(a.modes)
    # collector variants: name -> (mode, extra pes-collect flags)
    collect = {m: (m, []) for m in base_modes}
    if a.samples:
        collect.update({f"{m}+s{a.samples}": (m, ["--samples", str(a.samples)]) for m in base_modes})
    modes = list(collect)
    variants = ["off"] + modes  # the ratio columns; plain is the denominator
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect, pes_dump = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect", "pes-dump"))
    work = os.path.join(a.out, "sampling_overhead")
    os.makedirs(work, exist_ok=True)
    runner = build_runner(work)

    rows = []
    for k in kernels:
        plain, inst = build_kernel(k, work, pes_clang)
        for size, args in size_args(k, sizes):
            for nt in threads:
                trace = {m: os.path.join(work, f"{k}.{size}.t{nt}.{m}.zst") for m in modes}
                cmds = {"plain": [plain] + args, "off": [inst] + args}
                for m in modes:
                    mode, extra = collect[m]
                    cmds[m] = [pes_collect, "-q", "--mode", mode, "--backend", "soft", "--period", str(a.period),
                               *extra, "--force", "-o", trace[m], "--", inst] + args
                best = interleaved(runner, cmds, omp_env(nt), a.repeat)
                r = dict(kernel=k, set=kernel_set(k), size=size, threads=nt, period=a.period)
                for v, (t, rss) in best.items():
                    r[f"{v}_s"], r[f"{v}_rss_kib"] = t, rss
                    r[f"{v}_time_vs_plain"], r[f"{v}_rss_vs_plain"] = t / best["plain"][0], rss / best["plain"][1]
                for m in modes:
                    t, rss = best[m]
                    samples, traps = event_counts(pes_dump, trace[m])  # of the last run of the mode
                    nbytes = os.path.getsize(trace[m])
                    os.remove(trace[m])
                    r.update({f"{m}_time_vs_off": t / best["off"][0], f"{m}_rss_vs_off": rss / best["off"][1],
                              f"{m}_samples": samples, f"{m}_traps": traps, f"{m}_trace_bytes": nbytes,
                              f"{m}_samples_per_s": samples / t, f"{m}_traps_per_s": traps / t,
                              f"{m}_bytes_per_s": nbytes / t})
                rows.append(r)
                print(f"  {k} {size} {nt}t: " + ", ".join(f"{v} {r[f'{v}_time_vs_plain']:.2f}x" for v in variants),
                      file=sys.stderr)

    keys = [f"{v}_{q}" for v in variants for q in ("time_vs_plain", "rss_vs_plain")]
    keys += [f"{m}_{q}" for m in modes for q in ("time_vs_off", "rss_vs_off")]
    summary = summaries(rows, keys)
    cmdline = (f"`bench/sampling_overhead.py --threads {a.threads} --repeat {a.repeat} --sizes {a.sizes} "
               f"--period {a.period}" + (f" --samples {a.samples}" if a.samples else "") + "`")
    lines = [f"Sampling cost, soft backend, period {a.period}, sizes {a.sizes}, OpenMP threads {a.threads}, "
             f"best of {a.repeat} interleaved runs ({cmdline})", "", "Wall time vs plain clang:", ""]
    lines += wide_table(rows, summary, variants, "time_vs_plain", "plain (s)", lambda r: f"{r['plain_s']:.3f}")
    lines += ["", "Peak RSS vs plain clang:", ""]
    lines += wide_table(rows, summary, variants, "rss_vs_plain", "plain (MiB)",
                        lambda r: f"{r['plain_rss_kib'] / 1024:.0f}")
    lines += ["", "Per mode, against the instrumented build with sampling off:", "",
              "| kernel | size | threads | mode | time vs off | RSS vs off | samples/s | traps/s | trace B/s |",
              "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        for m in modes:
            lines.append(f"| {r['kernel']} | {r['size']} | {r['threads']} | {m} | {r[f'{m}_time_vs_off']:.2f}x | "
                         f"{r[f'{m}_rss_vs_off']:.2f}x | {r[f'{m}_samples_per_s']:,.0f} | "
                         f"{r[f'{m}_traps_per_s']:,.0f} | {r[f'{m}_bytes_per_s']:,.0f} |")
    for label, s in summary.items():
        for m in modes:
            lines.append(f"| **{label}** | | | **{m}** | **{s[f'{m}_time_vs_off']:.2f}x** | "
                         f"**{s[f'{m}_rss_vs_off']:.2f}x** | | | |")
    write_outputs(a.out, "sampling_overhead", "\n".join(lines),
                  dict(rows=rows, summary=summary, period=a.period, samples=a.samples, sizes=sizes, threads=threads,
                       repeat=a.repeat, interleaved=True))


if __name__ == "__main__":
    main()
