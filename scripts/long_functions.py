#!/usr/bin/env python3
"""Lists the C functions of the given folders longer than a limit (80 lines by default) whose
comment above does not say why they are long ("Long:" followed by the reason), and exits 1 when
there is one: issue #32's "no function over ~80 lines in agent/ and sampler/ without a reason
in a comment", checked (ctest: long_functions).

A function is a definition that starts at column 0 and ends at the first "}" at column 0 after
it (clang-format's layout, which scripts/format.sh --check holds). Its length is its lines of
code, from its first line to its closing brace: blank lines and lines that hold only a comment
do not count (a comment that explains a step does not make a function longer to read through;
both counts are printed). The comment above it is the block of comment lines right above its
first line.

    scripts/long_functions.py [--max N] [--list] DIR...
"""
import argparse
import os
import re
import sys

DEF = re.compile(r"^(?!typedef|struct\s+\w+\s*\{|enum|union|#)[A-Za-z_][^;{}=]*\)\s*\{\s*$")
NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def code_lines(body):
    """The lines of body that hold code: not blank, not only (part of) a comment."""
    n = 0
    in_comment = False
    for line in body:
        t = line.strip()
        code = False
        while t:
            if in_comment:
                e = t.find("*/")
                if e < 0:
                    t = ""
                else:
                    in_comment = False
                    t = t[e + 2:].strip()
            elif t.startswith("/*"):
                in_comment = True
                t = t[2:]
            elif t.startswith("//"):
                t = ""
            else:
                code = True
                break
        n += code
    return n


def functions(path):
    """(name, first line number, lines, comment above, lines of code) of each function
    definition in path."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        start = i
        # a definition whose parameters run over several lines: join until ") {"
        if re.match(r"^[A-Za-z_]", line) and "(" in line and not line.rstrip().endswith(";"):
            head = line
            j = i
            while not re.search(r"\)\s*\{\s*$", head) and j + 1 < len(lines) and j - i < 8:
                if head.rstrip().endswith(";") or lines[j + 1].startswith("}"):
                    break
                j += 1
                head += " " + lines[j].strip()
            if DEF.match(head) and re.search(r"\)\s*\{\s*$", head):
                end = j + 1
                while end < len(lines) and not lines[end].startswith("}"):
                    end += 1
                m = NAME.search(head)
                k = start - 1
                comment = []
                while k >= 0 and (lines[k].startswith("/*") or lines[k].startswith(" *") or
                                  lines[k].startswith("//")):
                    comment.insert(0, lines[k])
                    k -= 1
                body = lines[start:end + 1]
                yield (m.group(1) if m else "?", start + 1, end - start + 1, "\n".join(comment),
                       code_lines(body))
                i = end + 1
                continue
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--list", action="store_true", help="every long function, with a reason or not")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    bad = 0
    for d in a.dirs:
        for root, _, files in os.walk(d):
            for fn in sorted(files):
                if not fn.endswith(".c"):
                    continue
                path = os.path.join(root, fn)
                for name, line, total, comment, n in functions(path):
                    if n <= a.max:
                        continue
                    reasoned = "Long:" in comment
                    if not reasoned:
                        bad += 1
                    if a.list or not reasoned:
                        print(f"{path}:{line}: {name}: {n} lines of code ({total} lines)"
                              f"{' (reason given)' if reasoned else ' without a reason (Long: ...)'}")
    if bad:
        print(f"{bad} function(s) over {a.max} lines of code without a reason in the comment above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
