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
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MICRO = os.path.join(HERE, "micro")

RIBENCH_PATTERNS = ["increasing", "decreasing", "bell", "multimodal"]
COMM_BENCHES = ["write_volume", "false_sharing", "read_write", "point_to_point"]

# (metric, label, kind): kind "high" = larger is better (report min as worst),
# "abs" = error (report max |x| as worst), "low" = smaller is better
METRICS = [
    ("s_intra", "S intra-thread time histogram", "high"),
    ("s_stack", "S stack histogram (Shen conversion)", "high"),
    ("inval_ratio_error", "invalidation ratio error (pp)", "abs"),
    ("comm_volume_error", "communication volume error (%)", "abs"),
    ("comm_cell_error", "communication per-cell error", "low"),
    ("split_error", "false-sharing fraction error (pp)", "abs"),
    ("top_inval_coverage", "top-10 invalidation sites coverage", "high"),
    ("top_inval_fp", "top-10 invalidation sites false positives", "low"),
    ("top_coh_coverage", "top-10 coherence-miss sites coverage", "high"),
    ("top_coh_fp", "top-10 coherence-miss sites false positives", "low"),
    ("coverage90", "stated 90 % intervals containing the full-trace value", "cover"),
    ("printed90", "printed intra-bin 90 % intervals containing the full-trace share", "cover"),
]
# "cover" rows: pooled over runs (every checked value counts once), worst = the lowest run
COVER = {"coverage90": ("coverage90_checked", "coverage90_covered"),
         "printed90": ("printed_checked", "printed_covered")}
SCALE = {"inval_ratio_error": 100, "comm_volume_error": 100, "split_error": 100}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def build(bin_dir, work):
    exe = {}
    for name in ["ribench"] + COMM_BENCHES:
        out = os.path.join(work, name)
        run([os.path.join(bin_dir, "pes-clang"), "-O2", "-fopenmp", "-o", out, os.path.join(MICRO, name + ".c")])
        exe[name] = out
    return exe


def cases(args):
    """(name, benchmark, mode, argv builder(period, threads))"""
    out = []
    # Table 6.5 (no invalidation) for every pattern; Tables 6.6/6.7 (cases 2
    # and 3: shared stores, invalidations) for bell-shaped and decreasing
    ribench = [(pat, 1) for pat in RIBENCH_PATTERNS]
    if not args.quick:
        ribench += [(pat, c) for pat in ("bell", "decreasing") for c in (2, 3)]
    for pat, case in ribench:
        def argv(period, threads, pat=pat, case=case):
            # one round is sum(c_p * l_p) ~ 0.6-1.2 M accesses at divide 1 (Table 6.5);
            # divide so that the run gives ~--samples samples per thread
            per_round = 620000
            want = min(args.samples * period, args.max_accesses)
            divide = max(1, int(per_round * 2 / max(want, 1)))
            return ["--pattern", pat, "--length", "short", "--divide", str(divide), "--outer", str(args.outer),
                    "--case", str(case), "--threads", str(threads)]
        out.append((f"ribench-{pat}" + (f"-case{case}" if case > 1 else ""), "ribench", "reuse", argv))
    for b in COMM_BENCHES:
        def argv(period, threads):
            iters = min(args.samples * period, args.max_accesses) // 2
            return ["--threads", str(threads), "--iters", str(max(iters, 1000))]
        out.append((b, b, "comm", argv))
    return out


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
        elif kind == "high":
            med, worst = statistics.median(vals) * sc, min(vals) * sc
        else:
            med, worst = statistics.median(vals) * sc, max(vals) * sc
        rows.append((key, label, med, worst, len(vals)))
    return rows


def markdown(runs, rows, args):
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"
    periods = sorted({r["period"] for r in runs})
    head = "| metric | " + " | ".join(f"median @{p} | worst @{p} | runs" for p in periods) + " |"
    out = [head, "|---|" + "---|---|---|" * len(periods)]
    by_period = {p: summarize([r for r in runs if r["period"] == p]) for p in periods}
    for i, (key, label, _, _, _) in enumerate(rows):
        cells = []
        for p in periods:
            _, _, med, worst, n = by_period[p][i]
            cells.append(f"{fmt(med)} | {fmt(worst)} | {n}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
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
    ap.add_argument("--collect-samples", type=int, default=0, metavar="N",
                    help="pass --samples N to pes-collect (adaptive period capped at each --periods value)")
    ap.add_argument("--only", default="", help="comma-separated case-name prefixes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--outer", type=int, default=2, help="RIBench rounds (--outer): longer runs, more samples")
    ap.add_argument("--quick", action="store_true", help="CI-sized: periods 1000, threads 1,2")
    ap.add_argument("--resummarize", metavar="JSON", help="rewrite the tables from an earlier accuracy.json")
    ap.add_argument("--estimators", default="",
                    help="comma-separated pes-replay --reuse-estimator values: each run's traces are compared "
                         "once per estimator (paired), one table each (default: pes-replay's default)")
    ap.add_argument("--keep", metavar="DIR", help="keep every run's two traces in DIR")
    ap.add_argument("--from-traces", metavar="DIR", help="compare the traces an earlier --keep run left in DIR "
                    "instead of collecting (same cases, periods and threads)")
    args = ap.parse_args()
    if args.resummarize:
        old = json.load(open(args.resummarize))
        runs = old["runs"]
        for r in runs:
            if r.get("compare"):
                r["metrics"] = flatten(r["compare"])
        rows = summarize(runs)
        md = markdown(runs, rows, args)
        with open(os.path.join(args.out, "accuracy.md"), "w") as fh:
            fh.write(f"Generated by `{old['command']}`\n\n" + md)
        print(md)
        return
    if args.quick:
        args.periods, args.threads, args.max_accesses = "1000", "1,2", 400_000
    periods = [int(p) for p in args.periods.split(",")]
    estimators = args.estimators.split(",") if args.estimators else [""]
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="pes-accuracy-")
    try:
        exe = build(args.bin, work)
        runs = []
        for name, bench, mode, argv in cases(args):
            if args.only and not any(name.startswith(p) for p in args.only.split(",")):
                continue
            for period in periods:
                for nt in threads:
                    tdir = args.from_traces or args.keep or work
                    stem = os.path.join(tdir, f"{name}-p{period}-t{nt}")
                    s, f = stem + ".s.zst", stem + ".f.zst"
                    prog = [exe[bench]] + argv(period, nt)
                    rec = {"case": name, "mode": mode, "period": period, "threads": nt, "argv": prog[1:]}
                    try:
                        if not args.from_traces:
                            r = run([os.path.join(args.bin, "pes-collect"), "--mode", mode, "--full", "--backend",
                                     "soft", "--period", str(period), "--seed", str(args.seed), "-q", "--force",
                                     "-o", s, "--full-output", f]
                                    + (["--samples", str(args.collect_samples)] if args.collect_samples else [])
                                    + ["--"] + prog)
                            rec["expected"] = json.loads(r.stdout)
                        by_est = {}
                        for est in estimators:
                            extra = ["--reuse-estimator", est] if est else []
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
                        rec["error"] = (e.stderr or "").strip().splitlines()[-1:] or ["failed"]
                        rec["note"] = "error"
                    runs.append(rec)
                    print(f"{name} {mode} period={period} threads={nt}: "
                          f"{rec.get('metrics', rec.get('error'))}", file=sys.stderr)
                    for p in (s, f):
                        if os.path.exists(p) and not (args.keep or args.from_traces):
                            os.unlink(p)
        rows = summarize(runs)
        md = markdown(runs, rows, args)
        for est in (estimators if len(estimators) > 1 else []):
            sub = [dict(r, metrics=r["by_estimator"][est]) for r in runs if r.get("by_estimator")]
            md += f"\n### --reuse-estimator {est}\n\n" + markdown(sub, summarize(sub), args).split("\n\n")[0] + "\n"
        cmd = "python3 bench/accuracy.py " + " ".join(sys.argv[1:])
        with open(os.path.join(args.out, "accuracy.md"), "w") as fh:
            fh.write(f"Generated by `{cmd}`\n\n" + md)
        with open(os.path.join(args.out, "accuracy.json"), "w") as fh:
            json.dump({"command": cmd, "summary": [dict(zip(("metric", "label", "median", "worst", "runs"), r))
                                                   for r in rows], "runs": runs}, fh, indent=1)
        print(md)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
