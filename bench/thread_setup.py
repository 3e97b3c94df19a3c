#!/usr/bin/env python3
"""What the sampling collector costs per thread, and what that predicts for
many threads (issue 29).

Part 1, set-up: bench/micro/thread_start.c starts --threads short threads one
after the other; each times its first instrumented access (entry to just
after it: under pes-collect the runtime sets the thread up there, and in the
reuse modes arms the watchpoints other threads published). Per variant (plain
clang, pes-clang with sampling off, each mode of the soft backend): the median
and 90th percentile of that time over all threads of all runs, and the CPU
time per thread: the slope of the run's CPU time (user + system, the program
and pes-collect) between --threads and --threads-small threads, which covers
set-up, the thread's samples and its exit.

Part 2, the cost model (--model): the medium bench kernels of
bench/sampling_overhead.py at 1 and 2 OpenMP threads (plain, off, each mode at
--model-period and at --cost-period; best of --repeat interleaved runs;
OpenMP threads sleep rather than spin while they wait, KMP_BLOCKTIME=0), a
trivial run (thread_start, 1 thread, no work) and part 1's per-thread cost
give, per kernel and mode, in CPU seconds:
  p0      a trivial plain run (process start)
  W       plain work = plain CPU at 1 thread - p0
  r_off   instrumented work / plain work (at 1 thread)
  c_proc  what pes-collect adds to a trivial run (exec, runtime start, writer
          pool, trace end)
  c_thr   per thread (part 1, vs off: set-up, its samples there, exit)
  S       samples at --model-period (TOTALS events; the same at any thread count)
  c_s     per sample at 1 thread (at --cost-period, where samples dominate)
  c_x     per sample per other thread, from the 2-thread runs (reuse modes:
          each sample wakes every other thread to re-arm its registers)
and the wall time at N threads, work and costs spread evenly over N cores:
  plain(N) = p0 + W / N
  mode(N)  = p0 + c_proc + r_off W / N + c_thr + S (c_s + (N - 1) c_x) / N
The table also gives the N-thread figure without c_proc, the part that per-
thread and per-sample work decide. The 2-thread column of the model uses c_x
fitted on the same runs: only its 1-thread column is an independent check.

usage: bench/thread_setup.py [--build build] [--threads 64] [--threads-small 8]
                             [--accesses 20000] [--period 10000] [--repeat 5]
                             [--modes samples,...] [--model] [--model-threads 16]
                             [--model-period 100000] [--cost-period 10000]
                             [--kernels gemm,...] [--out bench/out]
Prints markdown tables and writes OUT/thread_setup.{md,json}.
"""
import argparse
import os
import statistics
import subprocess
import sys

from benchlib import (NPB, ROOT, build_kernel, build_runner, csv, omp_env, run_cost, write_outputs)
from sampling_overhead import KERNELS, MODES, event_counts

TARGET_US = 100.0  # issue 29: set-up per thread on the 2-vCPU VM
ISSUE_TARGETS = {"samples": 1.15, "comm": 1.35, "reuse-shared": 1.35, "reuse": 1.6}


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def build_thread_start(work, pes_clang):
    src = os.path.join(ROOT, "bench", "micro", "thread_start.c")
    plain, inst = os.path.join(work, "thread_start.plain"), os.path.join(work, "thread_start.pes")
    subprocess.run(["clang-19", "-O2", "-pthread", src, "-o", plain], check=True)
    subprocess.run([pes_clang, "-O2", "-pthread", src, "-o", inst], check=True)
    return plain, inst


def collect_cmd(pes_collect, mode, period, trace, program):
    return [pes_collect, "-q", "--mode", mode, "--backend", "soft", "--period", str(period), "--force",
            "-o", trace, "--"] + program


def variant_cmds(variants, plain, inst, pes_collect, period, work, args):
    """{variant: command} for one program (plain and instrumented builds given)."""
    cmds = {}
    for v in variants:
        if v == "plain":
            cmds[v] = [plain] + args
        elif v == "off":
            cmds[v] = [inst] + args
        else:
            cmds[v] = collect_cmd(pes_collect, v, period, os.path.join(work, f"{v}.zst"), [inst] + args)
    return cmds


def part_setup(a, runner, plain, inst, pes_collect, work, variants):
    """Per variant: first-access times (ns) of all threads, CPU per thread (s)."""
    first = {v: [] for v in variants}
    cpu = {v: {a.threads: [], a.threads_small: []} for v in variants}
    checksums = set()
    for _ in range(a.repeat):
        for n in (a.threads, a.threads_small):
            out = os.path.join(work, "thread_start.out")
            args = ["--threads", str(n), "--accesses", str(a.accesses), "--out", out]
            for v, cmd in variant_cmds(variants, plain, inst, pes_collect, a.period, work, args).items():
                c, _, _ = run_cost(runner, cmd, omp_env(1))
                cpu[v][n].append(c)
                with open(out) as f:
                    lines = f.read().split("\n")
                for line in lines:
                    if line.startswith("first_access_ns ") and n == a.threads:
                        first[v].append(int(line.split()[1]))
                    elif line.startswith("checksum "):
                        checksums.add((n, line.split()[1]))
    if len(checksums) != 2:
        sys.exit(f"thread_setup.py: the program's output differs between variants: {sorted(checksums)}")
    rows = []
    for v in variants:
        big, small = min(cpu[v][a.threads]), min(cpu[v][a.threads_small])
        rows.append(dict(variant=v, first_median_us=statistics.median(first[v]) / 1e3,
                         first_p90_us=quantile(first[v], 0.9) / 1e3,
                         cpu_per_thread_us=(big - small) / (a.threads - a.threads_small) * 1e6,
                         cpu_s={str(k): x for k, x in cpu[v].items()}))
    off = next(r for r in rows if r["variant"] == "off")["cpu_per_thread_us"]
    for r in rows:
        r["cpu_per_thread_vs_off_us"] = r["cpu_per_thread_us"] - off
    return rows


def setup_table(a, rows):
    cmd = (f"`bench/thread_setup.py --threads {a.threads} --threads-small {a.threads_small} "
           f"--accesses {a.accesses} --period {a.period} --repeat {a.repeat}`")
    lines = [f"Per-thread set-up, soft backend, period {a.period}: {a.threads} threads one after the other, "
             f"{a.accesses} accesses each, {a.repeat} runs ({cmd})", "",
             "| variant | first access, median (µs) | p90 (µs) | ≤ 100 µs | CPU per thread (µs) | vs off (µs) |",
             "|---|---:|---:|:---:|---:|---:|"]
    for r in rows:
        ok = "" if r["variant"] in ("plain", "off") else ("yes" if r["first_median_us"] <= TARGET_US else "no")
        lines.append(f"| {r['variant']} | {r['first_median_us']:.1f} | {r['first_p90_us']:.1f} | {ok} | "
                     f"{r['cpu_per_thread_us']:.1f} | {r['cpu_per_thread_vs_off_us']:.1f} |")
    return lines


def best_runs(runner, cmds, env, repeat):
    """Interleaved like benchlib.interleaved: {name: (best wall, best CPU)}."""
    best = {name: (float("inf"), float("inf")) for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            c, _, t = run_cost(runner, cmd, env)
            best[name] = (min(best[name][0], t), min(best[name][1], c))
    return best


def model_env(threads):
    """OpenMP threads sleep at once when they wait (no spinning): CPU times
    then count work and the collector's costs, not waiting."""
    env = omp_env(threads)
    env.update(KMP_BLOCKTIME="0", OMP_WAIT_POLICY="passive")
    return env


def part_model(a, runner, ts_plain, ts_inst, pes_collect, pes_dump, pes_clang, work, modes, per_thread):
    variants = ["plain", "off"] + modes
    # per-process cost: one thread, no work
    hello = best_runs(runner, variant_cmds(variants, ts_plain, ts_inst, pes_collect, a.model_period, work,
                                           ["--threads", "1", "--accesses", "0",
                                            "--out", os.path.join(work, "hello.out")]),
                      model_env(1), max(15, 5 * a.repeat))   # short runs: c_proc weighs most at N threads
    p0 = hello["plain"][1]
    rows = []
    for k in csv(a.kernels):
        plain, inst = build_kernel(k, work, pes_clang)
        args = ["adjacent"] if k == "false_sharing" else ["medium"]
        meas = {}
        samples = {}
        for nt in (1, 2):
            # the modes at the model's period (measured ratios, sample counts) and
            # at --cost-period, whose samples make their cost stand out of the noise
            cmds = variant_cmds(variants, plain, inst, pes_collect, a.model_period, work, args)
            cost = variant_cmds(modes, plain, inst, pes_collect, a.cost_period, work, args)
            cmds.update({f"{m}@cost": c for m, c in cost.items()})
            for m in modes:   # distinct traces: the counts of both periods are read after
                cmds[m][cmds[m].index("-o") + 1] = os.path.join(work, f"{m}.model.zst")
            meas[nt] = best_runs(runner, cmds, model_env(nt), a.repeat)
            for m in modes:
                samples[(m, nt)] = event_counts(pes_dump, os.path.join(work, f"{m}.model.zst"))[0]
                samples[(m + "@cost", nt)] = event_counts(pes_dump, os.path.join(work, f"{m}.zst"))[0]
        # CPU seconds throughout: [1] of best_runs
        W = max(meas[1]["plain"][1] - p0, 1e-6)
        r_off = (meas[1]["off"][1] - hello["off"][1]) / W
        for m in modes:
            S = max(samples[(m, 1)], 1)
            c_proc = hello[m][1] - p0
            c_run = hello[m][1] - hello["off"][1]   # what the collector adds to a trivial run
            mc = m + "@cost"
            c_s = max((meas[1][mc][1] - meas[1]["off"][1] - c_run) / max(samples[(mc, 1)], 1), 0.0)
            c_thr = max(per_thread[m], 0.0) * 1e-6
            extra2 = meas[2][mc][1] - meas[2]["off"][1] - c_run - 2 * c_thr
            c_x = max(extra2 / max(samples[(mc, 2)], 1) - c_s, 0.0)

            def predict(n):
                plain_n = p0 + W / n
                mode_n = p0 + c_proc + r_off * W / n + c_thr + S * (c_s + (n - 1) * c_x) / n
                return mode_n / plain_n

            rows.append(dict(kernel=k, mode=m, p0_s=p0, work_s=W, r_off=r_off, c_proc_s=c_proc, c_thr_s=c_thr,
                             samples=S, c_s_s=c_s, c_x_s=c_x,
                             measured1=meas[1][m][0] / meas[1]["plain"][0],
                             measured2=meas[2][m][0] / meas[2]["plain"][0],
                             predicted1=predict(1), predicted2=predict(2), predicted=predict(a.model_threads),
                             predicted_no_proc=(predict(a.model_threads) * (p0 + W / a.model_threads) - c_proc)
                             / (p0 + W / a.model_threads)))
            print(f"  {k} {m}: 1t {rows[-1]['measured1']:.2f}x (model {rows[-1]['predicted1']:.2f}x), "
                  f"2t {rows[-1]['measured2']:.2f}x (model {rows[-1]['predicted2']:.2f}x), "
                  f"{a.model_threads}t model {rows[-1]['predicted']:.2f}x", file=sys.stderr)
    return rows, hello


def model_table(a, rows, modes):
    n = a.model_threads
    cmd = (f"`bench/thread_setup.py --model --model-threads {n} --model-period {a.model_period} "
           f"--cost-period {a.cost_period} --repeat {a.repeat} --kernels {a.kernels}`")
    lines = [f"Cost model, soft backend, period {a.model_period}, medium kernels: wall time vs plain clang, "
             f"measured at 1 and 2 threads on this machine (best of {a.repeat}), modelled from CPU times "
             f"(per-sample costs at period {a.cost_period}), predicted at {n} ({cmd})", "",
             "| kernel | mode | samples | c_s (µs/sample) | c_x (µs/sample/thread) | c_thr (µs) | c_proc (ms) | "
             f"1t measured | 1t model | 2t measured | 2t model | {n}t model | {n}t model without c_proc |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['mode']} | {r['samples']} | {r['c_s_s'] * 1e6:.2f} | "
                     f"{r['c_x_s'] * 1e6:.2f} | {r['c_thr_s'] * 1e6:.0f} | {r['c_proc_s'] * 1e3:.1f} | "
                     f"{r['measured1']:.2f}x | {r['predicted1']:.2f}x | {r['measured2']:.2f}x | "
                     f"{r['predicted2']:.2f}x | {r['predicted']:.2f}x | {r['predicted_no_proc']:.2f}x |")
    lines += ["", f"Median over the kernels, against the issue's targets at {n} threads:", "",
              f"| mode | 1t measured | 1t model | 2t measured | 2t model | {n}t model | {n}t model without c_proc "
              "| target |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    qs = ("measured1", "predicted1", "measured2", "predicted2", "predicted", "predicted_no_proc")
    for m in modes:
        rs = [r for r in rows if r["mode"] == m]
        med = {q: statistics.median(r[q] for r in rs) for q in qs}
        target = ISSUE_TARGETS.get(m)
        lines.append(f"| {m} | " + " | ".join(f"{med[q]:.2f}x" for q in qs) + " | " +
                     (f"≤ {target:.2f}x" if target else "") + " |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--threads-small", type=int, default=8)
    ap.add_argument("--accesses", type=int, default=20000)
    ap.add_argument("--period", type=int, default=10000, help="part 1: short threads sample at this period")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--model", action="store_true", help="also run part 2, the cost model")
    ap.add_argument("--model-threads", type=int, default=16)
    ap.add_argument("--model-period", type=int, default=100000)
    ap.add_argument("--cost-period", type=int, default=10000,
                    help="part 2: the period at which the per-sample costs are measured")
    ap.add_argument("--kernels", default=",".join(KERNELS + NPB))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    if a.threads <= a.threads_small:
        sys.exit("thread_setup.py: --threads must be larger than --threads-small")
    modes = csv(a.modes)
    binp = os.path.join(a.build, "bin")
    pes_clang, pes_collect, pes_dump = (os.path.join(binp, x) for x in ("pes-clang", "pes-collect", "pes-dump"))
    work = os.path.join(a.out, "thread_setup")
    os.makedirs(work, exist_ok=True)
    runner = build_runner(work)
    ts_plain, ts_inst = build_thread_start(work, pes_clang)

    setup_rows = part_setup(a, runner, ts_plain, ts_inst, pes_collect, work, ["plain", "off"] + modes)
    lines = setup_table(a, setup_rows)
    data = dict(setup=setup_rows, threads=a.threads, threads_small=a.threads_small, accesses=a.accesses,
                period=a.period, repeat=a.repeat)
    if a.model:
        per_thread = {r["variant"]: r["cpu_per_thread_vs_off_us"] for r in setup_rows}
        model_rows, hello = part_model(a, runner, ts_plain, ts_inst, pes_collect, pes_dump, pes_clang, work, modes,
                                       per_thread)
        lines += [""] + model_table(a, model_rows, modes)
        data.update(model=model_rows, model_threads=a.model_threads, model_period=a.model_period,
                    process={k: dict(wall_s=v[0], cpu_s=v[1]) for k, v in hello.items()})
    write_outputs(a.out, "thread_setup", "\n".join(lines), data)


if __name__ == "__main__":
    main()
