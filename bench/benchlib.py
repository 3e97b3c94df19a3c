"""Helpers shared by bench/trace_overhead.py and bench/sampling_overhead.py:
building a kernel twice (plain clang, pes-clang), timing variants of one
kernel run interleaved round-robin, and the median / max summary rows."""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPB = ["cg", "mg", "is"]  # NAS-Parallel-Benchmarks-like kernels, summarised as their own set


def kernel_set(kernel):
    return "NPB" if kernel in NPB else "team"


def csv(text, conv=str):
    return [conv(x) for x in text.split(",") if x]


def omp_env(threads):
    """OpenMP settings for one thread count, without PES_* variables that would
    change what the collector does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PES_")}
    env.update(OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    return env


def build_kernel(kernel, work, pes_clang, affine_only=False):
    """bench/kernels/KERNEL.c built with plain clang and with pes-clang, same flags;
    affine_only: also a pes-clang build whose loop descriptors take no mixed body
    (-mllvm -pes-no-mixed), returned third."""
    src = os.path.join(ROOT, "bench", "kernels", f"{kernel}.c")
    plain, inst = os.path.join(work, f"{kernel}.plain"), os.path.join(work, f"{kernel}.pes")
    subprocess.run(["clang-19", "-O2", "-fopenmp", src, "-o", plain], check=True)
    subprocess.run([pes_clang, "-O2", "-fopenmp", src, "-o", inst], check=True)
    if not affine_only:
        return plain, inst
    affine = os.path.join(work, f"{kernel}.pes-affine")
    subprocess.run([pes_clang, "-O2", "-fopenmp", "-mllvm", "-pes-no-mixed", src, "-o", affine], check=True)
    return plain, inst, affine


def build_runner(work):
    """bench/rusage_run.c, through which every timed run goes (see there why)."""
    exe = os.path.join(work, "rusage_run")
    subprocess.run(["clang-19", "-O2", "-std=c11", os.path.join(ROOT, "bench", "rusage_run.c"), "-o", exe],
                   check=True)
    return exe


def mpi_launcher(**extra_env):
    """mpirun as root with more ranks than CPUs (this VM has 2), and its env."""
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
    return mpirun, dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", **extra_env)


def run_once(runner, cmd, env):
    """(wall seconds, peak RSS in KiB) of one run of cmd, its stdout discarded."""
    p = subprocess.run([runner] + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    if p.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    seconds, rss = p.stdout.split()[:2]
    return float(seconds), int(rss)


def run_cost(runner, cmd, env=None):
    """(CPU seconds user+sys, peak RSS in KiB, wall seconds) of one run of cmd."""
    p = subprocess.run([runner] + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    if p.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    seconds, rss, cpu = p.stdout.split()
    return float(cpu), int(rss), float(seconds)


def interleaved(runner, variants, env, repeat):
    """variants: {name: command}. Runs rep 1 of every variant, then rep 2, ...
    so that a slow spell of a shared machine hits all variants alike rather
    than one; returns {name: (best seconds, largest peak RSS KiB)}. Best of
    the reps: interference only adds time."""
    best = {name: (float("inf"), 0) for name in variants}
    for _ in range(repeat):
        for name, cmd in variants.items():
            t, rss = run_once(runner, cmd, env)
            best[name] = (min(best[name][0], t), max(best[name][1], rss))
    return best


def summaries(rows, keys):
    """Median and max of each key over all rows, and per kernel set when the
    rows hold more than one: {label: {key: value}}, in table order."""
    groups = [("all", rows)]
    sets = sorted({r["set"] for r in rows})
    if len(sets) > 1:
        groups += [(s, [r for r in rows if r["set"] == s]) for s in sets]
    out = {}
    for name, rs in groups:
        out[f"median, {name}"] = {k: statistics.median(r[k] for r in rs) for k in keys}
        out[f"max, {name}"] = {k: max(r[k] for r in rs) for k in keys}
    return out


def write_outputs(out_dir, name, table, data):
    print(table)
    with open(os.path.join(out_dir, f"{name}.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(data, f, indent=1)
