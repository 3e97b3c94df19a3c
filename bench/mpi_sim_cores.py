#!/usr/bin/env python3
"""Distributed --simulate and --cores: pes-replay-mpi on 1, 2 and 4 ranks
against pes-replay --jobs 1 and --jobs 2 on one full trace, in CPU seconds
per rank (PES_MPI_STATS: each rank's own CPU time, its threads together)
as well as wall time, so that a machine shared with other work still shows
how the work is divided: with --simulate each rank simulates its share of
the address partitions (every rank still reads the whole trace); with
--cores each configuration runs whole on one rank (largest first, to the
least loaded rank).

Runs are interleaved (rep 1 of every variant, then rep 2, ...) and the run
of least wall time is kept. Every variant's JSON report is first checked
byte for byte against pes-replay --jobs 1. The load average before and
after is printed: other work on the machine slows the wall times, not the
CPU seconds (except through caches).

usage: bench/mpi_sim_cores.py [--build build] [--trace tests/data/false_sharing.full.zst]
                              [--repeat 3] [--ranks 1,2,4] [--cores 1,2,4]
                              [--modes simulate,cores] [--out bench/out]
Prints a markdown table and writes OUT/mpi_sim_cores.{md,json}.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
STATS = re.compile(r"^pes-replay-mpi: rank (\d+): .*, ([0-9.]+) CPU s$")


def run(runner, cmd, env):
    """(wall s, CPU s of the whole command, [CPU s per rank] or None)."""
    p = subprocess.run([runner] + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    if p.returncode != 0:
        sys.exit(f"mpi_sim_cores.py: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    wall, _, cpu = p.stdout.split()
    ranks = {}
    for line in p.stderr.splitlines():
        m = STATS.match(line)
        if m:
            ranks[int(m.group(1))] = float(m.group(2))
    return float(wall), float(cpu), [ranks[k] for k in sorted(ranks)] or None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--trace", default=os.path.join(ROOT, "tests", "data", "false_sharing.full.zst"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--cores", default="1,2,4")
    ap.add_argument("--modes", default="simulate,cores")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "mpi_sim_cores")
    os.makedirs(work, exist_ok=True)
    runner = benchlib.build_runner(work)
    mpirun, env = benchlib.mpi_launcher(PES_MPI_STATS="1")
    load0 = os.getloadavg()

    rows = []
    modes = {"simulate": ("--simulate", ["--simulate", "--sockets", "2"]),
             "cores": (f"--cores {a.cores} --simulate", ["--cores", a.cores, "--simulate"])}
    for mode, extra in [modes[m] for m in benchlib.csv(a.modes)]:
        base = [a.trace, "--machine", "haswell", "--format", "json", "--top", "0"] + extra
        variants = {"pes-replay --jobs 1": [os.path.join(b, "pes-replay")] + base + ["--jobs", "1"],
                    "pes-replay --jobs 2": [os.path.join(b, "pes-replay")] + base + ["--jobs", "2"]}
        for r in benchlib.csv(a.ranks, int):
            variants[f"pes-replay-mpi, {r} rank{'s' if r > 1 else ''}"] = (
                mpirun + ["-np", str(r), os.path.join(b, "pes-replay-mpi")] + base + ["--jobs", "1"])
        ref = None
        for label, cmd in variants.items():
            out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout
            ref = out if ref is None else ref
            if out != ref:
                sys.exit(f"mpi_sim_cores.py: {mode}: {label} reports differently from pes-replay --jobs 1")
        best = {}
        for _ in range(a.repeat):
            for label, cmd in variants.items():
                res = run(runner, cmd, env)
                if label not in best or res[0] < best[label][0]:
                    best[label] = res
        for label, (wall, cpu, ranks) in best.items():
            rows.append(dict(mode=mode, variant=label, wall_s=wall, cpu_s=cpu, rank_cpu_s=ranks))
            print(f"  {mode}: {label}: {wall:.2f} s wall, {cpu:.2f} CPU s"
                  + (f", per rank {ranks}" if ranks else ""), file=sys.stderr)

    load1 = os.getloadavg()
    lines = [f"pes-replay-mpi --simulate / --cores vs pes-replay (`bench/mpi_sim_cores.py`, "
             f"{os.path.relpath(a.trace, ROOT)}, least wall of {a.repeat}, {os.cpu_count()} CPUs, "
             f"load average {load0[0]:.1f} before, {load1[0]:.1f} after)", "",
             "| mode | replay | wall (s) | CPU (s), all processes | CPU (s) per rank | busiest rank (s) |",
             "|---|---|---:|---:|---|---:|"]
    for r in rows:
        per = r["rank_cpu_s"]
        lines.append(f"| {r['mode']} | {r['variant']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{' / '.join(f'{x:.2f}' for x in per) if per else '-'} | "
                     f"{max(per) if per else r['cpu_s']:.2f} |")
    benchlib.write_outputs(a.out, "mpi_sim_cores", "\n".join(lines),
                           dict(rows=rows, repeat=a.repeat, trace=a.trace, load=[load0, load1]))


if __name__ == "__main__":
    main()
