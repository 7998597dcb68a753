#!/usr/bin/env python3
"""The cost of sampling measured inside one JVM: sampling switched off and on in alternate phases.

    bench/phases.py [--workloads all] [--interval 10ms] [--opts OPTIONS] [--jfr-events SPEC] [--runs 3]
                    [--warmup 4] [--seconds 24] [--phase 1.0] [--guard 0.25] [--name NAME] [--quick]

Between fresh JVMs the throughput of several workloads varies by 10-30% with no profiler at all
(what the JIT compiled, where the heap landed), which bench/suite.py's rounds have to average
away; inside one warmed-up JVM it varies far less. Each run here starts one JVM with the agent
loaded and sampling (-agentpath), and once the workload's timed phase has begun switches sampling
off and on again every --phase seconds (±20%, seeded) with the launcher (`sampler stop`,
`sampler start`), while the workload prints its operation count every 50 ms (Workloads --trace).
A phase's throughput is read from --guard seconds after its switch to the next switch (the
switch itself — the attach, writing the profile — is left out of both kinds of phase). An
on-phase's cost is 1 - its throughput / the mean throughput of the off-phases either side of it
(which cancels a linear drift); the table gives, per workload, the mean over all on-phases of
all runs with its 95% confidence interval, and the geometric mean over the workloads.

What it measures: the marginal cost of sampling in a warmed-up JVM with the agent loaded. Not
the cost of having the agent loaded (its class, compiled-code and thread hooks; bench/suite.py
with `--define s-idle=interval=10s` measures that), nor start-up. Process CPU per phase is read
from /proc/PID/stat: for `wakers`, paced by its sleeps, the cost shows as CPU, not throughput.
With `--interval 10s` an on-phase samples nothing: what the switching alone costs, and how far
the method's own noise reaches (the null run).

Writes bench/results/NAME.md and raw/NAME.csv (one row per phase).
"""
import argparse
import csv
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import suite  # noqa: E402  (the workload list, the JVM flags, the t quantiles)
import agent_stats  # noqa: E402  (the agent's stats=, read back)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

TICK_MS = 50


def proc_cpu_s(pid):
    """The process's user + system CPU so far (all threads), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def threads_cpu_ns(pid, prefix):
    """{tid: CPU ns so far} of the threads of pid whose name begins with prefix (schedstat's time
    on a CPU: ns, where stat's ticks are 10 ms)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if not f.read().startswith(prefix):
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # ended meanwhile
    return out


def jfr_events(args):
    """JFR's events and settings for the on-phases: --jfr-events, else CPU sampling at --interval."""
    if args.jfr_events:
        return suite.jfr_events("jfr:" + args.jfr_events)
    event = "jdk.CPUTimeSample" if args.profiler == "jfrcpu" else "jdk.ExecutionSample"
    num, unit = interval_parts(args)
    return [(event, f"{num}{unit}" if event == "jdk.CPUTimeSample" else f"{num} {unit}")]


def interval_parts(args):
    """The sampling interval as (number, unit)."""
    return re.fullmatch(r"(\d+)\s*(ns|us|ms|s)", args.interval).groups()


def interval_s(args):
    """The sampling interval in seconds."""
    num, unit = interval_parts(args)
    return int(num) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def profiler(args, tmp):
    """(JVM options, the switch-off command, the switch-on command, check) for the profiler
    measured: commands are lists with {pid} and {n} (the number of the switch) to fill in."""
    if args.profiler == "agent":
        opts = (f"interval={args.interval}" + (f",{args.opts}" if args.opts else "")
                + agent_stats.option(args.agent, f"{tmp}/stats.json", args.java))
        return ([f"-agentpath:{args.agent}={opts},file={tmp}/p0.folded"],
                [args.launcher, "stop", f"file={tmp}/p{{n}}.folded", "{pid}"],
                [args.launcher, "start", f"{opts},file={tmp}/p{{n}}.folded", "{pid}"], None)
    jfc = suite.jfc(tmp, jfr_events(args))
    return ([f"-XX:StartFlightRecording=name=phases,settings={jfc}"],
            [args.jattach, "{pid}", "jcmd", f"JFR.stop name=phases filename={tmp}/r{{n}}.jfr"],
            [args.jattach, "{pid}", "jcmd", f"JFR.start name=phases settings={jfc}"], ("Stopped", "Started"))


def one_run(args, workload, run, tmp):
    """One JVM. Returns its phases [{state, t0, t1, rate, cores, ...}], its checksum and, per
    on-phase that a switch-off ended, {samples, cpu_s, sampler_cpu_pct, own_cpu_pct}."""
    rng = random.Random(f"{workload}-{run}")
    jvm_opts, off_cmd, on_cmd, said = profiler(args, tmp)
    cmd = [args.java, *suite.JVM, *jvm_opts, "-cp", args.classes, "Workloads", workload,
           "--threads", str(args.threads), "--warmup", str(args.warmup), "--seconds", str(args.seconds),
           "--trace", str(TICK_MS)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ticks, summaries, out_lines, err_lines = [], [], [], []

    def read_out():
        for line in p.stdout:
            if line.startswith("tick "):
                _, ns, n = line.split()
                ticks.append((int(ns) / 1e9, int(n)))
            else:
                out_lines.append(line)

    def read_err():
        for line in p.stderr:
            err_lines.append(line)
            summaries.extend(agent_stats.each(line))  # read now: the next stop rewrites it

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + args.warmup + 60
    while not ticks and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if not ticks:
        p.kill()
        sys.exit(f"{workload}: the workload never began its timed phase:\n{''.join(err_lines)[-2000:]}")
    start = ticks[0][0]
    end = start + args.seconds
    # switches: (t before the command, t after it, state after it, process CPU before it)
    switches = [(start, start, "on", proc_cpu_s(p.pid))]
    # JFR's own threads' CPU at each switch (the agent states its own in its summary)
    jfr = args.profiler != "agent"
    snaps = [threads_cpu_ns(p.pid, "JFR ") if jfr else None]
    state, n = "on", 0
    while True:
        length = args.phase * rng.uniform(0.8, 1.2)
        if switches[-1][1] + length + args.phase * 0.8 + args.guard > end:
            break
        time.sleep(max(0.0, switches[-1][1] + length - time.monotonic()))
        cpu = proc_cpu_s(p.pid)
        snaps.append(threads_cpu_ns(p.pid, "JFR ") if jfr else None)
        n += 1
        argv = [a.replace("{pid}", str(p.pid)).replace("{n}", str(n)) for a in (off_cmd if state == "on" else on_cmd)]
        t_a = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        t_b = time.monotonic()
        if r.returncode != 0 or (said and said[0 if state == "on" else 1] not in r.stdout):
            p.kill()
            sys.exit(f"{workload}: `{' '.join(argv)}` exited {r.returncode}: {(r.stdout + r.stderr).strip()}")
        state = "off" if state == "on" else "on"
        switches.append((t_a, t_b, state, cpu))
    switches.append((min(time.monotonic(), end), None, None, proc_cpu_s(p.pid)))
    snaps.append(threads_cpu_ns(p.pid, "JFR ") if jfr else None)
    p.wait(timeout=args.seconds + 120)
    for r in readers:
        r.join(timeout=10)
    if p.returncode != 0:
        sys.exit(f"{workload}: java exited {p.returncode}:\n{''.join(err_lines)[-2000:]}")
    checksum = re.search(r"checksum=(-?\d+)", "".join(out_lines))
    phases, on_stats = [], []
    for i in range(len(switches) - 1):
        _, after, st, cpu0 = switches[i]
        until, _, _, cpu1 = switches[i + 1]
        lo, hi = after + args.guard, until
        # the on-phases that a switch-off ended, but the first (it began at start-up)
        if st == "on" and i > 0 and i + 1 < len(switches) - 1 and cpu0 is not None and cpu1 is not None:
            on_stats.append({"n": i + 1, "cpu_s": cpu1 - cpu0, "wall_s": until - switches[i][0]})
            if jfr and cpu1 > cpu0:
                # a thread that began in the phase counts from zero; one that ended in it is lost
                a, b = snaps[i], snaps[i + 1]
                used = sum(ns - a.get(tid, 0) for tid, ns in b.items())
                on_stats[-1]["own_cpu_pct"] = 100 * used / 1e9 / (cpu1 - cpu0)
        inside = [(t, k) for t, k in ticks if lo <= t <= hi]
        if len(inside) < 3:
            continue
        (ta, ka), (tb, kb) = inside[0], inside[-1]
        ph = {"workload": workload, "run": run, "phase": i, "state": st, "t0": round(lo - start, 3),
              "t1": round(hi - start, 3), "rate": (kb - ka) / (tb - ta)}
        # the process's CPU per second from switch to switch (the switch itself included: it is
        # short, and on both kinds of phase)
        if cpu0 is not None and cpu1 is not None and until > switches[i][0]:
            ph["cores"] = (cpu1 - cpu0) / (until - switches[i][0])
        phases.append(ph)
    # samples of each of those on-phases: the agent's summary at its stop (summaries[0] is the
    # first stop's), or the JFR recording written at its stop
    for st in on_stats:
        if args.profiler == "agent":
            k = st["n"] // 2  # stops are the odd switches: switch 1 -> summaries[0], 3 -> [1], ...
            if k < len(summaries):
                st["samples"] = sum(int(summaries[k].get(c, 0)) for c in ("captures", "alloc_samples", "lock_samples"))
                st["sampler_cpu_pct"] = 100 * float(summaries[k].get("sampler_cpu_ms", 0)) / 1000 / max(
                    float(summaries[k].get("wall_s", 1)), 1e-3)
                if "own_cpu_pct" in summaries[k]:
                    st["own_cpu_pct"] = float(summaries[k]["own_cpu_pct"])
        else:
            counts = suite.jfr_samples(args, os.path.join(tmp, f"r{st['n']}.jfr"), [e for e, _ in jfr_events(args)])
            st["samples"] = sum(counts.values()) if counts else None
    return phases, (checksum.group(1) if checksum else None), on_stats


def costs(phases):
    """The cost in % of each on-phase against the off-phases right before and after it (one run):
    their throughputs interpolated linearly to the on-phase's middle, which cancels a linear
    drift whatever the phases' lengths. An on-phase without an off-phase on both sides (the
    first of a run, the last) is left out: against one side, a workload still warming up (the
    rate of `compiler` rises from 250 to 750 ops/s through its first 15 s) made the first
    on-phase of every run cost ~25%."""
    by = {ph["phase"]: ph for ph in phases}
    out = []
    for ph in phases:
        if ph["state"] != "on":
            continue
        a, b = by.get(ph["phase"] - 1), by.get(ph["phase"] + 1)
        if not a or not b or a["state"] != "off" or b["state"] != "off":
            continue
        mid = lambda q: (float(q["t0"]) + float(q["t1"])) / 2
        f = (mid(ph) - mid(a)) / (mid(b) - mid(a)) if mid(b) > mid(a) else 0.5
        ref = a["rate"] + f * (b["rate"] - a["rate"])
        if ref <= 0 or ph["rate"] <= 0:
            continue
        cores = a.get("cores") and b.get("cores") and a["cores"] + f * (b["cores"] - a["cores"])
        out.append({"cost": 100 * (1 - ph["rate"] / ref), "log": math.log(ph["rate"] / ref),
                    "cpu": 100 * (ph["cores"] / cores - 1) if cores and ph.get("cores") else None})
    return out


def load_raw(names):
    """The phases of raw/NAME.csv for each of the comma-separated names, pooled: each file's
    JVMs kept apart as runs of their own."""
    phases = []
    for name in names.split(","):
        base = 1 + max((p["run"] for p in phases), default=-1)
        with open(os.path.join(HERE, "results", "raw", name + ".csv")) as f:
            phases += [dict(r, run=base + int(r["run"]), phase=int(r["phase"]), rate=float(r["rate"]),
                            cores=float(r["cores"]) if r["cores"] else None) for r in csv.DictReader(f)]
    return phases


def reanalyze(names, against=None, only="all"):
    """The costs of a run again from its raw/NAME.csv (with this version's estimator): per
    workload the mean with its 95% CI, and the geometric mean; the other columns need the run.
    Several names (comma-separated: runs of one configuration made apart, e.g. alternating with
    another configuration's) are pooled. With `against` (names of another configuration's runs,
    pooled the same way) it prints both and the difference, first less second, with its 95% CI
    (Welch), per workload and for the geometric means. `only`: the workloads (--workloads)."""
    sets = [load_raw(names)] + ([load_raw(against)] if against else [])
    workloads = [w for w in dict.fromkeys(p["workload"] for p in sets[0]) if only == "all" or w in only.split(",")]
    print(" against ".join(f"{n} (raw/{n.replace(',', ', raw/')}.csv)" for n in [names] + ([against] if against else [])))
    print("| workload | on-phases | cost % (mean ± 95% CI) |" + (" against: on-phases | cost % | difference (95% CI) |" if against else ""))
    print("|---|---|---|" + ("---|---|---|" if against else ""))
    logs = [[] for _ in sets]
    for wl in workloads:
        cs = [costs_by_run([p for p in ph if p["workload"] == wl]) for ph in sets]
        if any(len(c) < 2 for c in cs):
            print(f"| {wl} | {' / '.join(str(len(c)) for c in cs)} | (too few to compare: left out of the mean) |")
            continue
        cells = []
        for k, c in enumerate(cs):
            m, ci = suite.mean_ci([x["cost"] for x in c])
            logs[k].append(log_stat(c))
            cells.append(f"{len(c)} | {m:+.2f} ± {ci:.2f}")
        if against:
            d, ci = welch([x["cost"] for x in cs[0]], [x["cost"] for x in cs[1]])
            cells.append(f"{d:+.2f} ± {ci:.2f}")
        print(f"| {wl} | " + " | ".join(cells) + " |")
    print()
    for k, n in enumerate([names] + ([against] if against else [])):
        print(f"{n}: " + geomean_line(logs[k]))
    if against and logs[0] and len(logs[0]) == len(logs[1]):
        # the geometric means' ratio: the difference of the mean log ratios, their errors combined
        g = [sum(m for m, _ in lg) / len(lg) for lg in logs]
        se = math.sqrt(sum(sum(s * s for _, s in lg) / len(lg) ** 2 for lg in logs))
        pct = lambda x: 100 * (1 - math.exp(x))
        print(f"the first's throughput cost relative to the second's (geometric means): "
              f"**{pct(g[0] - g[1]):+.2f}%** (95% CI {pct(g[0] - g[1] + 1.96 * se):+.2f} to "
              f"{pct(g[0] - g[1] - 1.96 * se):+.2f}; negative: the first costs less)")
    return 0


def welch(a, b):
    """The difference of the means of a and b with its 95% CI half-width (Welch's t)."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    df = (va + vb) ** 2 / (va * va / (len(a) - 1) + vb * vb / (len(b) - 1)) if va + vb > 0 else 1
    return statistics.mean(a) - statistics.mean(b), suite.t95(max(1, int(df))) * math.sqrt(va + vb)


def log_stat(c):
    """(mean, standard error) of the log throughput ratios of on-phases c (at least two)."""
    lg = [x["log"] for x in c]
    return statistics.mean(lg), statistics.stdev(lg) / math.sqrt(len(lg))


def geomean_line(logs):
    """The geometric mean of the workloads' costs with its 95% CI, from (mean, s.e.) of logs."""
    g = sum(m for m, _ in logs) / len(logs)
    se = math.sqrt(sum(s * s for _, s in logs)) / len(logs)
    lo, hi = 100 * (1 - math.exp(g + 1.96 * se)), 100 * (1 - math.exp(g - 1.96 * se))
    return (f"Geometric mean over the {len(logs)} workloads: **{100 * (1 - math.exp(g)):+.2f}%** "
            f"(95% CI {lo:+.2f} to {hi:+.2f}).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--profiler", choices=["agent", "jfr", "jfrcpu"], default="agent",
                    help="this agent; JFR's jdk.ExecutionSample; JFR's jdk.CPUTimeSample (JDK 25)")
    ap.add_argument("--interval", default="10ms")
    ap.add_argument("--opts", default="", help="more agent options for the on-phases")
    ap.add_argument("--jfr-events", default=None, metavar="EVENT:SETTING[+...]",
                    help="with --profiler jfr: these events instead of CPU sampling "
                         "(e.g. jdk.ObjectAllocationSample:150/s; as bench/suite.py's jfr: configurations)")
    ap.add_argument("--java", default="java")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=3, help="JVMs per workload (interleaved across workloads)")
    ap.add_argument("--warmup", type=float, default=4)
    ap.add_argument("--seconds", type=float, default=24, help="the timed phase, switched off and on")
    ap.add_argument("--phase", type=float, default=1.0, help="seconds between switches (±20%%)")
    ap.add_argument("--guard", type=float, default=0.25, help="seconds after a switch left out of the phase")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside the JVM (a busy host)")
    ap.add_argument("--build", default=os.path.join(suite.ROOT, "build"))
    ap.add_argument("--name", default=None)
    ap.add_argument("--reanalyze", metavar="NAME[,NAME...]",
                    help="print the costs of an earlier run again from raw/NAME.csv (several: pooled)")
    ap.add_argument("--against", metavar="NAME[,NAME...]",
                    help="with --reanalyze: another configuration's runs, and the difference")
    ap.add_argument("--quick", action="store_true", help="a smoke run (the test suite's): scimark, one short run")
    args = ap.parse_args()
    if args.against and not args.reanalyze:
        ap.error("--against compares with the runs --reanalyze names: give --reanalyze NAME too")
    if args.reanalyze:
        return reanalyze(args.reanalyze, args.against, args.workloads)
    args.agent = os.path.join(args.build, "agent", "libsampler.so")
    args.launcher = os.path.join(args.build, "bin", "sampler")
    args.classes = os.path.join(args.build, "bench", "classes")
    args.java_path = os.path.realpath(shutil.which(args.java) or args.java)
    args.jattach = shutil.which("jattach") or "jattach"
    if args.quick:
        args.workloads, args.runs, args.warmup, args.seconds, args.phase = "scimark", 1, 1, 12, 0.8
    workloads = suite.WORKLOADS if args.workloads == "all" else args.workloads.split(",")
    for w in workloads:
        if w not in suite.KNOWN:
            sys.exit(f"unknown workload {w} (known: {', '.join(suite.KNOWN)})")
    for path in (args.agent, args.launcher, os.path.join(args.classes, "Workloads.class")):
        if not os.path.exists(path):
            sys.exit(f"{path} missing: build first (cmake -S . -B build && cmake --build build)")
    version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    name = args.name or ("phases-quick" if args.quick else f"phases-{args.profiler}-{args.interval}")
    args.sigcost = os.path.join(args.build, "bench", "sigcost")
    phases, stats, sums, floors = [], {w: [] for w in workloads}, {w: set() for w in workloads}, []
    started = time.time()
    busy = children.hogs(args.busy)
    try:
        with tempfile.TemporaryDirectory(prefix="sampler-phases-") as tmp:
            for run in range(args.runs):
                for w in workloads:
                    ph, checksum, on_stats = one_run(args, w, run, tmp)
                    phases += ph
                    stats[w] += on_stats
                    sums[w].add(checksum)
                    c = [x["cost"] for x in costs(ph)]
                    print(f"[{time.time() - started:6.0f} s] run {run + 1} {w:9s} {len(c)} on-phases, cost "
                          f"{statistics.mean(c) if c else float('nan'):+.2f}%", file=sys.stderr, flush=True)
                    if not args.quick:
                        # the floor of the mechanism beside each JVM (suite.py's: two busy threads
                        # signalled every 1 ms, against none, 2 s each)
                        f = suite.sigcost_floor(argparse.Namespace(sigcost=args.sigcost, seconds=2))
                        if f is not None:
                            floors.append(f)
    finally:
        for b in busy:
            b.kill()
    write(args, name, version, workloads, phases, stats, sums, floors)
    for w in workloads:
        n_on = len(costs_by_run([p for p in phases if p["workload"] == w]))
        # every on-phase that a `sampler stop` ended took samples (the agent's: JFR may take none
        # in a phase of a mostly idle program, e.g. 0-4 a phase on wakers; and an interval
        # longer than a phase — `--interval 10s`, the switching alone — takes none); and there
        # were phases to compare
        unsampled = (args.profiler == "agent" and interval_s(args) < args.phase
                     and any(not s.get("samples") for s in stats[w]))
        # (the quick run's 12 s: on a busy machine each switch takes a second or more — at load
        # 9 on two cores, 8 s left no on-phase with an off-phase on both sides)
        need = 1 if args.quick else 2
        if n_on < need or len(stats[w]) < need or unsampled:
            print(f"FAIL: {w}: {n_on} on-phases compared, {len(stats[w])} on-phases ended by a switch-off, "
                  f"samples {[s.get('samples') for s in stats[w]]}")
            return 1
    if any(len(s) > 1 for s in sums.values()):
        print("checksums differ between runs: " + ", ".join(w for w, s in sums.items() if len(s) > 1))
        return 1
    return 0


def what(args):
    if args.profiler == "agent":
        return f"the agent at `interval={args.interval}{',' + args.opts if args.opts else ''}`"
    return "JFR with only " + ", ".join(f"`{e}` at {v}" for e, v in jfr_events(args))


def write(args, name, version, workloads, phases, stats, sums, floors):
    res = os.path.join(HERE, "results") if not args.quick else tempfile.gettempdir()
    os.makedirs(os.path.join(res, "raw"), exist_ok=True)
    with open(os.path.join(res, "raw", name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, ["workload", "run", "phase", "state", "t0", "t1", "rate", "cores"])
        w.writeheader()
        w.writerows(phases)
    lines = [f"# {name}", "",
             f"`bench/phases.py {' '.join(sys.argv[1:])}` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} CPUs, "
             f"{version}, JVM `{' '.join(suite.JVM)}`, {args.threads} worker threads, {what(args)} switched off and on every "
             f"{args.phase:g} s (±20%) for {args.seconds:g} s after {args.warmup:g} s of warm-up, {args.runs} JVMs "
             f"per workload, {args.guard:g} s after each switch left out"
             + (f", {args.busy} CPU-bound processes beside it (busy host)" if args.busy else "") + ".", "",
             "Cost: 1 − an on-phase's throughput / that of the off-phases either side of it, interpolated to "
             "its middle (mean over the on-phases with an off-phase on both sides, 95% CI). CPU: the process's "
             "CPU per second in the on-phase against the off-phases beside it. "
             "Samples per CPU-second: the samples of each on-phase ended by a switch-off / the process's CPU "
             "in it; the agent's sampler thread, and its own CPU (the sampler thread and the signal handler, "
             "`own_cpu_pct`: the kernel's delivery of its signals not included): from its stats (stats=) at each "
             "`sampler stop`; JFR's own CPU: its threads' (`JFR ...`: the sampler that walks the stacks, the "
             "recorder; /proc schedstat) over the process's.", "",
             "| workload | on-phases | ops/s off (median) | cost % (mean ± 95% CI) | cost % (median) | process CPU % more | samples per CPU-s | sampler thread, % of a core | the profiler's own CPU, % of the process's |",
             "|---|---|---|---|---|---|---|---|---|"]
    logs, owns = [], []
    for wl in workloads:
        ph = [p for p in phases if p["workload"] == wl]
        c = costs_by_run(ph)
        xs = [x["cost"] for x in c]
        m, ci = suite.mean_ci(xs)
        if len(c) >= 2:
            logs.append(log_stat(c))
        cpu = [x["cpu"] for x in c if x["cpu"] is not None]
        off = [p["rate"] for p in ph if p["state"] == "off"]
        st = stats[wl]
        sps = [s["samples"] / s["cpu_s"] for s in st if s.get("samples") is not None and s["cpu_s"] > 0]
        sth = [s["sampler_cpu_pct"] for s in st if "sampler_cpu_pct" in s]
        own = [s["own_cpu_pct"] for s in st if "own_cpu_pct" in s]
        if own:
            owns.append(statistics.median(own))
        lines.append(f"| {wl} | {len(xs)} | {statistics.median(off):.1f} | {m:+.2f} ± {ci:.2f} | "
                     f"{statistics.median(xs) if xs else float('nan'):+.2f} | "
                     f"{statistics.median(cpu) if cpu else float('nan'):+.2f} | "
                     f"{statistics.median(sps) if sps else float('nan'):.0f} | "
                     + (f"{statistics.median(sth):.2f} |" if sth else "— |")
                     + (f" {statistics.median(own):.2f} |" if own else " — |"))
    if len(logs) == len(workloads) and logs:
        lines += ["", geomean_line(logs)]
    if owns:
        lines += ["", f"The profiler's own CPU, mean over the {len(owns)} workloads of their medians: "
                      f"**{statistics.mean(owns):.2f}%** of the process's CPU "
                      f"({min(owns):.2f} to {max(owns):.2f})."]
    if floors:
        m, ci = suite.mean_ci(floors)
        lines += ["", f"The floor of the mechanism beside the runs (build/bench/sigcost: two busy threads, each "
                      f"signalled every 1 ms by a third, against none, 2 s each): {m:+.2f} ± {ci:.2f} % "
                      f"over {len(floors)} pairs."]
    bad = [w for w, s in sums.items() if len(s) > 1]
    lines += ["", "Checksums identical across runs: " + ("yes" if not bad else f"NO: {bad}")]
    path = os.path.join(res, name + ".md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwritten: {path}")


def costs_by_run(phases):
    out = []
    for run in sorted({p["run"] for p in phases}):
        out += costs([p for p in phases if p["run"] == run])
    return out


if __name__ == "__main__":
    sys.exit(main())
