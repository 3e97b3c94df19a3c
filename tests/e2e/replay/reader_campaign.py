#!/usr/bin/env python3
"""Reader campaign (issue 16 item 7): mutants of real traces, one verdict.

usage: reader_campaign.py BIN_DIR WORK_DIR TRACE...

For every TRACE (a full or a sampled trace made by pes-collect) this builds
mutants from its block list (the index frames): cuts at every block boundary
and at a few offsets inside every block, every block duplicated, deleted,
swapped with the next one and appended after the FOOTER, index-frame fields
changed, one byte of every data frame flipped. Each mutant goes through
pes-dump, pes-dump --stats, pes-replay and pes-replay --format json, and all
four must give the same verdict:

  error    exit 1, one stderr line "PROG: FILE: offset N: ...", the same
           line (after PROG) from every command;
  warning  exit 0, only "PROG: warning: ..." lines on stderr, the same ones
           from every command, and the JSON report says truncated;
  silent   exit 0, nothing on stderr: only for mutants the format cannot tell
           from the original (a repeated table block, blocks of different
           threads or tables in another valid order, a deleted MAPS block,
           swapped EVENTS blocks of one thread), and pes-replay's JSON report
           is then the original's.

Three exceptions, all documented in docs/replay.md: an empty file is an
empty plain-text trace to pes-replay (every command fails, with its own
message); a full trace cut before its first ACCESS block leaves pes-replay
nothing to analyse, so after the same warning it fails with "the trace holds
no memory accesses"; and a deleted MODULE block damages every ACCESS block
that uses its ids: pes-dump reads blocks in file order, pes-replay in time
order, so pes-replay may name another of those blocks (the same error, with
that block's offset, record and id).

Two constructed traces check what a reader may skip or a collector may
lose: a block of a type this reader does not know inserted before the
FOOTER (docs/trace-format.md §5: skipped, with the same warning from every
command and "skipped_blocks": 1), and for a sampled trace, an EVENTS block
with a LOST event (the FOOTER updated to match: a valid trace), which
pes-replay warns about and counts in "lost".

The verdict must also be the one expected from what the mutation did
(mutants() and swap_expect(), from docs/trace-format.md §1 and §6, not from
the reader). A signal, a hang (timeout) or any other outcome fails, naming
the mutant. Prints a summary per trace; exits 1 if any mutant failed.
"""
import ctypes
import ctypes.util
import json
import os
import re
import struct
import subprocess
import sys

TIMEOUT = 300   # a hang guard, not a time verdict
HEADER, MODULE, THREAD, ACCESS, EVENTS, MAPS, FOOTER, ALLOC_SITES = range(1, 9)

_zstd = ctypes.CDLL(ctypes.util.find_library('zstd') or 'libzstd.so.1')
_zstd.ZSTD_decompress.restype = ctypes.c_size_t
_zstd.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]


def frame_content(frame, cap=1 << 24):
    """A zstd frame's decompressed bytes (its checksum verified), None if it does not decode."""
    out = ctypes.create_string_buffer(cap)
    n = _zstd.ZSTD_decompress(out, cap, frame, len(frame))
    return None if _zstd.ZSTD_isError(n) else out.raw[:n]


def damaging_flip(data, start, end):
    """The position nearest the middle of the frame data[start:end] whose bit
    0x20 changes what the frame decodes to. Some bits of a zstd frame never
    reach its output (an FSE table's unused states, a bitstream's padding): a
    flip there leaves the file as it was, which no reader can or should
    report, so the campaign flips a bit that does damage the block."""
    frame = bytes(data[start:end])
    want = frame_content(frame)
    mid = (start + end) // 2
    for d in range(end - start):
        for p in (mid - d, mid + d):
            if start <= p < end:
                m = bytearray(frame)
                m[p - start] ^= 0x20
                if frame_content(bytes(m)) != want:
                    return p
    return mid
NAMES = {HEADER: 'HEADER', MODULE: 'MODULE', THREAD: 'THREAD', ACCESS: 'ACCESS',
         EVENTS: 'EVENTS', MAPS: 'MAPS', FOOTER: 'FOOTER', ALLOC_SITES: 'ALLOC_SITES'}
UNKNOWN_TYPE = 9   # a block type no reader of this version knows
ALLOC_EVENT, STACK_SITE = 10, 0xFFFFFFFF


def blocks_of(data):
    """(offset, end, type, thread, count) of every block, from the index frames."""
    out, off = [], 0
    while off < len(data):
        magic, length, typ, thread, count, size = struct.unpack_from('<6I', data, off)
        assert magic == 0x184D2A50 and length == 16, 'not an intact pes trace'
        out.append((off, off + 24 + size, typ, thread, count))
        off += 24 + size
    assert off == len(data)
    return out


def site_ids(data, block):
    """The ids of an ALLOC_SITES block (§2.6: u32 id, kind, depth, u64 ip[depth])."""
    p, off, ids = payload_of(data, block), 0, set()
    for _ in range(block[4]):
        sid, _kind, depth = struct.unpack_from('<3I', p, off)
        ids.add(sid)
        off += 12 + 8 * depth
    return ids


def alloc_sites_used(data, block, version):
    """The allocation sites the alloc events of an EVENTS block name (§4: the
    kind column, then flags, size, thread, other_thread, site), and from
    version 3 the call stacks its events name (the last column, stack)."""
    p, n = payload_of(data, block), block[4]
    kinds = p[:n]
    sites = struct.unpack_from('<%dI' % n, p, n * (1 + 1 + 2 + 4 + 4))
    used = {s for k, s in zip(kinds, sites) if k == ALLOC_EVENT and s != STACK_SITE}
    if version >= 3:
        stacks = struct.unpack_from('<%dI' % n, p, n * 72)
        used |= {s for s in stacks if s not in (0, 0xFFFFFFFF)}
    return used


def without_paths(report):
    """The report without the call paths of its rows (symbolized through the
    MAPS block: without it they name addresses)."""
    if isinstance(report, dict):
        return {k: without_paths(v) for k, v in report.items() if k != 'callpaths'}
    if isinstance(report, list):
        return [without_paths(v) for v in report]
    return report


def mutants(data):
    """Yields (name, bytes, expected) for every mutant of one trace.

    expected is 'error', 'warning' or 'silent': what a reader that checks what
    the format promises (docs/trace-format.md §1, §6) must say; 'warning_empty'
    is a warning for a cut-off file with no complete ACCESS block; 'error_any'
    an error whose message may differ between the commands.
    """
    bl = blocks_of(data)
    raw = [data[s:e] for s, e, *_ in bl]
    n = len(bl)
    kind_of = [NAMES.get(b[2], str(b[2])) for b in bl]

    full = any(b[2] == ACCESS for b in bl)
    # allocation sites and call stacks: defined by which ALLOC_SITES blocks, named by which EVENTS blocks
    # (records name sites too, but readers do not check those: §3)
    defines = {k: site_ids(data, b) for k, b in enumerate(bl) if b[2] == ALLOC_SITES}
    version = version_of(data)
    uses = {k: alloc_sites_used(data, b, version) for k, b in enumerate(bl) if b[2] == EVENTS}

    def sites_missing(order):   # an EVENTS block names a site no block before it defines
        known = set()
        for k in order:
            if k in uses and not uses[k] <= known:
                return True
            known |= defines.get(k, set())
        return False

    def cut_expect(k):   # the file ends inside block k or right before it
        if k == 0:
            return 'error'                 # not even a HEADER: cannot be opened
        if full and not any(b[2] == ACCESS for b in bl[:k]):
            return 'warning_empty'
        return 'warning'

    # Cuts at every block boundary, and inside every block: in its index
    # frame, somewhere in its data frame, one byte before its end.
    yield 'cut_empty', b'', 'error_any'
    for k in range(1, n):
        yield 'cut_after_%d_%s' % (k - 1, kind_of[k - 1]), b''.join(raw[:k]), cut_expect(k)
    for k, (s, e, typ, *_) in enumerate(bl):
        size = e - s
        inside = sorted({s + 1 + k % 22, s + 24 + (size - 24) * (k % 3 + 1) // 4, e - 1})
        for cut in inside:
            where = 'index' if cut - s < 24 else 'data'
            yield 'cut_in_%d_%s_%s' % (k, kind_of[k], where), data[:cut], cut_expect(k)

    # Whole blocks moved around.
    for k in range(n):
        t = bl[k][2]
        dup = b''.join(raw[:k + 1] + [raw[k]] + raw[k + 1:])
        # A second copy of a table block is the same table (§2.2: same module
        # merged once; a THREAD block restates the thread; MAPS lists the same
        # mappings twice). Anything else is seen: a second HEADER, data after
        # the FOOTER, a record count that no longer matches the footer.
        # (ALLOC_SITES: §2.6, a site repeated with the same content is the same site)
        yield 'dup_%d_%s' % (k, kind_of[k]), dup, \
            'silent' if t in (MODULE, THREAD, MAPS, ALLOC_SITES) else 'error'
        rest = raw[:k] + raw[k + 1:]
        if t == FOOTER:
            exp = 'warning'          # a file without FOOTER: an interrupted run
        elif t == MAPS:
            exp = 'silent'           # nothing in the format counts mappings (documented)
        elif t == ALLOC_SITES:
            # an alloc event naming one of its sites (which command meets it first varies)
            exp = 'error_any' if sites_missing([i for i in range(n) if i != k]) else 'silent'
        else:
            exp = 'error'            # HEADER first; record counts; tables the records use
        yield 'del_%d_%s' % (k, kind_of[k]), b''.join(rest), exp
        if k + 1 < n:
            sw = list(raw)
            sw[k], sw[k + 1] = sw[k + 1], sw[k]
            order = list(range(n))
            order[k], order[k + 1] = k + 1, k
            exp = 'error_any' if sites_missing(order) else swap_expect(bl, k)
            yield 'swap_%d_%s_%s' % (k, kind_of[k], kind_of[k + 1]), b''.join(sw), exp
        yield 'append_%d_%s' % (k, kind_of[k]), data + raw[k], 'error'

    # Index-frame fields (no checksum covers them: the copy in the data frame
    # and the frame's real size must catch every change), and one flipped
    # byte near the middle of every data frame, one that changes what the
    # frame decodes to (zstd checksum).
    for k, (s, e, typ, thread, count) in enumerate(bl):
        for field, pos, value in (('magic', 0, 0x184D2A51), ('length', 4, 17), ('type', 8, typ ^ 1),
                                  ('thread', 12, thread ^ 1), ('count', 16, count ^ 1),
                                  ('size_plus', 20, e - s - 24 + 1), ('size_minus', 20, e - s - 24 - 1)):
            m = bytearray(data)
            struct.pack_into('<I', m, s + pos, value)
            yield 'index_%s_%d_%s' % (field, k, kind_of[k]), bytes(m), 'error'
        m = bytearray(data)
        m[damaging_flip(data, s + 24, e)] ^= 0x20
        yield 'flip_data_%d_%s' % (k, kind_of[k]), bytes(m), 'error'


def swap_expect(bl, k):
    """Verdict for swapping blocks k and k+1 (§1: HEADER first, FOOTER last,
    a MODULE block before the records that use it, a THREAD block before its
    thread's ACCESS/EVENTS blocks, one thread's blocks in program order)."""
    a, b = bl[k], bl[k + 1]
    if HEADER in (a[2], b[2]) or FOOTER in (a[2], b[2]):
        return 'error'
    data_types = (ACCESS, EVENTS)
    if a[2] == MODULE and b[2] in data_types:
        return 'error'               # records before the module that names their ids
    if a[2] == THREAD and b[2] in data_types and b[3] == a[3]:
        return 'error'               # a thread's records before its THREAD block
    if a[2] == ACCESS and b[2] == ACCESS and a[3] == b[3]:
        return 'error'               # time marks go back (every full-trace block has one)
    if a[2] == EVENTS and b[2] == EVENTS and a[3] == b[3]:
        return 'silent'              # EVENTS carry no order the reader can check (§6)
    return 'silent'                  # different threads or tables: any interleaving is valid


def version_of(data):
    """The format version of a trace: its HEADER block's, which every block has (§5)."""
    frame = data[24:blocks_of(data)[0][1]]
    content = subprocess.run(['zstd', '-q', '-dc'], input=frame, stdout=subprocess.PIPE, check=True).stdout
    return struct.unpack_from('<H', content, 6)[0]


def encode_block(work, typ, thread, count, payload, version):
    """A block as the format says (§1): index frame, then a zstd frame with
    content size and checksum (the zstd command writes both for a file)."""
    content = b'PESB' + struct.pack('<HHIIQ', typ, version, thread, count, len(payload)) + payload
    path = os.path.join(work, 'block.bin')
    with open(path, 'wb') as f:
        f.write(content)
    frame = subprocess.run(['zstd', '-q', '-c', path], stdout=subprocess.PIPE, check=True).stdout
    return struct.pack('<6I', 0x184D2A50, 16, typ, thread, count, len(frame)) + frame


def payload_of(data, block):
    """The payload of a block (zstd -d of its data frame, block header dropped)."""
    frame = data[block[0] + 24:block[1]]
    return subprocess.run(['zstd', '-q', '-dc'], input=frame, stdout=subprocess.PIPE, check=True).stdout[24:]


def with_unknown_block(data, work):
    """The trace with a block of a type unknown to this reader before its FOOTER."""
    bl = blocks_of(data)
    return data[:bl[-1][0]] + encode_block(work, UNKNOWN_TYPE, 0, 1, b'a newer writer', version_of(data)) + data[bl[-1][0]:]


def with_lost_event(data, work, lost):
    """A sampled trace with one more EVENTS block: a LOST event of `lost` in
    the first thread of its footer, whose records and lost counts follow."""
    bl = blocks_of(data)
    footer = bytearray(payload_of(data, bl[-1]))
    thread, records = struct.unpack_from('<IQ', footer, 8)
    struct.pack_into('<Q', footer, 8 + 4, records + 1)
    struct.pack_into('<Q', footer, 8 + 36, struct.unpack_from('<Q', footer, 8 + 36)[0] + lost)
    # the event's columns (§4): kind flags size thread other site addr ip time loads stores distance aux
    event = struct.pack('<BBHIIIQQQQQQQ', 5, 0, 0, thread, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0, 0, 0, 0, lost)
    version = version_of(data)
    if version >= 3:   # the stack column: none
        event += struct.pack('<I', 0xFFFFFFFF)
    return (data[:bl[-1][0]] + encode_block(work, EVENTS, thread, 1, event, version) +
            encode_block(work, FOOTER, 0, bl[-1][4], bytes(footer), version))


def truncated_of(report):
    """The "truncated" flag of a full-trace report (under "trace") or a sampled one."""
    t = report.get('trace')
    return t.get('truncated') if isinstance(t, dict) else report.get('truncated')


def field_of(report, name):
    """A field of the trace summary: under "trace" (full trace) or at the top (sampled)."""
    t = report.get('trace')
    return t.get(name) if isinstance(t, dict) else report.get(name)


def without_path(report, *fields):
    """The report without the trace's file name (the one thing a mutant may
    change) and the given summary fields."""
    r = json.loads(json.dumps(report))
    summary = r['trace'] if isinstance(r.get('trace'), dict) else r
    for f in fields:
        summary.pop(f, None)
    if isinstance(r.get('trace'), dict):
        del r['trace']['path']
    else:
        del r['trace']
    return r


def check_extensions(data, work, commands, ref, sampled):
    """The skipped-block and lost-event traces; returns a list of problems."""
    problems = []
    path = os.path.join(work, 'unknown_block.zst')
    with open(path, 'wb') as f:
        f.write(with_unknown_block(data, work))
    warnings = set()
    for prog, argv in commands:
        rc, out, err = run(argv + [path])
        v = verdict(prog, rc, err, path, 'warning')
        if v[0] != 'warning' or not any('1 block of a type this reader does not know skipped' in m for m in v[1]):
            problems.append('unknown block: %s: %s %s' % (' '.join(argv[1:]) or prog, v[0], v[1]))
        warnings.add(tuple(v[1]))
        if '--format' in argv and rc == 0:
            report = json.loads(out)
            if field_of(report, 'skipped_blocks') != 1 or truncated_of(report) is not False:
                problems.append('unknown block: the JSON report lacks "skipped_blocks": 1')
            elif without_path(report, 'skipped_blocks') != without_path(ref, 'skipped_blocks'):
                problems.append('unknown block: the JSON report differs from the original trace')
    if len(warnings) > 1:
        problems.append('unknown block: different warnings: %s' % sorted(warnings))
    if not sampled:
        return problems
    path = os.path.join(work, 'lost_event.zst')
    with open(path, 'wb') as f:
        f.write(with_lost_event(data, work, 12345))
    for prog, argv in commands:
        rc, out, err = run(argv + [path])
        v = verdict(prog, rc, err, path, 'silent')
        if prog == 'pes-dump':   # a valid trace, dumped like any other
            if v[0] != 'silent':
                problems.append('lost event: %s: %s %s' % (' '.join(argv[1:]) or prog, v[0], v[1]))
            continue
        want = 'warning: %s: the collector lost 12345 samples or events' % path
        if v[0] != 'warning' or not any(m.startswith(want) for m in v[1]):
            problems.append('lost event: %s: %s %s' % (' '.join(argv[1:]), v[0], v[1]))
        if '--format' in argv and rc == 0 and json.loads(out).get('lost') != 12345:
            problems.append('lost event: the JSON report does not count the lost events')
    return problems


def run(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, b'', b'HANG: still running after %d s (stopped)' % TIMEOUT
    return p.returncode, p.stdout, p.stderr


def verdict(prog, rc, err, path, expected):
    """('error'|'warning'|'silent', [messages]) or ('bad', why)."""
    if rc is None:
        return 'bad', 'hangs (%s)' % err.decode(errors='replace')
    if rc < 0:
        return 'bad', 'killed by signal %d' % -rc
    lines = err.decode(errors='replace').splitlines()
    nothing = '%s: %s: the trace holds no memory accesses' % (prog, path)
    if expected == 'warning_empty' and prog == 'pes-replay' and rc == 1 and lines and lines[-1] == nothing:
        rc, lines = 0, lines[:-1]          # the documented exception, after the warning
    if rc == 0 and not lines:
        return 'silent', []
    if rc == 0 and all(l.startswith(prog + ': warning: ') for l in lines):
        return 'warning', [l[len(prog) + 2:] for l in lines]
    if rc == 1 and len(lines) == 1 and lines[0].startswith('%s: %s: ' % (prog, path)):
        msg = lines[0][len(prog) + 2:]
        if expected == 'error_any':
            return 'error', []
        # the file and the offset; a HEADER the reader cannot even find has offset 0
        if not re.match(re.escape(path) + r': (offset \d+: |not a pes trace \(no pes index frame at offset 0\)'
                        r'|truncated at offset \d+, inside the HEADER block)', msg):
            return 'bad', 'error does not name the offset: ' + lines[0]
        return 'error', [msg]
    return 'bad', 'exit %d, stderr: %s' % (rc, ' | '.join(lines[:3]))


def undefined_id_error(msg):
    """An error about an id no earlier MODULE block defines, without which block and
    record it names (the third exception above); any other error as it is."""
    msg = re.sub(r'offset \d+: ACCESS block: record \d+ has id \d+, which no earlier MODULE block defines$',
                 'offset N: ACCESS block: record N has id N, which no earlier MODULE block defines', msg)
    # a CALL's call site is such an id too (docs/trace-format.md §3.3)
    return re.sub(r'offset \d+: ACCESS block: record \d+ \(a call\) names site \d+, which no earlier MODULE '
                  r'block defines$',
                  'offset N: ACCESS block: record N has id N, which no earlier MODULE block defines', msg)


def main():
    bindir, work, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
    dump, replay = os.path.join(bindir, 'pes-dump'), os.path.join(bindir, 'pes-replay')
    failures = 0
    for trace in traces:
        data = open(trace, 'rb').read()
        commands = [('pes-dump', [dump]), ('pes-dump', [dump, '--stats']),
                    ('pes-replay', [replay, '--machine', 'haswell']),
                    ('pes-replay', [replay, '--machine', 'haswell', '--format', 'json']),
                    # read in time parts on threads (each part checks the order of
                    # its blocks, and the pairs across the cuts): the same verdicts
                    ('pes-replay', [replay, '--machine', 'haswell', '--parts', 'yes', '--jobs', '3'])]
        rc, ref_json, err = run(commands[3][1] + [trace])
        assert rc == 0 and not err, 'the intact trace %s: %s' % (trace, err)
        ref = json.loads(ref_json)
        sampled = ref.get('kind') == 'sampled'
        for problem in check_extensions(data, work, commands, ref, sampled):
            failures += 1
            print('FAIL: %s: %s' % (os.path.basename(trace), problem))
        counts = {}
        for name, mutant, expected in mutants(data):
            path = os.path.join(work, name + '.zst')
            with open(path, 'wb') as f:
                f.write(mutant)
            seen, problem, report = None, None, None
            for prog, argv in commands:
                rc, out, err = run(argv + [path])
                v = verdict(prog, rc, err, path, expected)
                if name.startswith('del_') and name.endswith('_MODULE') and v[0] == 'error':
                    v = ('error', [undefined_id_error(m) for m in v[1]])
                label = ' '.join([prog] + argv[1:])
                if v[0] == 'bad':
                    problem = '%s: %s' % (label, v[1])
                    break
                if seen is None:
                    seen = v
                elif v != seen:
                    problem = '%s says %s %s, pes-dump says %s %s' % (label, v[0], v[1], seen[0], seen[1])
                    break
                if '--format' in argv and rc == 0:
                    report = json.loads(out)
                elif '--format' in argv:
                    report = None
            if not problem and seen[0] != expected.split('_')[0]:
                problem = 'every command says %s %s; expected %s' % (seen[0], seen[1], expected)
            if not problem and seen[0] == 'warning' and report is not None:
                if truncated_of(report) is not True:
                    problem = 'the JSON report does not say "truncated": true'
            if not problem and seen[0] == 'silent':
                a, b = without_path(report), without_path(ref)
                if name.startswith('del_') and name.endswith('_MAPS'):
                    a, b = without_paths(a), without_paths(b)
                if a != b:
                    problem = 'accepted silently, but the JSON report differs from the original trace'
            counts[expected] = counts.get(expected, 0) + 1
            if problem:
                failures += 1
                print('FAIL: %s: mutant %s: %s' % (os.path.basename(trace), name, problem))
            else:
                os.unlink(path)
        print('%s: %d mutants x %d commands (%s)' % (
            os.path.basename(trace), sum(counts.values()), len(commands),
            ', '.join('%s %d' % kv for kv in sorted(counts.items()))))
    if failures:
        print('FAIL: %d mutants or constructed traces without the verdict they call for' % failures)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
