#!/usr/bin/env python3
"""The model-error term of each interval family (replay/sampling/interval_bias.c),
from --compare runs of bench/corpus's TUNING half made with
`--interval-bias none` (Wilson's sampling error alone):

  python3 bench/accuracy.py --corpus tuning --interval-bias none --out DIR ...
  python3 bench/calibrate_intervals.py DIR/accuracy.json [more.json ...]

For each family, every check of a stated interval against the full trace's
value counts once (pooled over runs); `outside_by` lists how far outside the
truth lay for the checks it missed. The term is the smallest b such that
widening every interval by b on both sides holds the truth in at least 90 %
of the checks: the (k+1)-th largest miss, k = floor(0.10 N). Validation-half
runs in the inputs are refused: they are for reporting, not for calibrating.
Prints a markdown table and the C initializer; writes JSON with --json.
"""
import argparse
import json
import math
import sys

FAMILIES = [("intra_bins", "REPLAY_CI_REUSE_BINS", "reuse time histogram bins (intra or shared)"),
            ("stack_bins", "REPLAY_CI_STACK_BINS", "converted stack histogram bins"),
            ("inval_ratio", "REPLAY_CI_INVAL_RATIO", "invalidation ratio"),
            ("false_fraction", "REPLAY_CI_FALSE_FRACTION", "false-sharing fraction"),
            ("comm_pairs", "REPLAY_CI_COMM_PAIRS", "thread pairs' shares of the volume")]
LEVEL = 0.90


def term(checked, misses):
    """Smallest b with at most floor((1 - LEVEL) N) misses farther out than b."""
    allowed = math.floor((1 - LEVEL) * checked + 1e-9)
    misses = sorted(misses, reverse=True)
    return misses[allowed] if len(misses) > allowed else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="accuracy.json files of tuning-half runs")
    ap.add_argument("--json", help="write the terms and their counts here")
    ap.add_argument("--validate", nargs="+", default=[], metavar="JSON",
                    help="validation-half runs (--interval-bias none): how often the widened intervals hold there")
    args = ap.parse_args()
    checked = {f: 0 for f, _, _ in FAMILIES}
    misses = {f: [] for f, _, _ in FAMILIES}
    runs = 0
    for path in args.inputs:
        d = json.load(open(path))
        for r in d["runs"]:
            if r.get("half") != "tuning":
                sys.exit(f"{path}: run {r.get('case')} is not of the tuning half ({r.get('half')}): "
                         "calibrate on the tuning half only")
            c = r.get("compare")
            if not c:
                continue
            if c.get("interval_bias", "none") != "none":
                sys.exit(f"{path}: run {r['case']} was compared with --interval-bias {c['interval_bias']}; "
                         "calibrate from --interval-bias none")
            runs += 1
            for f, _, _ in FAMILIES:
                k = (c.get("interval_coverage") or {}).get(f) or {}
                checked[f] += k.get("checked", 0)
                misses[f] += k.get("outside_by", [])
    print(f"{runs} tuning runs\n")
    print("| family | checks | Wilson alone covers | term (share) | covers with the term |")
    print("|---|---:|---:|---:|---:|")
    out = {}
    for f, cname, label in FAMILIES:
        n = checked[f]
        b = term(n, misses[f]) if n else 0.0
        cov0 = (n - len(misses[f])) / n if n else float("nan")
        cov1 = (n - sum(m > b for m in misses[f])) / n if n else float("nan")
        out[f] = {"checked": n, "missed": len(misses[f]), "term": b}
        print(f"| {label} | {n} | {cov0:.3f} | {b:.4f} | {cov1:.3f} |")
    if args.validate:
        vchecked = {f: 0 for f, _, _ in FAMILIES}
        vmiss = {f: [] for f, _, _ in FAMILIES}
        vruns = 0
        for path in args.validate:
            for r in json.load(open(path))["runs"]:
                if r.get("half") != "validation" or not r.get("compare"):
                    continue
                vruns += 1
                for f, _, _ in FAMILIES:
                    k = (r["compare"].get("interval_coverage") or {}).get(f) or {}
                    vchecked[f] += k.get("checked", 0)
                    vmiss[f] += k.get("outside_by", [])
        print(f"\nValidation half ({vruns} runs), the same terms:\n")
        print("| family | checks | Wilson alone covers | covers with the term |")
        print("|---|---:|---:|---:|")
        for f, _, label in FAMILIES:
            n, b = vchecked[f], out[f]["term"]
            c0 = (n - len(vmiss[f])) / n if n else float("nan")
            c1 = (n - sum(m > b for m in vmiss[f])) / n if n else float("nan")
            out[f]["validation"] = {"checked": n, "wilson": c0, "with_term": c1}
            print(f"| {label} | {n} | {c0:.3f} | {c1:.3f} |")
    print("\nC (interval_bias.c):\n")
    for f, cname, _ in FAMILIES:
        print(f"    [{cname}] = {out[f]['term']:.4f},")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"inputs": args.inputs, "runs": runs, "families": out}, fh, indent=1)


if __name__ == "__main__":
    main()
