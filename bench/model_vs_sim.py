#!/usr/bin/env python3
"""SDCM (PPT-Multicore Eq. 1-3) against the cache simulator on the bench
kernels: each kernel is traced once sequentially (OMP_NUM_THREADS=1) with
pes-collect --full, then `pes-replay --cores 1,2,4,8,16 --simulate` predicts
(SDCM on PRD/CRD) and simulates (set-associative LRU + MESI) the *same*
mimicked interleaved stream. Reported: local hit rate error per level,
|model - simulation| in percentage points, mean and max over kernels x cores.

usage: bench/model_vs_sim.py [--build build] [--machine haswell] [--size small]
                             [--cores 1,2,4,8,16] [--out bench/out]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ["gemm", "transpose", "jacobi2d", "trisolv", "reduction", "atax"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--machine", default="haswell")
    ap.add_argument("--size", default="small")
    ap.add_argument("--cores", default="1,2,4,8,16")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--per-region", action="store_true", help="pass --per-region to pes-replay")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    a = ap.parse_args()
    binp = os.path.join(a.build, "bin")
    work = os.path.join(a.out, "model_vs_sim")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")

    rows = []
    for k in a.kernels.split(","):
        exe, trace = os.path.join(work, k), os.path.join(work, f"{k}.{a.size}.zst")
        subprocess.run([os.path.join(binp, "pes-clang"), "-O2", "-fopenmp",
                        os.path.join(ROOT, "bench", "kernels", f"{k}.c"), "-o", exe], check=True)
        subprocess.run([os.path.join(binp, "pes-collect"), "-q", "--full", "--force", "-o", trace, "--", exe, a.size],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        out = subprocess.run([os.path.join(binp, "pes-replay"), trace, "--machine", a.machine, "--cores", a.cores,
                              "--simulate", "--top", "0", "--format", "json"] + (["--per-region"] if a.per_region else []),
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        rep = json.loads(out)
        for cfg in rep["configs"]:
            sim_levels = cfg["simulation"]["levels"]
            total = sim_levels[0]["accesses"]
            hits_so_far = 0
            for lv, model, model_g in zip(sim_levels, cfg["model"]["hit_local"], cfg["model"]["hit_global"]):
                sim = lv["hits"] / lv["accesses"] if lv["accesses"] else 0.0
                hits_so_far += lv["hits"]
                sim_g = hits_so_far / total if total else 0.0
                rows.append(dict(kernel=k, cores=cfg["cores"], level=lv["level"], accesses=lv["accesses"],
                                 model=model, sim=sim, error_pp=abs(model - sim) * 100.0,
                                 model_global=model_g, sim_global=sim_g,
                                 global_error_pp=abs(model_g - sim_g) * 100.0))
        os.remove(trace)
        print(f"  {k}: done", file=sys.stderr)

    levels = sorted({r["level"] for r in rows})
    mode = "per-region" if a.per_region else "whole-run"
    lines = [f"SDCM vs simulation, machine {a.machine}, size {a.size}, mimicked cores {a.cores}, {mode} BB distribution "
             f"(`bench/model_vs_sim.py --machine {a.machine} --size {a.size}{' --per-region' if a.per_region else ''}`). "
             "Local: hits / accesses reaching the level; global: accesses served by the level or above / all accesses.",
             "", "| kernel | " + " | ".join(f"L{l} local mean / max (pp)" for l in levels) + " | "
             + " | ".join(f"L{l} global mean / max (pp)" for l in levels) + " |",
             "|---|" + "---:|" * (2 * len(levels))]
    summary = {}
    for k in a.kernels.split(",") + ["**all**"]:
        cells = []
        for key in ("error_pp", "global_error_pp"):
            for l in levels:
                errs = [r[key] for r in rows if r["level"] == l and (k == "**all**" or r["kernel"] == k)]
                cells.append(f"{statistics.mean(errs):.2f} / {max(errs):.2f}")
                if k == "**all**":
                    summary[f"L{l}_{key}"] = dict(mean_pp=statistics.mean(errs), max_pp=max(errs))
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    all_errs = [r["error_pp"] for r in rows]
    all_global = [r["global_error_pp"] for r in rows]
    lines.append("")
    lines.append(f"Mean over all levels, kernels and core counts ({len(all_errs)} cases): local {statistics.mean(all_errs):.2f} pp "
                 f"(max {max(all_errs):.2f}), global {statistics.mean(all_global):.2f} pp (max {max(all_global):.2f}).")
    table = "\n".join(lines)
    benchlib.write_outputs(a.out, "model_vs_sim", table,
                           dict(rows=rows, summary=summary, mean_pp=statistics.mean(all_errs), max_pp=max(all_errs),
                                mean_global_pp=statistics.mean(all_global), max_global_pp=max(all_global),
                                mode=mode, machine=a.machine, size=a.size, cores=a.cores))


if __name__ == "__main__":
    main()
