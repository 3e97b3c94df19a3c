#!/usr/bin/env python3
"""Accuracy of pes's sampled analyses against the full trace of the SAME execution.

For every ground-truth microbenchmark (bench/micro: RIBench, Write-Volume,
False-Sharing, Read-Write, Point-to-Point) x mode x sampling period x thread
count, runs ONE execution with `pes-collect --mode MODE --full` (sampled and
full trace together), compares them with `pes-replay --compare --format json`,
and writes a markdown table (median and worst case per metric) and the raw
runs as JSON.

  python3 bench/accuracy.py --bin build/bin            # default sweep
  python3 bench/accuracy.py --bin build/bin --quick    # CI-sized
  python3 bench/accuracy.py --periods 10000,100000,1000000 --threads 1,2,4,8,16 --scale 10

Program sizes grow with the period (--samples: the sampled accesses wanted per
thread), capped by --max-accesses per thread; runs with too few samples are
kept and flagged. Metrics (docs/accuracy.md): S of the intra-thread
time-distance histogram and of the stack histogram converted with Shen et
al.'s model, invalidation-ratio error, communication volume error and
per-cell error, false-sharing fraction error, Marathe top-10 coverage and
false positives.

Programs nobody tuned the estimators for (issue 25): --corpus
tuning|validation|both runs the bench/corpus programs of that half (the split
is bench/corpus/split.py's, fixed), each in the reuse, reuse-shared and comm
modes (comm and reuse-shared only with >= 2 threads: one thread has nothing
to communicate and no other thread's reuse),
with every --seeds value passed to the program (--seed S) and to the sampler.
--suites adds the public suites of bench/corpus/suites.json that the
environment points at (POLYBENCH_DIR, NPB_DIR, XSBENCH_DIR, LULESH_DIR). The
summary then has one row per metric family and, per half, median / worst,
the pooled coverage of the stated 90 % intervals, and the null results: a
family's value or interval coverage that a compare result left null (or a run
that failed) is counted there, never dropped.

  python3 bench/accuracy.py --corpus both --periods 10000 --threads 1,2,4 --seeds 1
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MICRO = os.path.join(HERE, "micro")
KERNELS_DIR = os.path.join(HERE, "kernels")

RIBENCH_PATTERNS = ["increasing", "decreasing", "bell", "multimodal"]
COMM_BENCHES = ["write_volume", "false_sharing", "read_write", "point_to_point"]

# (metric, label, kind): kind "high" = larger is better (report min as worst),
# "abs" = error (report max |x| as worst), "low" = smaller is better
METRICS = [
    ("s_intra", "S intra-thread time histogram", "high"),
    ("s_stack", "S stack histogram (converted)", "high"),
    ("inval_ratio_error", "invalidation ratio error (pp)", "abs"),
    ("comm_volume_error", "communication volume error (%)", "abs"),
    ("comm_cell_error", "communication per-cell error", "low"),
    ("split_error", "false-sharing fraction error (pp)", "abs"),
    ("top_inval_coverage", "top-10 invalidation sites coverage", "high"),
    ("top_inval_fp", "top-10 invalidation sites false positives", "low"),
    ("top_coh_coverage", "top-10 coherence-miss sites coverage", "high"),
    ("top_coh_fp", "top-10 coherence-miss sites false positives", "low"),
    ("samples_per_thread", "sampled accesses per thread", "info"),
    ("coverage90", "stated 90 % intervals containing the full-trace value (pooled)", "cover"),
    ("printed90", "— printed intra-bin intervals (bins the sample has)", "cover"),
]
# interval_coverage's kinds (pes-replay --compare): one "cover" row each
COVER_KINDS = [("intra_bins", "intra-thread bins"), ("stack_bins", "stack bins"),
               ("inval_ratio", "invalidation ratio"), ("false_fraction", "false-sharing fraction"),
               ("comm_pairs", "thread pairs' volume shares"), ("comm_volume", "communication volume")]
METRICS += [(f"cov_{k}", f"— {label}", "cover") for k, label in COVER_KINDS]
# "cover" rows: pooled over runs (every checked value counts once), worst = the lowest run
COVER = {"coverage90": ("coverage90_checked", "coverage90_covered"),
         "printed90": ("printed_checked", "printed_covered")}
COVER.update({f"cov_{k}": (f"cov_{k}_checked", f"cov_{k}_covered") for k, _ in COVER_KINDS})
SCALE = {"inval_ratio_error": 100, "comm_volume_error": 100, "split_error": 100}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def build(bin_dir, work):
    exe = {}
    for name in ["ribench"] + COMM_BENCHES + KERNELS:
        out = os.path.join(work, name)
        src = os.path.join(MICRO if name not in KERNELS else KERNELS_DIR, name + ".c")
        run([os.path.join(bin_dir, "pes-clang"), "-O2", "-fopenmp", "-o", out, src])
        exe[name] = out
    return exe


# Accesses per thread of one RIBench round at --divide 1 (--length short),
# measured with pes-collect: 420 K (bell) to 670 K (increasing, case 2)
RIBENCH_ROUND = 500_000
KERNELS = ["cg", "mg", "is"]


def per_thread_accesses(args, period, threads):
    """Accesses wanted per thread: --samples sampled accesses at this period,
    capped per thread (--max-accesses) and per run (--max-total)."""
    want = min(args.samples * period, args.max_accesses)
    return max(1, min(want, args.max_total // max(threads, 1)))


def kernel_size(name, total):
    """Problem size of a bench/kernels program for about `total` accesses (all
    threads together), from pes-collect counts: cg ~4,000 n, mg ~187 n^3 (n a
    power of two), is ~172 n."""
    if name == "cg":
        return str(max(500, total // 4000))
    if name == "is":
        return str(min(max(1024, total // 172), 2**31 - 1))
    n = 4
    while n < 2048 and 187 * (2 * n) ** 3 <= total * 1.5:
        n *= 2
    return str(n)


def cases(args):
    """(name, benchmark, mode, argv builder(period, threads), environment builder(threads))"""
    out = []
    no_env = lambda threads: {}
    # Table 6.5 (no invalidation) for every pattern; Tables 6.6/6.7 (cases 2
    # and 3: shared stores, invalidations) for bell-shaped and decreasing
    ribench = [(pat, 1) for pat in RIBENCH_PATTERNS]
    if not args.quick:
        ribench += [(pat, c) for pat in ("bell", "decreasing") for c in (2, 3)]
    for pat, case in ribench:
        def argv(period, threads, pat=pat, case=case):
            # rounds of RIBENCH_ROUND accesses per thread: more rounds for
            # longer runs, --divide for shorter ones (at least --outer rounds)
            want = per_thread_accesses(args, period, threads)
            outer = max(args.outer, round(want / RIBENCH_ROUND))
            divide = max(1, round(RIBENCH_ROUND * outer / want))
            return ["--pattern", pat, "--length", "short", "--divide", str(divide), "--outer", str(outer),
                    "--case", str(case), "--threads", str(threads)]
        out.append((f"ribench-{pat}" + (f"-case{case}" if case > 1 else ""), "ribench", "reuse", argv, no_env))
    for b in COMM_BENCHES:
        def argv(period, threads):
            iters = per_thread_accesses(args, period, threads) // 2
            return ["--threads", str(threads), "--iters", str(max(iters, 1000))]
        out.append((b, b, "comm", argv, no_env))
    # the NAS-like kernels of bench/kernels (CG's indirect loads and
    # reductions, MG's stencils, IS's histogram and scatter), OpenMP threads
    for k in ([] if args.quick else KERNELS):
        def argv(period, threads, k=k):
            return [kernel_size(k, per_thread_accesses(args, period, threads) * threads)]
        out.append((k, k, "reuse", argv, lambda threads: {"OMP_NUM_THREADS": str(threads)}))
    return out


CORPUS_DIR = os.path.join(HERE, "corpus")
CORPUS_MODES = ["reuse", "reuse-shared", "comm"]
sys.path.insert(0, CORPUS_DIR)
import split as corpus_split  # noqa: E402  (bench/corpus/split.py: the one place the split rule lives)


def corpus_cases(args):
    """(name, program, mode, argv(period, threads), env(threads), half) for the
    corpus programs of --corpus's half: --scale K asks for K thousand accesses
    per thread."""
    out = []
    modes = args.corpus_modes.split(",")
    for prog in corpus_split.programs(args.corpus):
        for mode in modes:
            def argv(period, threads):
                return ["--scale", str(max(1, per_thread_accesses(args, period, threads) // 1000))]
            out.append((prog, prog, mode, argv, lambda threads: {"OMP_NUM_THREADS": str(threads)},
                        corpus_split.half(prog + ".c")))
    return out


SUITE_MAX_THREADS = {}
SUITE_OK_EXIT = {}   # exit statuses a suite program ends with on a good run besides 0


def suite_cases(args, work, bin_dir):
    """The public suites' programs (bench/corpus/suites.json) whose source
    directory the environment names: built here with pes-clang; every suite
    or program skipped is said on stderr, with why."""
    man = json.load(open(os.path.join(CORPUS_DIR, "suites.json")))
    out, exe = [], {}
    modes = args.corpus_modes.split(",")
    SUITE_MAX_THREADS.clear()
    for suite in man["suites"]:
        src = os.environ.get(suite["env"], "")
        if not src or not os.path.isdir(src):
            print(f"suites: {suite['name']} skipped: {suite['env']} "
                  + (f"is not a directory ({src})" if src else "is not set"), file=sys.stderr)
            continue
        for prog in suite["programs"]:
            name = f"{suite['name']}-{prog['name']}"
            if args.only and not any(name.startswith(x) for x in args.only.split(",")):
                continue
            bdir = os.path.join(work, "suites", name)
            os.makedirs(bdir, exist_ok=True)
            subst = {"cc": os.path.join(bin_dir, "pes-clang"), "cxx": os.path.join(bin_dir, "pes-clang++"),
                     "src": src, "out": bdir,
                     "exe": os.path.join(bdir, prog["name"])}
            try:
                for line in prog["build"]:
                    subprocess.run(line.format(**subst), shell=True, check=True, cwd=bdir,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            except subprocess.CalledProcessError as e:
                err = (e.stderr or e.stdout or "").strip().splitlines()[-1:] or ["failed"]
                print(f"suites: {name} skipped: build failed: {err[0]}", file=sys.stderr)
                continue
            if not os.path.exists(subst["exe"]):
                print(f"suites: {name} skipped: the build left no {subst['exe']}", file=sys.stderr)
                continue
            exe[name] = subst["exe"]
            SUITE_OK_EXIT[name] = prog.get("ok_exit", [0])
            if prog.get("max_threads"):
                SUITE_MAX_THREADS[name] = prog["max_threads"]   # serial programs: more threads add nothing
            for mode in modes:
                def argv(period, threads, prog=prog):
                    return [a.format(scale=max(1, per_thread_accesses(args, period, threads) // 1000),
                                     threads=threads) for a in prog.get("args", [])]
                out.append((name, name, mode, argv, lambda threads: {"OMP_NUM_THREADS": str(threads)},
                            "suite"))
    return out, exe


def flatten(c):
    t1, t2 = c.get("top_invalidations") or {}, c.get("top_coherence") or {}
    m = {k: c.get(k) for k in ("s_intra", "s_stack", "inval_ratio_error", "comm_volume_error",
                               "comm_cell_error", "split_error", "samples", "decided", "accesses",
                               "same_execution")}
    m["top_inval_coverage"] = t1.get("coverage")
    m["top_inval_fp"] = t1.get("false_positives") if t1.get("coverage") is not None else None
    m["top_coh_coverage"] = t2.get("coverage")
    m["top_coh_fp"] = t2.get("false_positives") if t2.get("coverage") is not None else None
    # the printed intervals only: bins the sampled histogram has, against the
    # full trace's share of the same bin (interval_coverage also counts bins
    # only the truth has, mostly trivially covered)
    h = c.get("histograms") or {}
    full = {b["lo"]: b["count"] for b in h.get("full_intra") or []}
    tf = sum(full.values())
    shown = [b for b in h.get("sampled_intra") or [] if b.get("share_ci90")]
    m["printed_checked"] = len(shown) if tf > 0 else None
    m["printed_covered"] = sum(b["share_ci90"][0] - 1e-9 <= full.get(b["lo"], 0) / tf <= b["share_ci90"][1] + 1e-9
                               for b in shown) if tf > 0 else None
    m["printed90"] = m["printed_covered"] / m["printed_checked"] if m["printed_checked"] else None
    cov = (c.get("interval_coverage") or {}).get("all") or {}
    m["coverage90"] = cov.get("fraction")
    m["coverage90_checked"] = cov.get("checked")
    m["coverage90_covered"] = cov.get("covered")
    for k, _ in COVER_KINDS:
        kc = (c.get("interval_coverage") or {}).get(k) or {}
        m[f"cov_{k}"] = kc.get("fraction") if kc.get("checked") else None
        m[f"cov_{k}_checked"], m[f"cov_{k}_covered"] = kc.get("checked"), kc.get("covered")
    m["samples_per_thread"] = (c.get("samples") or 0) / c["threads"] if c.get("threads") else None
    # Marathe's metrics need invalidations in the sample: with fewer than 10
    # expected (decided uses x true ratio) the ranking is noise, not accuracy
    r = c.get("inval_ratio_true")
    m["expected_sampled_invalidations"] = (c.get("decided") or 0) * r if r is not None else None
    if m["expected_sampled_invalidations"] is None or m["expected_sampled_invalidations"] < 10:
        for k in ("top_inval_coverage", "top_inval_fp", "top_coh_coverage", "top_coh_fp"):
            m[k] = None
    return m


def summarize(runs):
    rows = []
    for key, label, kind in METRICS:
        vals = [r["metrics"][key] for r in runs if r.get("metrics") and r["metrics"].get(key) is not None]
        vals = [v for v in vals if isinstance(v, (int, float)) and not math.isnan(v)]
        if not vals:
            rows.append((key, label, None, None, 0))
            continue
        sc = SCALE.get(key, 1)
        if kind == "cover":
            ck, cv = COVER[key]
            runs_c = [r["metrics"] for r in runs if r.get("metrics") and r["metrics"].get(ck)]
            checked = sum(m[ck] for m in runs_c)
            covered = sum(m[cv] for m in runs_c)
            rows.append((key, label, covered / checked if checked else None, min(vals), len(vals)))
            continue
        if kind == "abs":
            med = statistics.median(abs(v) for v in vals) * sc
            worst = max(abs(v) for v in vals) * sc
        elif kind in ("high", "info"):
            med, worst = statistics.median(vals) * sc, min(vals) * sc
        else:
            med, worst = statistics.median(vals) * sc, max(vals) * sc
        rows.append((key, label, med, worst, len(vals)))
    return rows


# the corpus table's metric families: (label, mode that measures it, metric,
# kind, interval_coverage kind or None where pes states no interval)
FAMILIES = [
    ("intra-thread reuse histogram, S", "reuse", "s_intra", "high", "intra_bins"),
    ("stack histogram (converted), S", "reuse", "s_stack", "high", "stack_bins"),
    ("shared-cache reuse histogram, S", "reuse-shared", "s_shared", "high", "intra_bins"),
    ("invalidation ratio error, pp", "reuse", "inval_ratio_error", "abs", "inval_ratio"),
    ("communication volume error, %", "comm", "comm_volume_error", "abs", None),
    ("thread-pair matrix, per-cell error", "comm", "comm_cell_error", "low", "comm_pairs"),
    ("false-sharing fraction error, pp", "comm", "split_error", "abs", "false_fraction"),
]


# the key whose not_estimated reason also explains a run that states no interval of a family
INTERVAL_REASON = {"intra_bins": None, "stack_bins": "s_stack", "inval_ratio": "inval_ratio_error",
                   "false_fraction": "split_error", "comm_pairs": "false_fraction_sampled"}


def family_stats(runs, fam):
    """One family over some runs: median, worst, runs with a value, pooled
    interval coverage (covered, checked), null values, null intervals. A null
    the report explains (its not_estimated names the key: the mode records no
    such thing, the samples held none) is counted apart from a silent one. A
    run that failed counts as a silent null value (and interval)."""
    label, mode, key, kind, cov = fam
    mine = [r for r in runs if r["mode"] == mode]
    vals, null_v, null_i, expl_v, expl_i, covered, checked = [], 0, 0, 0, 0, 0, 0
    for r in mine:
        c = r.get("compare")
        why = (c or {}).get("not_estimated") or {}
        v = c.get(key) if c else None
        if v is None or (isinstance(v, float) and math.isnan(v)):
            if key in why:
                expl_v += 1
            else:
                null_v += 1
        else:
            vals.append(v * SCALE.get(key, 1))
        if cov:
            k = ((c or {}).get("interval_coverage") or {}).get(cov) if c else None
            if not k or not k.get("checked"):
                if (INTERVAL_REASON.get(cov) or key) in why:
                    expl_i += 1
                else:
                    null_i += 1
            else:
                covered += k["covered"]
                checked += k["checked"]
    if not vals:
        med = worst = None
    elif kind == "abs":
        med, worst = statistics.median(abs(v) for v in vals), max(abs(v) for v in vals)
    elif kind == "high":
        med, worst = statistics.median(vals), min(vals)
    else:
        med, worst = statistics.median(vals), max(vals)
    return {"family": label, "mode": mode, "metric": key, "runs": len(mine), "values": len(vals), "median": med,
            "worst": worst, "interval": cov, "covered": covered, "checked": checked,
            "coverage": covered / checked if checked else None, "null_values": null_v, "null_intervals": null_i,
            "explained_values": expl_v, "explained_intervals": expl_i}


def halves_of(runs):
    return [h for h in ("tuning", "validation", "suite") if any(r.get("half") == h for r in runs)]


def corpus_table(runs):
    """Per metric family, per half: median / worst (runs with a value),
    pooled 90 % interval coverage (values checked), null results: silent
    ones, and those the report explains (not_estimated)."""
    fmt = lambda v: "n/a" if v is None else (f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}")
    hs = halves_of(runs)
    out = ["| metric family | mode | " + " | ".join(f"{h}: median / worst (runs) | {h}: 90 % coverage (checked) "
                                                 f"| {h}: null results" for h in hs) + " |",
           "|---|---|" + "---|---|---|" * len(hs)]
    for fam in FAMILIES:
        cells = []
        for h in hs:
            s = family_stats([r for r in runs if r.get("half") == h], fam)
            cells.append(f"{fmt(s['median'])} / {fmt(s['worst'])} ({s['values']})")
            cells.append("no interval stated" if not s["interval"] else
                         f"{fmt(s['coverage'])} ({s['checked']})")
            cells.append(f"{s['null_values']} values" + (f", {s['null_intervals']} intervals" if s["interval"] else "")
                         + f" (of {s['runs']} runs)" + (f"; explained: {s['explained_values']} values, "
                                                        f"{s['explained_intervals']} intervals"
                                                        if s["explained_values"] or s["explained_intervals"] else ""))
        out.append(f"| {fam[0]} | {fam[1]} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def corpus_markdown(runs):
    """The corpus summary: all settings together, then one table per setting."""
    md = "All settings together:\n\n" + corpus_table(runs)
    for p in setting_order(runs):
        md += f"\nSetting {p}:\n\n" + corpus_table([r for r in runs if setting(r) == p])
    failed = [r for r in runs if r.get("error")]
    if failed:
        md += "\nFailed runs (counted as null results above):\n\n" + "\n".join(
            f"- {r['case']} {r['mode']} {setting(r)} threads={r['threads']} seed={r.get('seed')}: {r['error'][0]}"
            for r in failed) + "\n"
    return md


def corpus_summary(runs):
    return {h: [family_stats([r for r in runs if r.get("half") == h], f) for f in FAMILIES] for h in halves_of(runs)}


# issue 15's targets (and issue 6's, which still hold): (metric, what, test on
# (median, worst), the runs it applies to)
ALL = ("all runs", lambda r: True)
BY_PROGRAM = [("RIBench", lambda r: r["case"].startswith("ribench")),
              ("cg, mg, is", lambda r: r["case"] in KERNELS)]
TARGETS = [
    ("s_intra", "median >= 0.95, worst >= 0.85", lambda m, w: m >= 0.95 and w >= 0.85, BY_PROGRAM),
    ("s_stack", "median >= 0.90", lambda m, w: m >= 0.90, BY_PROGRAM),
    ("comm_volume_error", "median abs. error <= 10 %, worst <= 25 %", lambda m, w: m <= 10 and w <= 25,
     [("threads <= CPUs", lambda r: r["threads"] <= (os.cpu_count() or 1)),
      ("threads > CPUs", lambda r: r["threads"] > (os.cpu_count() or 1))]),
    ("coverage90", "pooled 0.85-0.95", lambda m, w: 0.85 <= m <= 0.95, [ALL]),
    ("printed90", "pooled 0.85-0.95", lambda m, w: 0.85 <= m <= 0.95, [ALL]),
    ("split_error", "median abs. error <= 5 pp", lambda m, w: m <= 5, [ALL]),
    ("top_inval_coverage", "median >= 0.95", lambda m, w: m >= 0.95, [ALL]),
    ("top_inval_fp", "median <= 0.5", lambda m, w: m <= 0.5, [ALL]),
]


def setting(r):
    """A run's sampling setting: its period, and --samples N if it adapted."""
    n = r.get("samples_target") or 0
    return f"{r['period']}" + (f" --samples {n}" if n else "")


def setting_order(runs):
    return [setting(r) for r in sorted({(r["period"], r.get("samples_target") or 0): r for r in runs}.values(),
                                       key=lambda r: (r["period"], r.get("samples_target") or 0))]


def targets_table(runs):
    """One row per target, period and regime: measured median / worst and
    whether the target holds (n/a without runs)."""
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"
    labels = {k: label for k, label, _ in METRICS}
    out = ["| metric | target | which runs | period | median | worst | runs | met |", "|---|---|---|---|---|---|---|---|"]
    for key, what, ok, regimes in TARGETS:
        for rname, pick in regimes:
            for p in setting_order(runs):
                row = [x for x in summarize([r for r in runs if setting(r) == p and pick(r)]) if x[0] == key][0]
                met = "n/a" if row[2] is None else ("**met**" if ok(row[2], row[3]) else "missed")
                out.append(f"| {labels[key]} | {what} | {rname} | {p} | {fmt(row[2])} | {fmt(row[3])} | {row[4]} "
                           f"| {met} |")
    return "\n".join(out) + "\n"


# the README's table: one row per metric and program family, one column per
# setting, "median / worst (runs)"
COMM_RUNS = ("ComDetective micro", lambda r: r["mode"] == "comm")
ONE_PER_CPU = ("comm, threads <= CPUs", lambda r: r["mode"] == "comm" and r["threads"] <= (os.cpu_count() or 1))
SLICED = ("comm, threads > CPUs", lambda r: r["mode"] == "comm" and r["threads"] > (os.cpu_count() or 1))
WIDE = [("s_intra", "S intra-thread (median >= 0.95, worst >= 0.85)", BY_PROGRAM),
        ("s_stack", "S stack (median >= 0.90)", BY_PROGRAM),
        ("comm_volume_error", "communication volume error, % (median <= 10, worst <= 25)", [ONE_PER_CPU, SLICED]),
        ("split_error", "false-sharing fraction error, pp (<= 5)", [COMM_RUNS]),
        ("top_inval_coverage", "top-10 invalidation lines: coverage (>= 0.95)", [ALL]),
        ("top_inval_fp", "— false positives (<= 0.5)", [ALL]),
        ("coverage90", "stated 90 % intervals holding the truth, pooled (0.85-0.95)", [ALL]),
        ("printed90", "— printed intra-thread bins", [ALL]),
        ("samples_per_thread", "sampled accesses per thread", [ALL])]


def wide_table(runs):
    fmt = lambda v: "n/a" if v is None else (f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}")
    settings = setting_order(runs)
    out = ["| metric (target) | programs | " + " | ".join(settings) + " |", "|---|---|" + "---|" * len(settings)]
    for key, label, regimes in WIDE:
        for rname, pick in regimes:
            cells = []
            for p in settings:
                row = [x for x in summarize([r for r in runs if setting(r) == p and pick(r)]) if x[0] == key][0]
                cells.append("–" if not row[4] else f"{fmt(row[2])} / {fmt(row[3])} ({row[4]})")
            out.append(f"| {label} | {rname} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def markdown(runs, rows, args):
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"
    periods = setting_order(runs)
    head = "| metric | " + " | ".join(f"median @{p} | worst @{p} | runs" for p in periods) + " |"
    out = [head, "|---|" + "---|---|---|" * len(periods)]
    by_period = {p: summarize([r for r in runs if setting(r) == p]) for p in periods}
    for i, (key, label, _, _, _) in enumerate(rows):
        cells = []
        for p in periods:
            _, _, med, worst, n = by_period[p][i]
            cells.append(f"{fmt(med)} | {fmt(worst)} | {n}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    # the communication volume's target holds on time-sliced threads and on
    # one thread per CPU: the two regimes apart
    cpus = os.cpu_count() or 1
    regimes = [("threads <= CPUs", lambda r: r["threads"] <= cpus), ("threads > CPUs (time-sliced)",
                                                                        lambda r: r["threads"] > cpus)]
    comm_keys = [m for m in METRICS if m[0] in ("comm_volume_error", "comm_cell_error", "split_error")]
    out += ["", f"By thread regime ({cpus} CPUs):", "",
            "| metric | regime | " + " | ".join(f"median @{p} | worst @{p} | runs" for p in periods) + " |",
            "|---|---|" + "---|---|---|" * len(periods)]
    for key, label, kind in comm_keys:
        for rname, pick in regimes:
            cells = []
            for p in periods:
                row = [x for x in summarize([r for r in runs if setting(r) == p and pick(r)]) if x[0] == key][0]
                cells.append(f"{fmt(row[2])} | {fmt(row[3])} | {row[4]}")
            out.append(f"| {label} | {rname} | " + " | ".join(cells) + " |")
    out += ["", "| case | mode | period | threads | samples | S intra | S stack | inval err pp | "
                "volume err % | false frac err pp | note |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        m = r.get("metrics") or {}
        f = lambda k, s=1: "-" if m.get(k) is None else f"{m[k] * s:.3f}"
        out.append(f"| {r['case']} | {r['mode']} | {r['period']} | {r['threads']} | {m.get('samples', '-')} | "
                   f"{f('s_intra')} | {f('s_stack')} | {f('inval_ratio_error', 100)} | "
                   f"{f('comm_volume_error', 100)} | {f('split_error', 100)} | {r.get('note', '')} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("PES_BIN", "build/bin"))
    ap.add_argument("--out", default=os.path.join(HERE, "out", "accuracy"))
    ap.add_argument("--periods", default="10000,100000,1000000")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--samples", type=int, default=200, help="sampled accesses wanted per thread")
    ap.add_argument("--max-accesses", type=int, default=4_000_000, help="cap on accesses per thread")
    ap.add_argument("--max-total", type=int, default=64_000_000,
                    help="cap on accesses per run, all threads together (the full trace's replay time)")
    ap.add_argument("--min-samples", type=int, default=20,
                    help="skip runs whose caps leave fewer sampled accesses per thread than this")
    ap.add_argument("--collect-samples", type=int, default=0, metavar="N",
                    help="pass --samples N to pes-collect (adaptive period capped at each --periods value)")
    ap.add_argument("--only", default="", help="comma-separated case-name prefixes")
    ap.add_argument("--seed", type=int, default=1, help="pes-collect's sampler seed")
    ap.add_argument("--corpus", choices=["tuning", "validation", "both"],
                    help="run the bench/corpus programs of this half (bench/corpus/split.py) instead of the "
                         "microbenchmarks and kernels")
    ap.add_argument("--corpus-modes", default=",".join(CORPUS_MODES),
                    help="modes each corpus or suite program runs in (default: %(default)s)")
    ap.add_argument("--seeds", default="1", help="comma-separated program seeds for --corpus and --suites "
                    "(--seed S to the program; the sampler gets --seed plus S)")
    ap.add_argument("--suites", action="store_true", help="also run the public suites of bench/corpus/suites.json "
                    "found through POLYBENCH_DIR, NPB_DIR, XSBENCH_DIR, LULESH_DIR (the others are skipped, "
                    "saying so)")
    ap.add_argument("--outer", type=int, default=2, help="RIBench rounds (--outer): longer runs, more samples")
    ap.add_argument("--quick", action="store_true", help="CI-sized: periods 1000, threads 1,2")
    ap.add_argument("--resummarize", metavar="JSON[,JSON...]",
                    help="rewrite the tables from earlier accuracy.json files (several: their runs together)")
    ap.add_argument("--estimators", default="",
                    help="comma-separated pes-replay --reuse-estimator values: each run's traces are compared "
                         "once per estimator (paired), one table each (default: pes-replay's default)")
    ap.add_argument("--stack-model", default="", help="pes-replay --stack-model for every comparison "
                    "(phased or shen; default: pes-replay's default)")
    ap.add_argument("--prebuilt", metavar="DIR", help="--corpus: the programs are DIR/NAME, built with pes-clang "
                    "-O2 -fopenmp already (for a machine without a compiler)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (each run is one execution and its "
                    "comparison; a run's threads share the CPUs with the others)")
    ap.add_argument("--interval-bias", default="", help="pes-replay --interval-bias for every comparison "
                    "(none: Wilson alone, what bench/calibrate_intervals.py calibrates from)")
    ap.add_argument("--comm-estimator", default="", help="pes-replay --comm-estimator for every comparison "
                    "(interleave, comdetective; default: pes-replay's default)")
    ap.add_argument("--keep", metavar="DIR", help="keep every run's two traces in DIR")
    ap.add_argument("--collect-only", action="store_true",
                    help="with --keep: collect the traces and stop (compare later with --from-traces)")
    ap.add_argument("--from-traces", metavar="DIR", help="compare the traces an earlier --keep run left in DIR "
                    "instead of collecting (same cases, periods and threads)")
    args = ap.parse_args()
    if args.resummarize:
        runs, commands = [], []
        for path in args.resummarize.split(","):
            old = json.load(open(path))
            commands.append(old["command"])
            m = re.search(r"--collect-samples[ =](\d+)", old["command"])
            for r in old["runs"]:
                r.setdefault("samples_target", int(m.group(1)) if m else 0)
                if r.get("compare"):
                    r["metrics"] = flatten(r["compare"])
                runs.append(r)
        # a run measured twice (sweeps that overlap): the later file's counts
        last = {(r["case"], r["mode"], setting(r), r["threads"], r.get("seed")): r for r in runs
                if r.get("metrics") or r.get("half")}
        runs = list(last.values())
        old = {"command": "`, `".join(commands)}
        md = ("Against the targets:\n\n" + targets_table(runs) + "\nOne table (median / worst (runs)):\n\n"
              + wide_table(runs) + "\n" + markdown(runs, summarize(runs), args))
        if halves_of(runs):
            md = "Corpus, per metric family and half:\n\n" + corpus_markdown(runs) + "\n" + md
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "accuracy.md"), "w") as fh:
            fh.write(f"Generated by `{old['command']}`\n\n" + md)
        # the runs together (accuracy.json itself may be one of the inputs)
        with open(os.path.join(args.out, "accuracy-merged.json"), "w") as fh:
            json.dump({"command": old["command"], "corpus_summary": corpus_summary(runs) if halves_of(runs) else None,
                       "runs": runs}, fh, indent=1)
        print(md)
        return
    if args.quick:
        args.periods, args.threads, args.max_accesses = "1000", "1,2", 400_000
    periods = [int(p) for p in args.periods.split(",")]
    estimators = args.estimators.split(",") if args.estimators else [""]
    if args.collect_only and not args.keep:
        ap.error("--collect-only needs --keep DIR")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="pes-accuracy-")
    try:
        seeds = [None]
        if args.corpus or args.suites:
            seeds = [int(s) for s in args.seeds.split(",")]
            todo, exe = [], {}
            if args.corpus:
                todo = corpus_cases(args)
                for prog in corpus_split.programs(args.corpus):
                    if args.only and not any(prog.startswith(x) for x in args.only.split(",")):
                        continue
                    if args.prebuilt:   # built elsewhere (a machine without a compiler)
                        exe[prog] = os.path.join(args.prebuilt, prog)
                        if not os.access(exe[prog], os.X_OK):
                            sys.exit(f"accuracy.py: --prebuilt {args.prebuilt}: no program {prog}")
                        continue
                    exe[prog] = os.path.join(work, prog)
                    run([os.path.join(args.bin, "pes-clang"), "-O2", "-fopenmp", "-o", exe[prog],
                         os.path.join(CORPUS_DIR, prog + ".c")])
            if args.suites:
                more, sexe = suite_cases(args, work, args.bin)
                todo += more
                exe.update(sexe)
        else:
            exe = build(args.bin, work)
            todo = [x + (None,) for x in cases(args)]
        jobs = []
        for name, bench, mode, argv, env, half in todo:
            if args.only and not any(name.startswith(p) for p in args.only.split(",")):
                continue
            for period in periods:
                for nt, seed in ((nt, seed) for nt in threads for seed in seeds):
                    if half and mode in ("comm", "reuse-shared") and nt < 2:
                        continue   # one thread: no communication, no other thread's reuse to estimate
                    if nt > SUITE_MAX_THREADS.get(name, nt):
                        continue
                    # --collect-samples starts each thread at period / 64 (docs/accuracy.md)
                    floor = period // 64 if args.collect_samples else period
                    if per_thread_accesses(args, period, nt) < args.min_samples * floor:
                        # a run this short gives a handful of samples per
                        # thread at this period: noise, not accuracy
                        continue
                    jobs.append((name, bench, mode, argv, env, half, period, nt, seed))

        def one(job):
            name, bench, mode, argv, env, half, period, nt, seed = job
            tdir = args.from_traces or args.keep or work
            stem = os.path.join(tdir, f"{name}-p{period}-t{nt}" + (f"-{mode}-s{seed}" if half else ""))
            s, f = stem + ".s.zst", stem + ".f.zst"
            prog = [exe[bench]] + argv(period, nt) + (["--seed", str(seed)] if half in ("tuning", "validation")
                                                      else [])
            rec = {"case": name, "mode": mode, "period": period, "threads": nt, "argv": prog[1:],
                   "samples_target": args.collect_samples,
                   "env": env(nt)}
            if half:
                rec["half"], rec["seed"] = half, seed
            try:
                if not args.from_traces:
                    r = subprocess.run([os.path.join(args.bin, "pes-collect"), "--mode", mode, "--full",
                             "--backend",
                             "soft", "--period", str(period), "--seed", str(args.seed + (seed or 0)),
                             "-q", "--force",
                             "-o", s, "--full-output", f]
                            + (["--samples", str(args.collect_samples)] if args.collect_samples else [])
                            + ["--"] + prog, env=dict(os.environ, **env(nt)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    if r.returncode not in SUITE_OK_EXIT.get(name, [0]):
                        raise subprocess.CalledProcessError(r.returncode, r.args, r.stdout, r.stderr)
                    if half:
                        rec["output"] = r.stdout.strip().splitlines()[-1:]
                    else:
                        rec["expected"] = json.loads(r.stdout) if bench not in KERNELS else None
                if args.collect_only:
                    print(f"{name} {mode} period={period} threads={nt}: collected", file=sys.stderr)
                    return None
                by_est = {}
                for est in estimators:
                    extra = ["--reuse-estimator", est] if est else []
                    extra += ["--stack-model", args.stack_model] if args.stack_model else []
                    if args.comm_estimator:
                        extra += ["--comm-estimator", args.comm_estimator]
                    extra += ["--interval-bias", args.interval_bias] if args.interval_bias else []
                    by_est[est] = json.loads(run([os.path.join(args.bin, "pes-replay"), "--compare", s, f,
                                                  "--format", "json"] + extra).stdout)
                c = by_est[estimators[0]]
                rec["compare"] = c
                rec["metrics"] = flatten(c)
                if len(estimators) > 1:
                    rec["by_estimator"] = {e: flatten(x) for e, x in by_est.items()}
                    rec["compare_by_estimator"] = by_est
                if (c.get("decided") or 0) < 30 and mode == "reuse":
                    rec["note"] = "few samples"
            except subprocess.CalledProcessError as e:
                rec["error"] = (e.stderr or "").strip().splitlines()[-1:] or [f"exit status {e.returncode}"]
                rec["note"] = "error"
            finally:
                for p in (s, f):
                    if os.path.exists(p) and not (args.keep or args.from_traces):
                        os.unlink(p)
            return rec

        runs = []
        # --jobs N: N runs at once (each is its own process tree); results keep the jobs' order
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for job, rec in zip(jobs, pool.map(one, jobs)):
                if rec is None:
                    continue
                runs.append(rec)
                # every run as it ends: a sweep cut short keeps what it measured
                # (--resummarize reads the file)
                with open(os.path.join(args.out, "accuracy.json"), "w") as fh:
                    json.dump({"command": "python3 bench/accuracy.py " + " ".join(sys.argv[1:]), "partial": True,
                               "runs": runs}, fh)
                print(f"{job[0]} {job[2]} period={job[6]} threads={job[7]}" + (f" seed={job[8]}" if job[5] else "")
                      + f": {rec.get('metrics', rec.get('error'))}", file=sys.stderr)
        if args.collect_only:
            return
        rows = summarize(runs)
        md = ("Against the targets:\n\n" + targets_table(runs) + "\nOne table (median / worst (runs)):\n\n"
              + wide_table(runs) + "\n" + markdown(runs, rows, args))
        if halves_of(runs):
            md = "Corpus, per metric family and half:\n\n" + corpus_markdown(runs) + "\n" + md
        for est in (estimators if len(estimators) > 1 else []):
            sub = [dict(r, metrics=r["by_estimator"][est]) for r in runs if r.get("by_estimator")]
            md += f"\n### --reuse-estimator {est}\n\n" + markdown(sub, summarize(sub), args).split("\n\n")[0] + "\n"
        cmd = "python3 bench/accuracy.py " + " ".join(sys.argv[1:])
        with open(os.path.join(args.out, "accuracy.md"), "w") as fh:
            fh.write(f"Generated by `{cmd}`\n\n" + md)
        with open(os.path.join(args.out, "accuracy.json"), "w") as fh:
            json.dump({"command": cmd, "summary": [dict(zip(("metric", "label", "median", "worst", "runs"), r))
                                                   for r in rows],
                       "corpus_summary": corpus_summary(runs) if halves_of(runs) else None, "runs": runs}, fh, indent=1)
        print(md)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
