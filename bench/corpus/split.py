#!/usr/bin/env python3
"""The corpus's fixed tuning / validation split, decided before any tuning.

Rule: a program belongs to the tuning half when the first byte of SHA-256 of
its file's base name (e.g. b"stencil1d_jacobi.c") is even, to the validation
half when it is odd. Nothing else decides: a program added later falls where
its name's hash puts it, and no program is moved by hand.

  python3 bench/corpus/split.py            # both lists
  python3 bench/corpus/split.py validation # one half, one name a line
"""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def half(filename):
    """'tuning' or 'validation' for a corpus file name (base name, with .c)."""
    return "tuning" if hashlib.sha256(os.path.basename(filename).encode()).digest()[0] % 2 == 0 else "validation"


def programs(which="both"):
    """The corpus's program names (without .c), sorted, of one half or both."""
    names = sorted(f for f in os.listdir(HERE) if f.endswith(".c"))
    return [f[:-2] for f in names if which == "both" or half(f) == which]


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which in ("tuning", "validation"):
        print("\n".join(programs(which)))
    else:
        for h in ("tuning", "validation"):
            p = programs(h)
            print(f"{h} ({len(p)}): {', '.join(p)}")
