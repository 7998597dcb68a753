#!/usr/bin/env python3
"""Does the agent's memory stay flat over a long run? A soak test.

    bench/soak.py [--seconds 3600] [--interval 1ms] [--opts threads] [--churn all|threads|classes] [--build build] [--check MB] [--nmt]

Runs the `soak` scenario of the integration tests (a thread starting a short-lived thread every
millisecond, one loading, running and dropping classes through fresh class loaders, one
allocating, one computing) with the agent, and beside it the same scenario without the agent,
for the same time. Every few seconds it reads each process's resident memory (VmRSS in
/proc/PID/status). The heap is fixed (-Xms64m -Xmx64m, pre-touched), so what moves is the JVM's
own native memory and the agent's.

After warm-up (the first third of the run) and until the workload ends (the profile is written
after), it fits a line to each process's resident-memory floor (the least reading of each of a
few equal time windows) and reports the growth over the rest of the run; the agent's own growth
is the agented process's less the plain one's. The floor, not every reading: the workload's full
collections malloc and free tens of MB at a time (G1's full-GC marking stacks), and a leak raises
the floor while such a peak does not. With --check MB it exits 1 when that difference is larger
than MB (what the test suite's 30-second run uses), printing the samples either way.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import agent_stats  # noqa: E402  (the agent's stats=, read back)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def slope(points):
    """Least-squares slope (kB per second) of [(t, kb)]."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mk = sum(k for _, k in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (k - mk) for t, k in points) / var if var else 0.0


JCMD = "jcmd"


def nmt(pid, what):
    """Output of `jcmd PID VM.native_memory WHAT` (the jcmd beside the java used, else PATH's)."""
    try:
        return subprocess.run([JCMD, str(pid), "VM.native_memory", what], capture_output=True, text=True,
                              timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def nmt_malloc_growth(diff, what="kb"):
    """{category: growth} from a summary.diff: of its malloc in kB ("kb"), or of its number of
    live malloc blocks ("blocks")."""
    group = 1 if what == "kb" else 2
    out, cat = {}, None
    for line in diff.splitlines():
        m = re.match(r"^-\s+([A-Za-z][\w ]*?) \(reserved=", line)
        if m:
            cat = m.group(1)
            continue
        m = re.search(r"\(malloc=\d+KB(?: ([+-]\d+)KB)?(?: #\d+(?: ([+-]\d+))?)?", line)
        if m and cat and cat not in out:
            out[cat] = int(m.group(group) or 0)
    return out


def nmt_committed_growth(diff):
    """{category: committed growth in kB} from a summary.diff (what the JVM has mapped and
    touched, malloc and mmap alike: metaspace, code cache, thread stacks, GC structures)."""
    out = {}
    for line in diff.splitlines():
        m = re.match(r"^-\s+([A-Za-z][\w ]*?) \(reserved=\d+KB(?: [+-]\d+KB)?, committed=\d+KB(?: ([+-]\d+)KB)?",
                     line)
        if m and m.group(1) not in out:
            out[m.group(1)] = int(m.group(2) or 0)
    return out


def tables_mb(launcher, pid, t=None):
    """What the agent's tables hold now (`sampler status`), in MB, or None; with t, prints the
    status lines (stacks, names, cached frame keys; the process's malloc) with the time. The
    malloc figures (in use, kept free, MB) go to MALLOC[t] (MALLOC[None] without t)."""
    try:
        out = subprocess.run([launcher, "status", str(pid)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"tables ([\d.]+) MB.*", out)
    a = re.search(r"malloc ([\d.]+) MB in use, ([\d.]+) MB kept free", out)
    if t is not None:
        for x in (m, a):
            if x:
                print(f"{t:7.1f} s  {x.group(0)}", flush=True)
    if a:
        MALLOC[t] = (float(a.group(1)), float(a.group(2)))
    return float(m.group(1)) if m else None


MALLOC = {}


def beside_nmt(launcher, procs, what, t, out=None):
    """`jcmd VM.native_memory WHAT` of each process (into out[name]), with the agented process's
    glibc malloc (`sampler status`) read just before and just after its own NMT reading: MALLOC[t]
    is their mean, so that both figures describe one moment. HotSpot's compiler arenas come and go
    in MBs within a second; readings seconds apart (the plain JVM's jcmd between them, on a busy
    machine) once put a 2.4 MB swing of NMT's figure on the agent. Returns the agent's tables (MB)."""
    tables = tables_mb(launcher, procs["agent"].pid, t)
    before = MALLOC.pop(t, None)
    reply = nmt(procs["agent"].pid, what)
    tables_mb(launcher, procs["agent"].pid)
    after = MALLOC.pop(None, None)
    if before and after:
        MALLOC[t] = ((before[0] + after[0]) / 2, (before[1] + after[1]) / 2)
        print(f"{t:7.1f} s  malloc in use around NMT's reading: {before[0]:.1f} and {after[0]:.1f} MB", flush=True)
    if out is not None:
        out["agent"] = reply
    for k, p in procs.items():
        if k != "agent":
            r = nmt(p.pid, what)
            if out is not None:
                out[k] = r
    return tables


def floors(points, windows):
    """[(mid-time, least kB)] of `windows` equal time windows over points [(t, kB)]."""
    t0, t1 = points[0][0], points[-1][0]
    width = (t1 - t0) / windows or 1.0
    out = []
    for w in range(windows):
        lo, hi = t0 + w * width, t0 + (w + 1) * width
        inside = [kb for t, kb in points if lo <= t < hi or (w == windows - 1 and t == t1)]
        if inside:
            out.append(((lo + hi) / 2, min(inside)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--interval", default="1ms")
    ap.add_argument("--opts", default="", help="more agent options, e.g. threads")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--java", default="java")
    ap.add_argument("--churn", choices=["all", "threads", "classes"], default="all",
                    help="which churn the scenario keeps: thread starts, class loaders, or both (default)")
    ap.add_argument("--every", type=float, default=None, help="seconds between readings (default: run/60, 1..30)")
    ap.add_argument("--check", type=float, default=None, help="fail when the agent's growth after warm-up exceeds this many MB")
    ap.add_argument("--check-malloc", type=float, default=None,
                    help="with --nmt: fail when the agented process's malloc in use grew by more than this many MB "
                         "beyond what NMT saw HotSpot's grow (the agent's own live allocations; allocator retention "
                         "and the JVM's own growth, which make the resident memory noisy, are not in it)")
    ap.add_argument("--nmt", action="store_true",
                    help="run both JVMs with Native Memory Tracking and report, per category, how much more the "
                         "agented JVM's own malloc grew after warm-up (HotSpot's jmethodID blocks: Class, Internal)")
    ap.add_argument("--tables-every", type=float, default=None,
                    help="seconds between readings of the agent's tables (`sampler status`; default with --nmt: "
                         "run/12, else none)")
    args = ap.parse_args()
    if args.check_malloc is not None and not args.nmt:
        ap.error("--check-malloc needs --nmt (HotSpot's own malloc growth, to leave out)")
    global JCMD
    beside = os.path.join(os.path.dirname(shutil.which(args.java) or args.java), "jcmd")
    JCMD = beside if os.path.exists(beside) else "jcmd"
    build = os.path.abspath(args.build)
    it = os.path.join(build, "tests", "integration")
    agent = os.path.join(build, "agent", "libsampler.so")
    every = args.every or min(30.0, max(1.0, args.seconds / 60))
    with tempfile.TemporaryDirectory(prefix="sampler-soak-") as tmp:
        # loop= needs the chunks named apart (the agent refuses a file= without %n or %t)
        out = os.path.join(tmp, "soak-%n.folded" if "loop=" in args.opts else "soak.folded")
        opts = (f"interval={args.interval},file={out},stats={tmp}/soak.json"
                + (f",{args.opts}" if args.opts else ""))
        base = [args.java, "-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch", f"-XX:ErrorFile={tmp}/hs_err_%p.log"]
        if args.nmt:
            base.append("-XX:NativeMemoryTracking=summary")
        tail = ["-cp", os.path.join(it, "classes"), "Scenarios", "soak", str(args.seconds),
                os.path.join(it, "payload-classes"), args.churn]
        procs = {
            "agent": subprocess.Popen(base + [f"-agentpath:{agent}={opts}"] + tail, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True),
            "plain": subprocess.Popen(base + tail, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        }
        t0 = time.time()
        samples = {k: [] for k in procs}
        warm = args.seconds / 3
        nmt_state, nmt_growth, nmt_committed, nmt_counts, tables, marks = "none", {}, {}, {}, [], []
        launcher = os.path.join(build, "bin", "sampler")
        tables_every = args.tables_every or (args.seconds / 12 if args.nmt else None)
        next_tables = tables_every
        while any(p.poll() is None for p in procs.values()):
            t = time.time() - t0
            if args.nmt and nmt_state == "none" and t >= warm:
                tables.append(beside_nmt(launcher, procs, "baseline", t))
                marks.append(t)
                nmt_state = "baseline"
            # the second mark 10 s before the end at least: its four attaches (sampler status and
            # jcmd, the agented JVM's and the plain one's) took ~4 s at load 9, past a mark 3.7 s
            # before the end, when the plain JVM had ended (no diff: jvm_soak failed twice so)
            elif args.nmt and nmt_state == "baseline" and t >= args.seconds - max(2 * every, 10):
                diffs = {}
                tables.append(beside_nmt(launcher, procs, "summary.diff", t, diffs))
                nmt_growth = {k: nmt_malloc_growth(d) for k, d in diffs.items()}
                nmt_committed = {k: nmt_committed_growth(d) for k, d in diffs.items()}
                nmt_counts = {k: nmt_malloc_growth(d, "blocks") for k, d in diffs.items()}
                marks.append(t)
                nmt_state = "diff"
            elif tables_every and t >= next_tables and t < args.seconds and procs["agent"].poll() is None:
                tables_mb(launcher, procs["agent"].pid, t)
            if tables_every and t >= next_tables:
                next_tables += tables_every
            for k, p in procs.items():
                kb = rss_kb(p.pid) if p.poll() is None else None
                if kb:
                    samples[k].append((t, kb))
            line = "  ".join(f"{k} {samples[k][-1][1] / 1024:.1f} MB" for k in procs if samples[k])
            print(f"{t:7.1f} s  {line}", flush=True)
            time.sleep(every)
        results = {k: p.communicate() for k, p in procs.items()}
        for k, p in procs.items():
            if p.returncode != 0:
                print(f"{k}: exit status {p.returncode}: {results[k][1][-2000:]}")
                return 1
        said = agent_stats.last(results["agent"][1])
        print(" ".join(f"{k}={v}" for k, v in said.items()))
        with open(out) as f:
            held = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
        if str(held) != said.get("samples"):
            print(f"FAIL: the profile holds {held} samples, the summary says {said.get('samples')}")
            return 1
    growth, own_malloc = {}, None
    for k in procs:
        # readings while the workload runs: after it, the agent writes its profile (and reads
        # symbol tables for it), which is a one-time cost, not growth
        after = [(t, kb) for t, kb in samples[k] if warm <= t <= args.seconds]
        floor = floors(after, max(4, min(20, len(after) // 5)))
        growth[k] = slope(floor) * (args.seconds - warm) / 1024  # MB over the rest of the run
        print(f"{k}: floor {floor[0][1] / 1024:.1f} MB after warm-up, {floor[-1][1] / 1024:.1f} MB at the end "
              f"(peak {max(kb for _, kb in after) / 1024:.1f} MB); fitted floor growth {growth[k]:+.1f} MB")
    own = growth["agent"] - growth["plain"]
    print(f"the agent's own growth after warm-up: {own:+.1f} MB over {args.seconds - warm:.0f} s")
    if "tables_kb" in said:
        print(f"the profile's tables at the end (stacks, frame key cache, names): "
              f"{int(said['tables_kb']) / 1024:.1f} MB, {said.get('stacks')} stacks")
    if nmt_growth.get("agent") and nmt_growth.get("plain"):
        a, b = nmt_growth["agent"], nmt_growth["plain"]
        more = {c: a.get(c, 0) - b.get(c, 0) for c in set(a) | set(b)}
        print("the agented JVM's malloc grew more than the plain one's after warm-up (Native Memory Tracking): " +
              ", ".join(f"{c} {more[c] / 1024:+.1f} MB" for c in sorted(more, key=lambda c: -abs(more[c]))
                        if abs(more[c]) >= 64))
        if nmt_committed.get("agent") and nmt_committed.get("plain"):
            a, b = nmt_committed["agent"], nmt_committed["plain"]
            more_c = {c: a.get(c, 0) - b.get(c, 0) for c in set(a) | set(b) if c != "Java Heap"}
            inside = sum(more_c.values()) / 1024
            print("the agented JVM's committed memory grew more than the plain one's (NMT, every category but "
                  "the heap): " + ", ".join(f"{c} {more_c[c] / 1024:+.1f} MB" for c in
                                            sorted(more_c, key=lambda c: -abs(more_c[c])) if abs(more_c[c]) >= 64) +
                  f"; in all {inside:+.1f} MB, against the own RSS growth {own:+.1f} MB (outside what NMT sees: "
                  f"{own - inside:+.1f} MB)")
        if nmt_counts.get("agent") and nmt_counts.get("plain"):
            a, b = nmt_counts["agent"], nmt_counts["plain"]
            more_n = {c: a.get(c, 0) - b.get(c, 0) for c in set(a) | set(b)}
            total = sum(more_n.values())
            # each block NMT tracks carries its 16-byte header (NMT's own committed memory) and
            # malloc's chunk overhead, neither of which the category's malloc figure counts
            print("live malloc blocks, agented less plain (NMT): " +
                  ", ".join(f"{c} {more_n[c]:+,}" for c in sorted(more_n, key=lambda c: -abs(more_n[c]))
                            if abs(more_n[c]) >= 100) +
                  f"; in all {total:+,} (at 16 bytes of NMT header each {total * 16 / 1048576:+.1f} MB)")
        jmid = (more.get("Class", 0) + more.get("Internal", 0)) / 1024
        grown = tables[1] - tables[0] if len(tables) == 2 and None not in tables else None
        if len(marks) == 2 and all(t in MALLOC for t in marks):
            (u0, f0), (u1, f1) = MALLOC[marks[0]], MALLOC[marks[1]]
            tracked = sum(nmt_growth["agent"].values()) / 1024  # kB of malloc, not blocks
            own_malloc = u1 - u0 - tracked
            print(f"the agented process's malloc from {marks[0]:.0f} to {marks[1]:.0f} s (`sampler status`): in use "
                  f"{u0:.1f} -> {u1:.1f} MB ({u1 - u0:+.1f}), of it HotSpot's (NMT) {tracked:+.1f} MB, the rest "
                  f"(the agent's own, and what NMT does not see) {u1 - u0 - tracked:+.1f} MB; kept free "
                  f"{f0:.1f} -> {f1:.1f} MB ({f1 - f0:+.1f})")
        if grown is None:
            print(f"of the agent's own growth, HotSpot's jmethodID blocks (Class + Internal, kept after their "
                  f"classes are unloaded) {jmid:+.1f} MB; the rest {own - jmid:+.1f} MB")
        else:
            print(f"of the agent's own growth, HotSpot's jmethodID blocks (Class + Internal, kept after their "
                  f"classes are unloaded) {jmid:+.1f} MB; the profile's tables ({tables[0]:.1f} -> "
                  f"{tables[1]:.1f} MB, `sampler status`) {grown:+.1f} MB; the rest {own - jmid - grown:+.1f} MB")
    if args.check is not None and own > args.check:
        print(f"FAIL: more than {args.check} MB")
        return 1
    if args.check_malloc is not None:
        if own_malloc is None:
            print("FAIL: --check-malloc: no malloc readings to compare (needs --nmt, and `sampler status` and "
                  "jcmd VM.native_memory answering at both marks)")
            return 1
        if own_malloc > args.check_malloc:
            print(f"FAIL: the agent's own malloc grew {own_malloc:+.1f} MB, more than {args.check_malloc} MB")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
