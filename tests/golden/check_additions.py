#!/usr/bin/env python3
"""Checks that regenerated golden reports only ADD to the old ones.

    python3 tests/golden/check_additions.py [REV]      (default REV: HEAD)

For every tests/golden/*.out that differs from its version at REV:
  * JSON: every value of the old report is in the new one at the same path,
    unchanged (objects may gain keys; arrays keep their length and order);
  * text: the old lines appear in the new report in the same order, each
    equal to a new line or its beginning (a column appended to a row), and
    the new report may have extra lines in between.
Prints one line per file and exits 1 if any old value or line changed. Use it
after tests/golden/update.sh when a change is meant to add output only.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def json_contained(old, new, path="$"):
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{path}: object became {type(new).__name__}"]
        errs = []
        for k, v in old.items():
            if k not in new:
                errs.append(f"{path}.{k}: removed")
            else:
                errs += json_contained(v, new[k], f"{path}.{k}")
        return errs
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{path}: array length {len(old)} -> {len(new) if isinstance(new, list) else type(new).__name__}"]
        errs = []
        for i, (a, b) in enumerate(zip(old, new)):
            errs += json_contained(a, b, f"{path}[{i}]")
        return errs
    return [] if old == new and type(old) == type(new) else [f"{path}: {old!r} -> {new!r}"]


def text_contained(old, new):
    j = 0
    for i, line in enumerate(old):
        while j < len(new) and not new[j].startswith(line if line else "\0") and new[j] != line:
            j += 1
        if j == len(new):
            return [f"line {i + 1} not found in order: {line!r}"]
        j += 1
    return []


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    changed = subprocess.run(["git", "diff", "--name-only", rev, "--", "tests/golden"], cwd=ROOT, check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    bad = 0
    for path in changed:
        if not path.endswith(".out"):
            continue
        old = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        if old.returncode:
            print(f"{path}: new file")
            continue
        new = open(os.path.join(ROOT, path)).read()
        if path.endswith(".json.out"):
            errs = json_contained(json.loads(old.stdout), json.loads(new))
        else:
            errs = text_contained(old.stdout.splitlines(), new.splitlines())
        print(f"{path}: {'only additions' if not errs else 'CHANGED'}")
        for e in errs[:10]:
            print("   ", e)
        bad |= bool(errs)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
