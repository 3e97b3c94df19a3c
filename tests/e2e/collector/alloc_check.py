#!/usr/bin/env python3
"""alloc_check.py DUMP_JSON REPORT EXPECT — the heap blocks of a trace (as
pes-dump --format json prints it) against what the program says it allocated
(REPORT: its "name=0x..." lines) and what its source says (EXPECT):

  prog  alloc_prog's blocks: a, a2 (one site), b, c, r0 -> r (realloc moves),
        k, m, w (worker thread); frees of b, r0 (by the realloc), r, w
  new   alloc_new's blocks: n = new double[1000] in make_n, s = new S in main

Full traces (ALLOC / ALLOC_SIZE / FREE records) and sampled ones (alloc /
free events) are read alike. Allocations whose call (the site's first ip)
lies in the program's own code must be exactly the expected ones; libc's own
(stdio buffers, thread set-up) are not counted. Stacks: one per thread that
ran instrumented code, holding that thread's local variable (--stacks)."""
import json
import sys


def fail(msg):
    print('alloc_check: FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def main():
    dump, report, expect = sys.argv[1], sys.argv[2], sys.argv[3]
    want_stacks = '--stacks' in sys.argv[4:]
    names = {}
    for line in open(report):
        if '=0x' in line:
            k, v = line.strip().split('=', 1)
            names[k] = int(v, 16)
    sites, maps, events = {}, [], []   # events: (thread, 'alloc'|'free', addr, size, site)
    pending = {}                       # thread -> ALLOC waiting for its ALLOC_SIZE
    lazy = False                       # a sampled trace with heap_events=used
    sampled_blocks = []                # its samples' blocks: (thread, start, size, site)
    for line in open(dump):
        o = json.loads(line)
        t = o.get('type')
        if t == 'header' and 'heap_events=used' in o.get('config', ''):
            lazy = True
        elif t == 'event' and o['kind'] == 'sample' and 'heap_block' in o['flags']:
            a = int(o['addr'], 16)
            if not o['distance'] < max(o['aux'], 1):
                fail('sample at 0x%x: offset %d in a block of %d' % (a, o['distance'], o['aux']))
            sampled_blocks.append((o['thread'], a - o['distance'], o['aux'], o['other_thread']))
        elif t == 'alloc_site':
            sites[o['id']] = (o['kind'], [int(x, 16) for x in o['ips']])
        elif t == 'mapping':
            maps.append((int(o['start'], 16), int(o['end'], 16), o['path']))
        elif t == 'alloc':
            if o['thread'] in pending:
                fail('thread %d: ALLOC without its ALLOC_SIZE' % o['thread'])
            pending[o['thread']] = (int(o['addr'], 16), o['site'])
        elif t == 'alloc_size':
            if o['thread'] not in pending:
                fail('thread %d: ALLOC_SIZE without an ALLOC before it' % o['thread'])
            addr, site = pending.pop(o['thread'])
            events.append((o['thread'], 'alloc', addr, o['size'], site))
        elif t == 'free':
            if o['thread'] in pending:
                fail('thread %d: FREE between an ALLOC and its ALLOC_SIZE' % o['thread'])
            events.append((o['thread'], 'free', int(o['addr'], 16), 0, None))
        elif t == 'event' and o['kind'] == 'alloc':
            site = None if o['site'] == 0xFFFFFFFF else o['site']
            events.append((o['thread'], 'alloc', int(o['addr'], 16), o['aux'], site))
        elif t == 'event' and o['kind'] == 'free':
            events.append((o['thread'], 'free', int(o['addr'], 16), 0, None))
    if pending:
        fail('ALLOC without ALLOC_SIZE at the end: %s' % pending)
    for _, kind, _, _, site in events:
        if kind == 'alloc' and site is not None and site not in sites:
            fail('site %d is in no ALLOC_SITES block' % site)

    # the program's code: the mapping that holds main
    main_fn = names['fn_main']
    exe = [m for m in maps if m[0] <= main_fn < m[1]]
    if len(exe) != 1:
        fail('no MAPS entry holds main (0x%x): %s' % (main_fn, maps))
    lo, hi, path = exe[0]
    def own(site):
        return site is not None and lo <= sites[site][1][0] < hi
    mine = [e for e in events if e[1] == 'alloc' and own(e[4])]
    by_addr = {}
    for e in mine:
        by_addr.setdefault(e[2], []).append(e)

    # bytes of code from a function's start a call in it may be at (main is long)
    span = {'fn_main': 16384, 'fn_worker': 4096}

    def block(name, size, kind, fn=None):
        addr = names[name]
        got = by_addr.get(addr, [])
        if len(got) != 1:
            fail('%s (0x%x): %d allocations recorded, expected 1' % (name, addr, len(got)))
        thread, _, _, gsize, site = got[0]
        skind, ips = sites[site]
        if gsize != size or skind != kind:
            fail('%s: %s of %d bytes, expected %s of %d' % (name, skind, gsize, kind, size))
        if fn is not None and not 0 <= ips[0] - names[fn] < span.get(fn, 1024):
            fail('%s: site %d calls from 0x%x, not in %s (0x%x)' % (name, site, ips[0], fn, names[fn]))
        return thread, site, ips

    def freed(name, thread):
        addr = names[name]
        hits = [e for e in events if e[1] == 'free' and e[2] == addr]
        if len(hits) != 1 or hits[0][0] != thread:
            fail('%s (0x%x): %d frees recorded (threads %s), expected 1 on thread %d' %
                 (name, addr, len(hits), [h[0] for h in hits], thread))
        return events.index(hits[0])

    def own_addr(addr):
        return addr in names.values()

    def index_of(name):
        return [i for i, e in enumerate(events) if e[1] == 'alloc' and e[2] == names[name] and own(e[4])][0]

    if lazy:
        # heap events as samples need them: the blocks samples name (and any
        # alloc event) must be the program's, with their sizes and calls
        known = {'prog': {'a': (4096, 'malloc', 'fn_make_a'), 'a2': (4096, 'malloc', 'fn_make_a'),
                          'b': (8192, 'malloc', 'fn_make_b'), 'c': (400, 'calloc', 'fn_main'),
                          'r': (1 << 20, 'realloc', 'fn_main'), 'm': (3000, 'aligned', 'fn_main'),
                          'k': (48, 'malloc', 'fn_main'), 'w': (512, 'malloc', 'fn_worker')},
                 'new': {'n': (8000, 'new', 'fn_make_n'), 's': (40, 'new', 'fn_main')}}[expect]
        by_start = {names[k]: (k,) + v for k, v in known.items()}
        seen = set()
        for thread, start, size, site in sampled_blocks + [(e[0], e[2], e[3], e[4]) for e in mine]:
            if site not in sites:
                fail('block 0x%x: site %d is in no ALLOC_SITES block' % (start, site))
            if not own(site):
                continue
            if start not in by_start:
                fail('a sample names block 0x%x of site %d, which the program did not allocate' % (start, site))
            name, want_size, kind, fn = by_start[start]
            skind, ips = sites[site]
            if size != want_size or skind != kind or not 0 <= ips[0] - names[fn] < span.get(fn, 1024):
                fail('%s: named as %s of %d bytes from 0x%x, expected %s of %d in %s' %
                     (name, skind, size, ips[0], kind, want_size, fn))
            seen.add(name)
        if not seen:
            fail('no sample in any of the program\'s blocks')
        # a free event only for a block whose alloc event came before it
        for i, e in enumerate(events):
            if e[1] == 'free' and own_addr(e[2]) and not any(
                    x[1] == 'alloc' and x[2] == e[2] for x in events[:i]):
                fail('free of 0x%x without its alloc event' % e[2])
        stacks = [e for e in events if e[1] == 'alloc' and e[4] is None]
        print('alloc_check: ok: %s (heap events as used), blocks sampled: %s, %d stacks' %
              (expect, sorted(seen), len(stacks)))
        return
    if expect == 'prog':
        ta, sa, ipa = block('a', 4096, 'malloc', 'fn_make_a')
        ta2, sa2, _ = block('a2', 4096, 'malloc', 'fn_make_a')
        tb, sb, ipb = block('b', 8192, 'malloc', 'fn_make_b')
        tc, sc, _ = block('c', 400, 'calloc', 'fn_main')
        t0, s0, _ = block('r0', 64, 'malloc', 'fn_main')
        tr, sr, _ = block('r', 1 << 20, 'realloc', 'fn_main')
        tm, sm, _ = block('m', 3000, 'aligned', 'fn_main')
        tk, sk, _ = block('k', 48, 'malloc', 'fn_main')
        tw, sw, _ = block('w', 512, 'malloc', 'fn_worker')
        if len({ta, ta2, tb, tc, t0, tr, tm, tk}) != 1:
            fail('the main thread\'s blocks are on several threads')
        if tw == ta:
            fail('the worker\'s block is on the main thread')
        if sa != sa2:
            fail('one call, two sites: a %d, a2 %d' % (sa, sa2))
        if len({sa, sb, sc, s0, sr, sm, sw, sk}) != 8:
            fail('distinct calls share a site: %s' % [sa, sb, sc, s0, sr, sm, sw, sk])
        # the callers of make_a / make_b: main
        if len(ipa) < 2 or not 0 <= ipa[1] - names['fn_main'] < span['fn_main']:
            fail('site of a: caller 0x%x is not in main' % (ipa[1] if len(ipa) > 1 else 0))
        if len(mine) != 9:
            fail('%d allocations from the program\'s code, expected 9: %s' % (len(mine), mine))
        if names['r'] == names['r0']:
            fail('the realloc did not move the block (the test needs it to)')
        # realloc: FREE(r0) then ALLOC(r), adjacent in the thread's order
        f0 = freed('r0', ta)
        ir = index_of('r')
        if not (f0 < ir and [e for e in events[f0 + 1:ir] if e[0] == ta] == []):
            fail('realloc: FREE of r0 is not right before the ALLOC of r')
        if freed('b', ta) < index_of('b') or freed('r', ta) < ir or freed('w', tw) < index_of('w'):
            fail('a FREE before its ALLOC')
        for name in ('a', 'a2', 'c', 'm', 'k'):
            if any(e[1] == 'free' and e[2] == names[name] for e in events):
                fail('%s was never freed, but a FREE names it' % name)
        locals_ = {ta: names['main_local'], tw: names['worker_local']}
    elif expect == 'new':
        tn, sn, _ = block('n', 8000, 'new', 'fn_make_n')
        ts, ss, _ = block('s', 40, 'new', 'fn_main')
        if sn == ss:
            fail('two new calls share a site')
        if len(mine) != 2:
            fail('%d allocations from the program\'s code, expected 2: %s' % (len(mine), mine))
        freed('n', tn)
        freed('s', ts)
        locals_ = {}
    else:
        fail('unknown expectation ' + expect)

    stacks = [e for e in events if e[1] == 'alloc' and e[4] is None]
    by_thread = {}
    for e in stacks:
        by_thread.setdefault(e[0], []).append(e)
    for thread, lst in by_thread.items():
        if len(lst) != 1:
            fail('thread %d: %d stack records' % (thread, len(lst)))
    if want_stacks:
        for thread, local in locals_.items():
            if thread not in by_thread:
                fail('thread %d: no stack record' % thread)
            _, _, base, size, _ = by_thread[thread][0]
            if not base <= local < base + size:
                fail('thread %d: its local 0x%x is not in its stack [0x%x, 0x%x)' %
                     (thread, local, base, base + size))
    print('alloc_check: ok: %s, %d own allocations, %d stacks' % (expect, len(mine), len(stacks)))


main()
