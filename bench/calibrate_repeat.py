#!/usr/bin/env python3
"""Repeatability of pes-calibrate: runs it --runs times (default 5, --force,
each into its own file) and reports, per figure of the .machine file, the
median over the runs and the spread (max - min) / median. The issue's target
is a spread within 5 %; figures outside it are marked. Also the wall time of
each run (target: under 10 s).

Runs are sequential; anything else running on the machine shows up in the
spread (that is the point: a calibration should hold on a shared machine).

usage: bench/calibrate_repeat.py [--build build] [--runs 5] [--quick]
                                 [--out bench/out]
Prints a markdown table and writes OUT/calibrate_repeat{,_quick}.{md,json}.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

from benchlib import ROOT, write_outputs

TARGET = 5.0   # percent


def read_machine(path):
    kv = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            k, v = (x.strip() for x in line.split("=", 1))
            kv[k] = v
    return kv


def numeric(kv):
    out = {}
    for k, v in kv.items():
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="pes-calibrate --quick")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    cal = os.path.join(a.build, "bin", "pes-calibrate")
    name = "calibrate_repeat" + ("_quick" if a.quick else "")
    work = os.path.join(a.out, name)
    os.makedirs(work, exist_ok=True)
    runs, walls = [], []
    for i in range(a.runs):
        path = os.path.join(work, f"run{i}.machine")
        cmd = [cal, "--force", "-q", "--output", path] + (["--quick"] if a.quick else [])
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        walls.append(time.monotonic() - t0)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
        runs.append(numeric(read_machine(path)))
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    rows, data = [], {"runs": a.runs, "quick": a.quick, "wall_seconds": walls, "figures": {}}
    worst = 0.0
    for k in keys:
        vals = [r[k] for r in runs]
        med = statistics.median(vals)
        spread = 100.0 * (max(vals) - min(vals)) / med if med else 0.0
        if k.endswith(("size", "ways", "line", "sockets", "cores_per_socket")):
            continue   # geometry: from hwloc, identical unless --sizes measured
        measured = not (min(vals) == max(vals) and k.startswith("op.") and
                        k.split(".")[1] in ("store", "branch") and k.endswith("latency"))
        worst = max(worst, spread) if measured else worst
        data["figures"][k] = {"values": vals, "median": med, "spread_percent": spread}
        rows.append((k, med, min(vals), max(vals), spread))
    lines = [f"pes-calibrate{' --quick' if a.quick else ''}, {a.runs} runs: "
             f"wall {min(walls):.1f}-{max(walls):.1f} s (target < 10 s); spread = (max - min) / median, "
             f"target <= {TARGET:g} % (! marks the figures beyond it)", "",
             "| figure | median | min | max | spread |", "|---|---:|---:|---:|---:|"]
    for k, med, lo, hi, sp in rows:
        mark = " !" if sp > TARGET else ""
        lines.append(f"| {k} | {med:.4g} | {lo:.4g} | {hi:.4g} | {sp:.1f} %{mark} |")
    within = sum(1 for r in rows if r[4] <= TARGET)
    lines += ["", f"{within} of {len(rows)} figures within {TARGET:g} %; largest spread {worst:.1f} %"]
    data["within_target"] = within
    data["figures_total"] = len(rows)
    write_outputs(a.out, name, "\n".join(lines), data)


if __name__ == "__main__":
    main()
