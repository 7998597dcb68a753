#!/usr/bin/env python3
"""No call that runs back up between sampler/'s folders (issue #32).

An include back up does not build (each source gets only its own and the lower folders'
include directories: sampler/CMakeLists.txt); a function or variable declared `extern` by hand
still could be used from below. This reads the objects' symbols (nm) and fails when an object
of one folder uses a symbol defined in a folder above it, or in the front door (sampler.c).
The rest of the top level (utf8.c) lies below every folder.

    check_folder_calls.py FOLDERS OBJECT...
FOLDERS: the folders from the bottom up, separated by ',' (as sampler/CMakeLists.txt adds them).
"""
import os
import subprocess
import sys

FRONT_DOOR = "sampler.c"


def place(obj, folders):
    """The folder of an object built from sampler/<folder>/<file>.c: its name in the path."""
    parts = os.path.normpath(obj).split(os.sep)
    name = parts[-1][: -len(".o")] if parts[-1].endswith(".o") else parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    if parent in folders:
        return parent, name
    return "", name  # the top level


def main():
    folders = [f for f in sys.argv[1].split(",") if f]
    objs = sys.argv[2:]
    if not folders or not objs:
        print(__doc__)
        return 2
    rank = {f: i for i, f in enumerate(folders)}
    defined, used = {}, {}
    for o in objs:
        folder, name = place(o, folders)
        if not folder:
            level = len(folders) if name == FRONT_DOOR else -1  # utf8.c: below every folder
        else:
            level = rank[folder]
        where = f"{folder or 'sampler'}/{name}"
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRCVW":
                defined[p[2]] = (level, where)
            elif len(p) == 2 and p[0] == "U":
                used.setdefault(o, (level, where, set()))[2].add(p[1])
    bad = 0
    for o, (level, where, syms) in sorted(used.items()):
        for s in sorted(syms):
            if s in defined and defined[s][0] > level:
                bad += 1
                print(f"{where} uses {s} of {defined[s][1]}, a folder above it")
    checked = sum(len(u[2]) for u in used.values())
    if bad:
        print(f"{bad} use(s) back up between sampler/'s folders")
        return 1
    print(f"no call back up: {len(objs)} objects, {checked} undefined symbols looked at")
    return 0


if __name__ == "__main__":
    sys.exit(main())
