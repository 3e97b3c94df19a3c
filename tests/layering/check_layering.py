#!/usr/bin/env python3
"""Folder layering of collector/src: no cycle between its folders.

Two graphs, one node per folder (a file directly in the source root is the
folder "."):

  include  folder A -> folder B when a file of A has `#include "x"` that
           resolves to a file of B (searched next to the including file, then
           in each --include-dir, in order; names that resolve outside the
           source root, pes/trace.h for instance, are not edges);
  call     folder A -> folder B when an object compiled from A has an
           undefined symbol that an object compiled from B defines (nm), so
           naming a function or a variable of B counts; a call through a
           function pointer does not. Only the project's own names count
           (pes_*, __pes_*): the runtime's other definitions interpose the C
           library (malloc, pthread_create, sigaction), and a call to them is
           a call to libc that the dynamic linker happens to route.

An include that does not resolve that way but names a header that exists
elsewhere under the source root is an error: it would compile only through an
include directory that hides the folder it comes from.

Each graph must be acyclic. On a cycle the checker prints it, with for every
edge of the cycle a few of the files and symbols that make it, and exits 1.

Usage: check_layering.py --src DIR [--include-dir DIR]... [--nm NM] OBJECT...
An object's folder comes from its path: .../<target>.dir/<path below the
source root's parent>/<folder>/<file>.o as CMake names it, i.e. the part
after "src/" (--src's last component).
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    """Folder of a path relative to the source root."""
    parts = rel.split('/')
    return parts[0] if len(parts) > 1 else '.'


def include_graph(src, include_dirs):
    edges = defaultdict(list)   # (from, to) -> ["file -> header", ...]
    errors = []
    names = set()
    for root, _, files in os.walk(src):
        names.update(f for f in files if f.endswith('.h'))
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                target = None
                for d in [os.path.dirname(path), src] + include_dirs:
                    cand = os.path.normpath(os.path.join(d, inc))
                    if os.path.isfile(cand):
                        target = cand
                        break
                if target is None:
                    if os.path.basename(inc) in names:
                        errors.append('%s includes "%s", which is not a path from its folder or '
                                      'from %s' % (rel, inc, src))
                    continue
                trel = os.path.relpath(target, src)
                if trel.startswith('..'):
                    continue   # outside collector/src: a public or trace header
                a, b = folder_of(rel), folder_of(trel)
                if a != b:
                    edges[(a, b)].append('%s includes %s' % (rel, trel))
    return edges, errors


def object_folder(obj, src_name):
    """collector/CMakeFiles/pes-rt.dir/src/core/rt_init.c.o -> core."""
    p = obj.replace(os.sep, '/')
    m = re.search(r'\.dir/(?:.*/)?%s/(.+)\.o$' % re.escape(src_name), p)
    if not m:
        sys.exit('check_layering: cannot tell the folder of %s' % obj)
    rel = m.group(1)
    if rel.endswith('.c'):
        rel = rel[:-2]
    return folder_of(rel), rel + '.c'


def nm_symbols(nm, obj):
    out = subprocess.run([nm, '-g', obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ('U', 'w', 'v'):
            undefined.add(f[1])
        elif len(f) == 3 and f[1] not in ('U', 'w', 'v'):
            defined.add(f[2])
    return defined, undefined


def call_graph(objects, src_name, nm):
    owner = defaultdict(set)   # symbol -> {(folder, file)}
    uses = []
    for obj in objects:
        folder, rel = object_folder(obj, src_name)
        defined, undefined = nm_symbols(nm, obj)
        for s in defined:
            owner[s].add((folder, rel))
        uses.append((folder, rel, undefined))
    edges = defaultdict(list)
    for folder, rel, undefined in uses:
        for s in sorted(undefined):
            if not s.startswith(('pes_', '__pes_')):
                continue
            for dfolder, drel in sorted(owner.get(s, ())):
                if dfolder != folder:
                    edges[(folder, dfolder)].append('%s uses %s (%s)' % (rel, s, drel))
    return edges


def cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph[b]
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return graph, out


def one_cycle(graph, comp):
    """A shortest cycle through the component's first folder (BFS)."""
    start = comp[0]
    members = set(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def report(kind, edges):
    graph, comps = cycles(edges)
    print('%s graph: %s' % (kind, ', '.join('%s -> %s' % e for e in sorted(edges)) or 'no edges'))
    for comp in comps:
        path = one_cycle(graph, comp)
        print('%s cycle between folders: %s (all of %s depend on each other)'
              % (kind.upper(), ' -> '.join(path), ', '.join(comp)))
        for a, b in zip(path, path[1:]):
            why = edges[(a, b)]
            print('  %s -> %s (%d): %s%s' % (a, b, len(why), '; '.join(why[:4]),
                                            '; ...' if len(why) > 4 else ''))
    return not comps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--src', required=True)
    ap.add_argument('--include-dir', action='append', default=[])
    ap.add_argument('--nm', default='nm')
    ap.add_argument('objects', nargs='*')
    args = ap.parse_args()
    src = os.path.abspath(args.src)
    if not os.path.isdir(src):
        sys.exit('check_layering: %s: not a directory' % args.src)
    if not args.objects:
        sys.exit('check_layering: no object files given')
    edges, errors = include_graph(src, [os.path.abspath(d) for d in args.include_dir])
    for e in errors:
        print('INCLUDE error: %s' % e)
    ok = report('include', edges) and not errors
    ok &= report('call', call_graph(args.objects, os.path.basename(src), args.nm))
    print('layering: %s' % ('ok' if ok else 'FAILED'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
