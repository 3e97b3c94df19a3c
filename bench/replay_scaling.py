#!/usr/bin/env python3
"""Replay scaling: how pes-replay's work divides over --jobs workers.

For each case (a full trace of bench/kernels/gemm.c and the pes-replay
options of the case) it reports
  - from `pes-replay --stats --jobs M` (M = --model, default 16): the CPU
    seconds of the whole replay, the serial part S (the CPU that no number of
    workers divides: the reading and merge threads outside tasks, a PARDA
    lane's resolution; docs/replay.md, "Replay threads"), the longest strand
    and the bound on the speed-up at M workers,
    T / max(S + (T - S) / M, longest strand): Amdahl's law with the chain no
    worker count shortens. CPU times need no more CPUs than this machine
    has, so the bound is valid on 2 vCPUs;
  - M accesses per CPU second (accesses / total CPU of the replay);
  - measured wall times and speed-ups for --jobs 1, 2, 4, ... up to the
    CPUs this process may use (best of --repeat interleaved runs);
  - that every --jobs gives the same JSON report, byte for byte.

usage: bench/replay_scaling.py [--build build] [--n 256] [--threads 16] [--model 16]
                               [--repeat 3] [--cases prd,sim,sim1,cores] [--out bench/out]
                               [--parts auto|yes|no] [--call-edges yes|no]
Prints a markdown table and writes OUT/replay_scaling.{md,json}.
"""
import argparse
import filecmp
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
STATS = re.compile(r"serial ([0-9.]+) s of ([0-9.]+) s CPU")
CHAIN = re.compile(r"longest strand ([0-9.]+) s")


def cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def stats_run(cmd):
    """(total CPU s, serial CPU s, longest strand s, the --stats table) of one run with --stats."""
    p = subprocess.run(cmd + ["--stats"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    if p.returncode != 0:
        sys.exit(f"replay_scaling.py: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    m, c = STATS.search(p.stderr), CHAIN.search(p.stderr)
    if not m or not c:
        sys.exit(f"replay_scaling.py: no serial line in the --stats output of {' '.join(cmd)}")
    return float(m.group(2)), float(m.group(1)), float(c.group(1)), p.stderr


def amdahl(total, serial, chain, n):
    """pes-replay --stats's bound: Amdahl's law, and no faster than the longest strand."""
    time = max(serial + (total - serial) / n, chain)
    return total / time if total > 0 else 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", default="256", help="gemm size: a number, small or medium (384)")
    ap.add_argument("--threads", type=int, default=16, help="OpenMP threads of the recorded multithreaded trace")
    ap.add_argument("--model", type=int, default=16, help="workers of the --stats run and of Amdahl's bound")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="prd,sim,cores")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--parts", choices=["auto", "yes", "no"], default="auto",
                    help="pes-replay --parts: N time parts on N threads, or the stages on N workers")
    ap.add_argument("--call-edges", choices=["yes", "no"], default="yes",
                    help="no: build gemm with -mllvm -pes-no-call-edges (traces without CALL/RETURN records)")
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "replay_scaling")
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(work, "gemm")
    edges = [] if a.call_edges == "yes" else ["-mllvm", "-pes-no-call-edges"]
    subprocess.run([os.path.join(b, "pes-clang"), "-O2", "-fopenmp"] + edges +
                   [os.path.join(ROOT, "bench", "kernels", "gemm.c"), "-o", exe], check=True)
    traces = {}
    for t in sorted({1, a.threads}):
        traces[t] = os.path.join(work, f"gemm.t{t}.full.zst")
        subprocess.run([os.path.join(b, "pes-collect"), "-q", "--full", "--force", "-o", traces[t], "--", exe, a.n],
                       check=True, stdout=subprocess.DEVNULL, env=benchlib.omp_env(t))
    replay = os.path.join(b, "pes-replay")
    common = ["--machine", "haswell", "--top", "0", "--format", "json", "--parts", a.parts]
    all_cases = {
        "prd": (f"PRD + CRD, {a.threads}-thread trace", traces[a.threads], []),
        "sim": (f"PRD + CRD + MESI simulation, {a.threads}-thread trace", traces[a.threads], ["--simulate"]),
        "sim1": ("PRD + CRD + MESI simulation, 1-thread trace", traces[1], ["--simulate"]),
        "cores": ("--cores 1,2,4,8,16 --simulate, 1-thread trace", traces[1], ["--cores", "1,2,4,8,16", "--simulate"]),
    }
    n_cpus = cpus()
    jobs = [j for j in (1, 2, 4, 8, 16, 32) if j <= n_cpus]
    if n_cpus not in jobs:
        jobs.append(n_cpus)
    runner = benchlib.build_runner(work)
    rows = []
    for key in benchlib.csv(a.cases):
        label, trace, extra = all_cases[key]
        base = [replay, trace] + common + extra
        subprocess.run(base + ["--jobs", "1", "-o", os.path.join(work, "j1.json")], check=True)
        with open(os.path.join(work, "j1.json")) as f:
            accesses = json.load(f)["trace"]["accesses"]
        # the same report for every --jobs (the model's too)
        for j in sorted(set(jobs + [a.model])):
            if j == 1:
                continue
            out = os.path.join(work, f"j{j}.json")
            subprocess.run(base + ["--jobs", str(j), "-o", out], check=True)
            if not filecmp.cmp(os.path.join(work, "j1.json"), out, shallow=False):
                sys.exit(f"replay_scaling.py: {label}: --jobs {j} differs from --jobs 1")
        total, serial, chain, table = stats_run(base + ["--jobs", str(a.model), "-o", "/dev/null"])
        total1, _, _, _ = stats_run(base + ["--jobs", "1", "-o", "/dev/null"])
        variants = {j: base + ["--jobs", str(j), "-o", "/dev/null"] for j in jobs}
        best = benchlib.interleaved(runner, variants, os.environ.copy(), a.repeat)
        row = dict(case=label, key=key, accesses=accesses, model=a.model, cpu_s=total, serial_s=serial, chain_s=chain,
                   serial_share=serial / total if total else 1.0, amdahl=amdahl(total, serial, chain, a.model),
                   cpu1_s=total1, maccess_per_cpu_s=accesses / total / 1e6 if total else 0,
                   maccess_per_cpu_s_jobs1=accesses / total1 / 1e6 if total1 else 0,
                   wall={str(j): best[j][0] for j in jobs}, rss_kib={str(j): best[j][1] for j in jobs},
                   speedup={str(j): best[1][0] / best[j][0] for j in jobs}, stats=table)
        rows.append(row)
        print(table, file=sys.stderr)

    head = (f"pes-replay scaling on full traces of gemm n={a.n} ({n_cpus} CPUs here; `bench/replay_scaling.py "
            f"--n {a.n} --threads {a.threads} --model {a.model} --parts {a.parts} --call-edges {a.call_edges}`)")
    lines = [head, "",
             f"| case | accesses | CPU s (--jobs {a.model}) | serial | longest strand (s) | bound at {a.model} | "
             f"M acc. / CPU s (--jobs 1, {a.model}) | " + " | ".join(f"wall --jobs {j} (s)" for j in jobs) +
             " | " + " | ".join(f"speed-up {j}" for j in jobs if j > 1) + " |",
             "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * (2 * len(jobs) - 1)]
    for r in rows:
        lines.append(f"| {r['case']} | {r['accesses']:,} | {r['cpu_s']:.2f} | {100 * r['serial_share']:.1f} % | "
                     f"{r['chain_s']:.2f} | "
                     f"{r['amdahl']:.2f}x | {r['maccess_per_cpu_s_jobs1']:.1f}, {r['maccess_per_cpu_s']:.1f} | " +
                     " | ".join(f"{r['wall'][str(j)]:.2f}" for j in jobs) + " | " +
                     " | ".join(f"{r['speedup'][str(j)]:.2f}x" for j in jobs if j > 1) + " |")
    lines += ["", "Every --jobs gave the same JSON report, byte for byte. The serial part, the longest strand and "
              f"the bound come from `pes-replay --stats --jobs {a.model}` (CPU seconds per thread and stage; bound = "
              "T / max(S + (T - S) / n, longest strand)); M accesses / CPU s = accesses / the replay's CPU seconds "
              "(--jobs 1, then --jobs n)."]
    benchlib.write_outputs(a.out, "replay_scaling", "\n".join(lines), dict(rows=rows, cpus=n_cpus, n=a.n))


if __name__ == "__main__":
    main()
