#!/usr/bin/env python3
"""Reuse histograms from other tools' traces: pes-replay end to end on the
three address traces of issue 11 (bench/peer_trace_gen.c: uniform random 20 M
accesses over 1 M lines, cyclic 20 M over 100 K lines, matmul 256^3 ijk, 67 M),
written in the formats pes-replay reads (one hex address per line as PARDA and
libCacheSim read, valgrind lackey, little-endian binary), and peers on the
same files where the user has them built (never vendored):

  PES_PEER_PARDA="/path/parda.x --input={trace} --lines={lines}"
  PES_PEER_OLKEN="/path/online_mrc {trace}"

({trace}: the addr-format file; {lines}: its line count). All variants run
interleaved round-robin, best of --repeat: pes-replay end to end (exact PRD and
CRD, SDCM) with --jobs 1 and 2 in each format, and its SHARDS approximate mode
at 1 % of the lines (--sample-rate 0.01), whose miss-ratio-curve error comes
from one --sample-check run per trace.

usage: bench/peer_traces.py [--build build] [--out bench/out] [--repeat 3]
                            [--formats addr,binary64] [--traces uniform,cyclic,matmul]
                            [--reader [--threads 1,2]]
Prints a markdown table and writes OUT/peer_traces.{md,json}.

--reader times the text reader alone instead (bench/text_reader_bench.c, built
with `ninja -C BUILD text_reader_bench`): records per second that
pes_text_reader_read hands out for each trace, format and thread count
(pes_text_reader_set_threads), the file in the page cache, best of --repeat;
these traces have one record per line. Writes OUT/peer_traces_reader.{md,json}.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ACCESSES = {"uniform": 20_000_000, "cyclic": 20_000_000, "matmul": 4 * 256 ** 3}
SUFFIX = {"addr": "txt", "lackey": "lackey", "binary64": "bin"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(benchlib.ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(benchlib.ROOT, "bench", "out"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default="addr,binary64")
    ap.add_argument("--traces", default="uniform,cyclic,matmul")
    ap.add_argument("--reader", action="store_true", help="time the text reader alone")
    ap.add_argument("--threads", default="1,2", help="with --reader: thread counts")
    a = ap.parse_args()
    formats, traces = a.formats.split(","), a.traces.split(",")
    for f in formats:
        if f not in SUFFIX:
            sys.exit(f"peer_traces.py: unknown format '{f}' (addr, lackey, binary64)")
    for t in traces:
        if t not in ACCESSES:
            sys.exit(f"peer_traces.py: unknown trace '{t}' (uniform, cyclic, matmul)")
    work = os.path.join(a.out, "peer_traces")
    os.makedirs(work, exist_ok=True)
    gen = os.path.join(a.build, "bin", "peer_trace_gen")
    if a.reader:
        return reader_only(a, gen, work, formats, traces)
    replay = os.path.join(a.build, "bin", "pes-replay")
    runner = benchlib.build_runner(work)
    peers = {name: os.environ[var] for name, var in (("PARDA", "PES_PEER_PARDA"), ("Olken", "PES_PEER_OLKEN"))
             if os.environ.get(var)}

    variants, files = {}, {}
    pes_cols = []
    for f in formats:
        for jobs in (1, 2):
            pes_cols.append((f"pes {f} -j{jobs}", f, ["--jobs", str(jobs)]))
    pes_cols.append(("pes addr -j2 SHARDS 1%", "addr", ["--jobs", "2", "--sample-rate", "0.01"]))
    for t in traces:
        for f in set(formats) | {"addr"}:
            path = os.path.join(work, f"{t}.{SUFFIX[f]}")
            subprocess.run([gen, t, f, path], check=True)
            files[(t, f)] = path
        for name, f, extra in pes_cols:
            variants[(t, name)] = [replay, files[(t, f)], "--machine", "haswell", "--format", "json"] + extra
        for name, template in peers.items():
            cmd = template.format(trace=files[(t, "addr")], lines=ACCESSES[t])
            variants[(t, name)] = shlex.split(cmd)
    best = benchlib.interleaved(runner, {k: v for k, v in variants.items()}, os.environ.copy(), a.repeat)

    # the approximate mode's error on each trace: one untimed --sample-check run
    mae = {}
    for t in traces:
        r = subprocess.run([replay, files[(t, "addr")], "--machine", "haswell", "--format", "json", "--sample-rate",
                            "0.01", "--sample-check"], check=True, capture_output=True, text=True)
        mae[t] = max(p["mrc_mae"] for p in json.loads(r.stdout)["configs"][0]["approximation"]["profiles"])

    cols = [c[0] for c in pes_cols] + list(peers)
    head = ("| trace | accesses | " + " | ".join(f"{c} s (M acc/s)" for c in cols) +
            " | SHARDS 1% MRC MAE |" + (" best exact pes vs fastest peer |" if peers else ""))
    rows = [head, "|" + "---|" * (3 + len(cols) + (1 if peers else 0))]
    data = []
    for t in traces:
        cells = []
        for c in cols:
            s, rss = best[(t, c)]
            cells.append(f"{s:.2f} ({ACCESSES[t] / s / 1e6:.1f})")
            data.append({"trace": t, "tool": c, "accesses": ACCESSES[t], "seconds": s, "peak_rss_kib": rss})
        cells.append(f"{mae[t]:.4f}")
        if peers:
            exact = min(best[(t, c[0])][0] for c in pes_cols if "SHARDS" not in c[0])
            cells.append(f"{min(best[(t, p)][0] for p in peers) / exact:.1f}x")
        rows.append(f"| {t} | {ACCESSES[t] / 1e6:.0f} M | " + " | ".join(cells) + " |")
        data.append({"trace": t, "tool": "SHARDS 1% MRC MAE", "mae": mae[t]})
    benchlib.write_outputs(a.out, "peer_traces", "\n".join(rows), data)


def reader_only(a, gen, work, formats, traces):
    bench = os.path.join(a.build, "bin", "text_reader_bench")
    if not os.path.exists(bench):
        sys.exit(f"peer_traces.py: {bench} missing: ninja -C {a.build} text_reader_bench")
    rows = ["| trace | format | lines | " + " | ".join(f"{t} thr. M lines/s" for t in a.threads.split(",")) + " |"]
    rows.append("|" + "---|" * (3 + len(a.threads.split(","))))
    data = []
    for t in traces:
        for f in formats:
            path = os.path.join(work, f"{t}.{SUFFIX[f]}")
            subprocess.run([gen, t, f, path], check=True)
            js = os.path.join(work, "reader.json")
            subprocess.run([bench, "--threads", a.threads, "--repeat", str(a.repeat), "--json", js, path],
                           check=True, stdout=subprocess.DEVNULL)
            with open(js) as fh:
                runs = json.load(fh)
            os.remove(path)
            for r in runs:
                if r["records"] != ACCESSES[t]:
                    sys.exit(f"peer_traces.py: {path}: {r['records']} records, expected {ACCESSES[t]}")
                data.append(dict(r, trace=t, file=os.path.basename(path)))
            rates = " | ".join(f"{r['mrecords_per_s']:.1f}" for r in runs)
            rows.append(f"| {t} | {f} | {ACCESSES[t] / 1e6:.0f} M | {rates} |")
    benchlib.write_outputs(a.out, "peer_traces_reader", "\n".join(rows), data)


if __name__ == "__main__":
    main()
