#!/usr/bin/env python3
"""test_bombs.py FLAMEGRAPH_BIN [plain|san] — hostile inputs to the `flamegraph` tool, each
generated here (small files): pprof profiles whose samples name a many-line location again
and again, a stack deeper than FG_MAX_DEPTH, 2-byte table entries by the million, a gzip
bomb, and a folded line of millions of frames. Each runs under resource limits (address
space, CPU seconds: a reader without bounds is stopped instead of taking the machine) and
must end with the documented error (or, for the tables, succeed), within a CPU-time and a
peak-memory bound proportional to the file. The bounds are generous for a busy machine (CPU
seconds, not wall time) and fail the unbounded readers by a wide margin (measured in the
commit that added this test). Under the sanitizer build (`san`) the resource limits and
bounds are left out (ASan reserves terabytes of address space) and the messages are checked."""
import atexit
import gzip
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import zlib

BIN = sys.argv[1]
SAN = len(sys.argv) > 2 and sys.argv[2] == "san"
AS_LIMIT = 1 << 30  # address space: the unbounded readers need several times this
CPU_LIMIT = 30  # CPU seconds: the unbounded pprof reader needs minutes
failures = []
tmp = tempfile.mkdtemp(prefix="fgbomb")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left in /tmp


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# ---- a minimal protobuf writer (profile.proto field numbers) ----
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def num(field, v):
    return varint(field << 3) + varint(v)


def msg(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body


def packed(field, values):
    return msg(field, b"".join(varint(v) for v in values))


def profile(strings, functions=(), locations=(), samples=b""):
    """strings: list (the first must be ""); functions: (id, name index); locations: (id,
    [(function id, line)]); samples: the encoded sample fields."""
    out = msg(1, num(1, strings.index("samples")) + num(2, strings.index("count")))
    out += samples
    for lid, lines in locations:
        out += msg(4, num(1, lid) + b"".join(msg(4, num(1, f) + num(2, ln)) for f, ln in lines))
    for fid, name in functions:
        out += msg(5, num(1, fid) + num(2, name))
    out += b"".join(msg(6, s.encode()) for s in strings)
    return out


def sample(locs, value=1):
    return msg(2, packed(1, locs) + packed(2, [value]))


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


def run(args):
    """Runs the tool; returns (exit status or -signal, stderr, CPU seconds, peak RSS in MB)."""
    out = open(os.path.join(tmp, "out.svg"), "wb")
    err = open(os.path.join(tmp, "stderr"), "w+b")
    p = subprocess.Popen([BIN] + args, stdout=out, stderr=err,
                         preexec_fn=None if SAN else limits)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    text = err.read().decode(errors="replace")
    return p.returncode, text, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def case(name, path, want_rc, want_err, cpu_s, rss_mb):
    size = os.path.getsize(path)
    rc, err, cpu, rss = run([path])
    print(f"{name}: {size} bytes, exit {rc}, {cpu:.2f} s CPU, peak RSS {rss:.0f} MB: {err.strip()[:160]}")
    check(rc == want_rc, f"{name}: exit {want_rc} (got {rc})")
    check(re.fullmatch(want_err, err, re.S) is not None, f"{name}: stderr {want_err!r} (got {err!r})")
    if not SAN:
        check(cpu <= cpu_s, f"{name}: at most {cpu_s} CPU seconds (took {cpu:.2f})")
        check(rss <= rss_mb, f"{name}: peak RSS at most {rss_mb:.0f} MB (used {rss:.0f})")


MB = 1 << 20

# 1. Samples that name a 200-line location 300 times each, 20,000 of them: 1.2e9 frames from
#    ~20 KB. Bounded: the expansion budget (64 MiB + 256 bytes per file byte) runs out.
strings = ["", "samples", "count", "f"]
loc = (1, [(1, ln) for ln in range(1, 201)])
body = profile(strings, [(1, 3)], [loc], sample([1] * 300) * 20000)
path = write("expand.pb.gz", gzip.compress(body, 9))
size = os.path.getsize(path)
budget_mib = (64 * MB + 256 * size) >> 20
case("pprof expansion", path, 1,
     rf"flamegraph: {re.escape(path)}: pprof: the samples' stacks expand to more than "
     rf"{budget_mib} MiB \(the limit for a {size}-byte file: 64 MiB \+ 256 bytes per byte, at "
     r"most 4 GiB\)\n", 10, 64 + 3 * (64 + 256 * size / MB))

# 2. One sample 70,000 frames deep (a 1-line location named 70,000 times).
body = profile(strings, [(1, 3)], [(1, [(1, 7)])], sample([1] * 70000))
path = write("deep.pb.gz", gzip.compress(body, 9))
case("pprof depth", path, 1,
     rf"flamegraph: {re.escape(path)}: pprof: sample 1: a stack deeper than 65536 frames "
     r"\(the limit, FG_MAX_DEPTH\)\n", 10, 128)

# 3. Ten million empty samples (2 bytes each), stored uncompressed (gzip level 0: no ratio
#    limit applies): a valid profile with nothing to draw. The tables cost nothing per sample.
body = profile(["", "samples", "count"], samples=b"\x12\x00" * 10_000_000)
path = write("tables.pb.gz", gzip.compress(body, 0))
size = os.path.getsize(path)
case("pprof tables", path, 0, r"", 10, 64 + 3 * size / MB)


# 4. A gzip bomb: 300 MiB of zeros in ~300 KB (deflate blocks of 1 MiB of zeros, each ending in
#    a full flush, so one block repeats: made in a moment). Refused at 100 times the file size.
def zeros_gzip(mib):
    z = bytes(MB)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == again
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(z, crc)
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    tail = crc.to_bytes(4, "little") + ((mib * MB) & 0xFFFFFFFF).to_bytes(4, "little")
    return head + block * mib + c.flush() + tail


data = zeros_gzip(300)
path = write("bomb.pb.gz", data)
size = os.path.getsize(path)
limit = max(16 * MB, 100 * size)
case("gzip bomb", path, 1,
     rf"flamegraph: {re.escape(path)}: pprof: inflates to more than {limit} bytes \(the limit "
     rf"for a {size}-byte file: 100 times its size, at least 16 MiB, at most 1 GiB\)\n",
     10, 64 + 2 * limit / MB)

# 5. A folded line of ten million frames (20 MB of "a;").
path = write("deep.folded", b"a;" * 10_000_000 + b"a 1\n")
size = os.path.getsize(path)
case("folded depth", path, 1,
     rf"flamegraph: {re.escape(path)}:1: a stack deeper than 65536 frames \(the limit, "
     r"FG_MAX_DEPTH\)\n", 10, 64 + 3 * size / MB)

# 6. At the limit itself: 65,536 frames read, in both formats.
path = write("limit.folded", b"a;" * 65535 + b"a 1\n")
rc, err, _, _ = run([path, "-f", "folded"])
check(rc == 0, f"folded: 65536 frames are read (exit {rc}: {err.strip()[:120]})")
body = profile(strings, [(1, 3)], [(1, [(1, 7)])], sample([1] * 65536))
path = write("limit.pb.gz", gzip.compress(body, 9))
rc, err, _, _ = run([path, "-f", "folded"])
check(rc == 0, f"pprof: 65536 frames are read (exit {rc}: {err.strip()[:120]})")

print(f"bombs: {len(failures)} failed")
sys.exit(1 if failures else 0)
