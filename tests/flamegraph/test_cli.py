#!/usr/bin/env python3
"""test_cli.py FLAMEGRAPH_BIN FG_MAIN_C — the command-line tool end to end: --help lists
every long option the tool accepts (read from fg_main.c's option table), errors are
"flamegraph: FILE:LINE: reason" with exit 1 and no output file, usage errors exit 2, the
SVG is well-formed XML, the HTML's FG_DATA is valid JSON, two inputs make a diff, stdin works,
the format follows the -o extension."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BIN, MAIN_C = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, stdin=b""):
    return subprocess.run([BIN] + args, input=stdin, capture_output=True, timeout=60)


tmp = tempfile.mkdtemp(prefix="fgcli")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left in /tmp


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# --help lists every option of the option table
src = open(MAIN_C).read()
longopts = set(re.findall(r'\{\s*"([a-z-]+)",\s*(?:required|no)_argument', src))
check(len(longopts) >= 15, "option table parsed (%d)" % len(longopts))
r = run(["--help"])
check(r.returncode == 0, "--help exits 0")
helptext = r.stdout.decode()
for opt in sorted(longopts):
    check("--" + opt in helptext, "--help mentions --" + opt)
r = run(["--version"])
check(r.returncode == 0 and r.stdout.decode().startswith("flamegraph "), "--version")

# errors: FILE:LINE: reason, exit 1, the output file is not created
bad = write("bad.folded", b"a;b 1\na;b 2\r\n\na;b 1.5\n")
out = os.path.join(tmp, "out.svg")
r = run(["-o", out, bad])
check(r.returncode == 1, "bad input exits 1 (got %d)" % r.returncode)
check(r.stderr.decode() == "flamegraph: %s:4: fractional count '1.5' (counts are whole "
      "numbers of samples)\n" % bad, "error text: %r" % r.stderr)
check(not os.path.exists(out), "no output file on error")
r = run([], b"x;y\n")
check(r.returncode == 1 and r.stderr.decode().startswith(
    "flamegraph: <stdin>:1: missing sample count"), "stdin error: %r" % r.stderr)
r = run([os.path.join(tmp, "nope.folded")])
check(r.returncode == 1 and "No such file or directory" in r.stderr.decode(), "missing file")
for args in (["--width", "abc"], ["--colors", "plaid"], ["--format", "png"], ["--bogus"],
             ["a", "b", "c"], ["--minwidth", "200%"], ["--from", "25:00"], ["--to", "12:61"],
             ["--from", "2026-13-01T00:00"], ["--from", "12:00:05x"], ["--to", "1.5h"]):
    r = run(args)
    check(r.returncode == 2, "usage error %s exits 2 (got %d)" % (args, r.returncode))
    if args[0] in ("--from", "--to"):
        check("expected a time from the start (1.5s, 3000ms or seconds; negative from the end) "
              "or a wall-clock time" in r.stderr.decode(), "%s: %r" % (args, r.stderr))

# SVG: well-formed XML even with hostile names
good = write("good.folded", "main;<b>&\"'é;€ 3\nmain;java/lang/String.hashCode_[j] 5\n"
             "main;x</script> 1\n".encode())
r = run(["--title", "T <&>", "--colors", "java", "--hash", "--inverted", good])
check(r.returncode == 0, "svg exit 0")
try:
    root = ET.fromstring(r.stdout)
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    check("all (9 samples, 100%)" in titles, "svg titles %r" % titles[:3])
    check("<b>&\"'é (3 samples, 33.33%)" in titles, "escaped title round-trips")
except ET.ParseError as e:
    check(False, "SVG parses as XML: %s" % e)

# SVG: user-given text (--title, --subtitle, --countname) is XML text, never markup
evil = '<tspan id="x">&amp;</tspan>'
r = run(["--title", evil, "--subtitle", evil, "--countname", evil, good])
try:
    root = ET.fromstring(r.stdout)
    texts = {t.get("id"): t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    check(texts.get("title") == evil and texts.get("subtitle") == evil, "svg title/subtitle as text")
    check(not list(root.iter("{http://www.w3.org/2000/svg}tspan")), "svg: no element injected")
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    check("all (9 %s, 100%%)" % evil in titles, "svg count name as text: %r" % titles[:1])
except ET.ParseError as e:
    check(False, "SVG with hostile options parses as XML: %s" % e)

# HTML: FG_DATA is valid JSON with the schema fields; format from the extension
html = os.path.join(tmp, "out.html")
r = run(["-o", html, "--subtitle", "s", good])
check(r.returncode == 0, "html exit 0")
page = open(html, encoding="utf-8").read()
m = re.search(r"const FG_DATA = (.*?);\n", page, re.S)
check(m is not None, "FG_DATA present")
if m:
    data = json.loads(m.group(1))
    check(data["version"] == 1 and data["total"] == 9 and data["stride"] == 4, "schema")
    check("x</script>" in data["names"], "name with </script> intact in JSON")
    check(len(data["nodes"]) % 4 == 0 and data["nodes"][:4] == [-1, 0, 9, 0], "root node")
check(page.count("</script>") == page.count("<script"), "no early </script>")

# folded from stdin, sorted; reverse
r = run(["-f", "folded"], b"b 1\na;c 2\r\na 3\n")
check(r.stdout == b"a 3\na;c 2\nb 1\n", "folded sorted: %r" % r.stdout)
r = run(["-f", "folded", "--reverse", "-"], b"a;c 2\nb;c 1\n")
check(r.stdout == b"c;a 2\nc;b 1\n", "folded reversed: %r" % r.stdout)
fo = os.path.join(tmp, "x.folded")
r = run(["-o", fo], b"q 1\n")
check(open(fo, "rb").read() == b"q 1\n", "format from .folded extension")

# two inputs: a differential graph (base first)
base = write("base.folded", b"a;b 10\nold 5\n")
new = write("new.folded", b"a;b 30\nnew 4\n")
r = run(["-f", "folded", base, new])
check(r.stdout == b"a;b 10 30\nnew 0 4\nold 5 0\n", "diff folded: %r" % r.stdout)
r = run(["-f", "html", base, new])
m = re.search(rb"const FG_DATA = (.*?);\n", r.stdout, re.S)
data = json.loads(m.group(1)) if m else {}
check(data.get("diff") is True and data.get("stride") == 6 and data.get("totalBase") == 15,
      "diff html")
r = run([base, new])
check(b"Differential Flame Graph" in r.stdout, "diff svg")
# the diff's folded form reads back as a diff; it cannot be one side of another diff
dfold = write("d.folded", b"a;b 10 30\nnew 0 4\nold 5 0\n")
r = run(["-f", "folded", dfold])
check(r.stdout == b"a;b 10 30\nnew 0 4\nold 5 0\n", "diff folded round trip: %r" % r.stdout)
r = run([dfold, new])
check(r.returncode == 1 and r.stderr.decode() == "flamegraph: %s:1: a differential line (two "
      "counts) cannot be one side of a diff\n" % dfold, "two-count line as a side: %r" % r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
