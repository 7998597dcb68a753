#!/usr/bin/env python3
"""The overhead suite: SPECjvm-style workloads under no profiler, this agent and JFR, side by side.

    bench/suite.py [--workloads all] [--configs none,s10,s1,jfr10,jfr1] [--java java]
                   [--seconds 5] [--warmup 2] [--min-rounds 3] [--max-rounds 10] [--ci 1.0]
                   [--busy N] [--name NAME] [--define NAME=OPTIONS] [--agent-of NAME=PATH]
                   [--quick]

Every run is a fresh JVM (bench/java/Workloads.java: warm-up, then a timed phase that reports
operations per second and a checksum of the work). Within a round each workload runs under every
configuration, the order rotated round by round, so drift on a shared machine hits all alike. A
configuration's overhead in a round is 1 - its throughput / the no-profiler throughput of the
same round and workload. Rounds go on until the 95% confidence interval of every overhead is
within +-CI points (after --min-rounds), or --max-rounds. Each round also measures the floor of
the mechanism: build/bench/sigcost's two busy threads signalled every 1 ms against none.

Configurations: none; s10, s1: the agent at 10 ms, 1 ms; s1-nonative: 1 ms, Java frames only;
s1-wall: 1 ms wall clock; jfr10, jfr1: JFR with only jdk.ExecutionSample at that period;
jfrcpu10, jfrcpu1: JFR's CPU-time sampler (jdk.CPUTimeSample, JEP 509; JDK 25 and later).
Other events: alloc, lock: the agent's event=alloc, event=lock at their defaults (alloc=512k,
lock=10us); cal: event=cpu,alloc,lock at 10 ms; jfralloc: JFR's jdk.ObjectAllocationSample at
default.jfc's throttle (150/s), jfralloc-max at its "Maximum" (10^9/s: every sample JFR takes);
jfrlock: jdk.JavaMonitorEnter and jdk.ThreadPark at default.jfc's threshold (20 ms),
jfrlock10us at ours; jfrcal: ExecutionSample at 10 ms and the defaults of the other three.
A JFR configuration enables only its events.
--define NAME=OPTIONS adds a configuration of the agent (NAME=jfr:EVENT:SETTING[+EVENT:SETTING]
one of JFR, e.g. jfralloc2k=jfr:jdk.ObjectAllocationSample:2000/s); --agent-of NAME=PATH runs
configuration NAME with another libsampler.so (a build of an older commit, to compare in one run).
--busy N: N CPU-bound processes run beside the JVM for the whole suite (a busy host).
Workloads: all is the CPU suite's eleven; contended (a shared monitor and a ReentrantLock) runs
when named.

Writes bench/results/NAME.md (tables, geometric means, the floor), NAME.svg (overhead per
workload and configuration, with confidence intervals) and raw/NAME.csv.
"""
import argparse
import csv
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import agent_stats  # noqa: E402  (the agent's stats=, read back)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
JVM = ["-Xms512m", "-Xmx512m", "-XX:+UseParallelGC"]
WORKLOADS = ["compress", "crypto", "scimark", "serial", "xml", "compiler", "raytrace", "audio",
             "txdb", "server", "wakers"]  # `all`: the CPU suite
KNOWN = WORKLOADS + ["contended"]  # and those run only when named
CONFIGS = {
    "none": None,
    "s10": "agent:interval=10ms",
    "s1": "agent:interval=1ms",
    "s1-nonative": "agent:interval=1ms,cstack=no",
    "s1-wall": "agent:interval=1ms,event=wall",
    "jfr10": "jfr:jdk.ExecutionSample:10 ms",
    "jfr1": "jfr:jdk.ExecutionSample:1 ms",
    "jfrcpu10": "jfr:jdk.CPUTimeSample:10ms",
    "jfrcpu1": "jfr:jdk.CPUTimeSample:1ms",
    # allocations, lock waits, all three events (event=, docs/how-it-works.md), and JFR's like
    "alloc": "agent:event=alloc",
    "lock": "agent:event=lock",
    "cal": "agent:interval=10ms,event=cpu,alloc,lock",
    "jfralloc": "jfr:jdk.ObjectAllocationSample:150/s",  # JDK 17's default.jfc throttle
    "jfralloc-max": "jfr:jdk.ObjectAllocationSample:1000000000/s",  # default.jfc's "Maximum"
    "jfrlock": "jfr:jdk.JavaMonitorEnter:20 ms+jdk.ThreadPark:20 ms",  # default.jfc's threshold
    "jfrlock10us": "jfr:jdk.JavaMonitorEnter:10 us+jdk.ThreadPark:10 us",  # our lock= default
    "jfrcal": "jfr:jdk.ExecutionSample:10 ms+jdk.ObjectAllocationSample:150/s+"
              "jdk.JavaMonitorEnter:20 ms+jdk.ThreadPark:20 ms",
}
# The setting a JFR configuration gives each event: how often it samples, or its threshold.
JFR_SETTING = {"jdk.ExecutionSample": "period", "jdk.CPUTimeSample": "throttle",
               "jdk.ObjectAllocationSample": "throttle", "jdk.JavaMonitorEnter": "threshold",
               "jdk.ThreadPark": "threshold"}
AGENT_EVENTS = ("cpu", "wall", "alloc", "lock")
# two-sided 95% t quantiles by degrees of freedom
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
       12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df):
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else float("inf")


def jfc(tmp, events):
    """A JFR settings file with only these events enabled: [(event, its JFR_SETTING's value)],
    each with its stack trace (as default.jfc has it), nothing else."""
    name = "+".join(f"{e}-{v}" for e, v in events).replace(" ", "").replace("/", "per")
    path = os.path.join(tmp, f"{name}.jfc")
    body = "".join(f'  <event name="{e}">\n    <setting name="enabled">true</setting>\n'
                   f'    <setting name="{JFR_SETTING[e]}">{v}</setting>\n'
                   + ('' if e == "jdk.ExecutionSample" else '    <setting name="stackTrace">true</setting>\n')
                   + '  </event>\n' for e, v in events)
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<configuration version="2.0" label="these events only">\n'
                + body + '</configuration>\n')
    return path


def jfr_events(spec):
    """The [(event, setting)] of a spec `jfr:EVENT:SETTING[+EVENT:SETTING...]`."""
    out = []
    for part in spec[4:].split("+"):
        event, _, setting = part.partition(":")
        if event not in JFR_SETTING or not setting:
            sys.exit(f"{spec}: want jfr:EVENT:SETTING[+...], EVENT one of {', '.join(JFR_SETTING)}")
        out.append((event, setting))
    return out


def agent_events(opts):
    """The events an agent configuration's options name (event=cpu,alloc,...; cpu when none)."""
    m = re.search(r"(?:^|,)event=([a-z]+(?:,[a-z]+)*)", opts)
    if not m:
        return ["cpu"]
    return [e for e in m.group(1).split(",") if e in AGENT_EVENTS]


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def jfr_samples(args, path, events):
    """{event: its count} in a recording (the jdk's `jfr summary`), for each of events; None
    without a recording or the tool."""
    tool = os.path.join(os.path.dirname(args.java_path), "jfr")
    if not os.path.exists(path) or not os.path.exists(tool):
        return None
    out = subprocess.run([tool, "summary", path], capture_output=True, text=True).stdout
    counts = {}
    for event in events:
        m = re.search(rf"^\s*{re.escape(event)}\s+(\d+)", out, re.M)
        counts[event] = int(m.group(1)) if m else 0
    return counts


def profiler_flags(args, spec, tmp):
    """The JVM flags of a configuration's spec (CONFIGS), and its JFR events (a list, empty for
    none); the agent writes tmp/p.folded (several events: tmp/p-EVENT.folded) and its stats
    tmp/p.json, JFR tmp/r.jfr; `jvm:FLAGS` is no profiler, only those JVM flags."""
    if spec and spec.startswith("agent"):  # agent:OPTIONS or agent@PATH:OPTIONS
        where, _, opts = spec.partition(":")
        agent = where[6:] or args.agent
        stats = agent_stats.option(agent, f"{tmp}/p.json", args.java)
        out = "p-%e.folded" if len(agent_events(opts)) > 1 else "p.folded"
        return [f"-agentpath:{agent}={opts + ',' if opts else ''}file={tmp}/{out}{stats}"], []
    if spec and spec.startswith("jvm:"):  # jvm:FLAGS: no profiler, these JVM flags
        return spec[4:].split(), []
    if spec and spec.startswith("jfr:"):
        events = jfr_events(spec)
        return ([f"-XX:StartFlightRecording=settings={jfc(tmp, events)},filename={tmp}/r.jfr"],
                [e for e, _ in events])
    return [], []


def add_agent_configs(table, defines, agent_of):
    """--define NAME=OPTIONS: one more configuration of the agent (or of JFR: NAME=jfr:EVENT:SETTING,
    as in CONFIGS); --agent-of NAME=PATH: NAME with another libsampler.so (a build of an older
    commit, to compare in one run)."""
    for d in defines:
        name, _, opts = d.partition("=")
        table[name] = opts if opts.startswith("jfr:") else "agent:" + opts
        if opts.startswith("jfr:"):
            jfr_events(opts)  # stops on a malformed one now, not at its first run
    for a in agent_of:
        name, _, path = a.partition("=")
        if name not in table or not os.path.exists(path):
            sys.exit(f"--agent-of {name}: no such config, or {path} missing")
        table[name] = table[name].replace("agent:", f"agent@{path}:", 1)


def check_choices(configs, known_configs, items, known_items, kind):
    """Stops on a configuration or an item (workload, program) not known, or a first
    configuration that is not the baseline."""
    for c in configs:
        if c not in known_configs:
            sys.exit(f"unknown config {c} (known: {', '.join(known_configs)})")
    for w in items:
        if w not in known_items:
            sys.exit(f"unknown {kind} {w} (known: {', '.join(known_items)})")
    if configs[0] != "none":
        sys.exit("the first config must be none (the baseline)")


def run_one(args, workload, config, tmp):
    flags, events = profiler_flags(args, CONFIGS[config], tmp)
    cmd = [args.java, *JVM, *flags]
    cmd += ["-cp", args.classes, "Workloads", workload, "--threads", str(args.threads),
            "--warmup", str(args.warmup), "--seconds", str(args.seconds)]
    for f in os.listdir(tmp):
        if f.endswith((".folded", ".jfr")):
            os.unlink(os.path.join(tmp, f))
    c0, w0 = child_cpu(), time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    cpu, wall = child_cpu() - c0, time.monotonic() - w0
    if p.returncode != 0:
        sys.exit(f"{workload} under {config}: java exited {p.returncode}:\n{p.stderr[-2000:]}")
    row = {"workload": workload, "config": config, "proc_cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    for tok in p.stdout.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            row[k] = v
    for k, v in agent_stats.last(p.stderr).items():
        row["s_" + k] = v
    counts = None
    if "s_captures" in row:  # the agent's events: its stats' counts of what it recorded
        spec = CONFIGS[config]
        names = agent_events(spec.partition(":")[2])
        key = {"cpu": "s_captures", "wall": "s_captures", "alloc": "s_alloc_samples", "lock": "s_lock_samples"}
        counts = {e: int(row.get(key[e], 0)) for e in names}
    elif events:
        counts = jfr_samples(args, os.path.join(tmp, "r.jfr"), events)
    if counts is not None:
        for e, n in counts.items():
            row["events_" + e] = n
        row["samples_taken"] = sum(counts.values())
    return row


def sigcost_floor(args):
    """One interleaved pair of build/bench/sigcost runs: the loss (%) of two busy threads
    signalled every 1 ms, against none."""
    if not os.path.exists(args.sigcost):
        return None
    got = {}
    for mode in ("none", "signal"):
        out = subprocess.run([args.sigcost, mode, str(args.seconds)], capture_output=True, text=True,
                             check=True).stdout.split()
        got[mode] = int(out[1])
    return 100 * (1 - got["signal"] / got["none"])


def overheads(rows, workload, config):
    base = {r["round"]: float(r["ops_per_s"]) for r in rows if r["workload"] == workload and r["config"] == "none"}
    return [100 * (1 - float(r["ops_per_s"]) / base[r["round"]]) for r in rows
            if r["workload"] == workload and r["config"] == config and r["round"] in base]


def mean_ci(xs):
    if len(xs) < 2:
        return (xs[0] if xs else float("nan")), float("inf")
    return statistics.mean(xs), t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))


def geomean_overheads(rows, workloads, config):
    """Per round, the geometric mean over the workloads of throughput / no-profiler throughput,
    as an overhead in %."""
    out = []
    for rnd in sorted({r["round"] for r in rows}):
        ratios = []
        for w in workloads:
            ops = {r["config"]: float(r["ops_per_s"]) for r in rows if r["workload"] == w and r["round"] == rnd}
            if config in ops and "none" in ops and ops["none"] > 0:
                ratios.append(ops[config] / ops["none"])
        if len(ratios) == len(workloads):
            out.append(100 * (1 - math.exp(sum(math.log(x) for x in ratios) / len(ratios))))
    return out


def svg_plot(path, workloads, configs, rows, title):
    """Grouped bars: overhead (%) per workload and configuration, 95% CI whiskers."""
    cols = workloads + ["geomean"]
    data = {}
    for w in cols:
        for c in configs:
            xs = geomean_overheads(rows, workloads, c) if w == "geomean" else overheads(rows, w, c)
            data[(w, c)] = mean_ci(xs) if xs else (0.0, 0.0)
    vals = [m + (ci if math.isfinite(ci) else 0) for m, ci in data.values()] + [1.0]
    lows = [m - (ci if math.isfinite(ci) else 0) for m, ci in data.values()] + [0.0]
    top, bottom = max(vals) * 1.1, min(min(lows) * 1.1, 0)
    width, height, left, plot_h = 80 * len(cols) + 160, 420, 60, 320
    colors = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"]
    y = lambda v: 30 + (top - v) / (top - bottom) * plot_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{title}</text>',
           f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - 100}" y2="{y(0):.1f}" stroke="#333"/>']
    step = max(1, math.ceil((top - bottom) / 8))
    v = math.floor(bottom)
    while v <= top:
        out.append(f'<line x1="{left - 4}" y1="{y(v):.1f}" x2="{width - 100}" y2="{y(v):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}%</text>')
        v += step
    bw = 64 / len(configs)
    for i, w in enumerate(cols):
        x0 = left + 10 + 80 * i
        out.append(f'<text x="{x0 + 32}" y="{y(bottom) + 16:.1f}" text-anchor="middle">{w}</text>')
        for j, c in enumerate(configs):
            m, ci = data[(w, c)]
            x = x0 + j * bw
            y1, y2 = sorted((y(0), y(m)))
            out.append(f'<rect x="{x:.1f}" y="{y1:.1f}" width="{bw - 1:.1f}" height="{max(0.5, y2 - y1):.1f}" '
                       f'fill="{colors[j % len(colors)]}"><title>{w} {c}: {m:+.2f}% +-{ci:.2f}</title></rect>')
            if math.isfinite(ci) and ci > 0:
                cx = x + (bw - 1) / 2
                out.append(f'<line x1="{cx:.1f}" y1="{y(m + ci):.1f}" x2="{cx:.1f}" y2="{y(m - ci):.1f}" stroke="#222"/>')
    for j, c in enumerate(configs):
        out.append(f'<rect x="{width - 90}" y="{40 + 16 * j}" width="10" height="10" fill="{colors[j % len(colors)]}"/>'
                   f'<text x="{width - 76}" y="{49 + 16 * j}">{c}</text>')
    out.append(f'<text x="14" y="{30 + plot_h / 2}" transform="rotate(-90 14 {30 + plot_h / 2})" text-anchor="middle">'
               f'throughput lost vs no profiler (%)</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=None, help="all (the default: the CPU suite) or a list")
    ap.add_argument("--configs", default=None, help="a list, none first (default none,s10,s1,jfr10,jfr1)")
    ap.add_argument("--java", default="java")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--min-rounds", type=int, default=3)
    ap.add_argument("--max-rounds", type=int, default=10)
    ap.add_argument("--ci", type=float, default=1.0, help="stop when every 95%% CI is within +-CI points")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside the JVM")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--name", default=None)
    ap.add_argument("--define", action="append", default=[], metavar="NAME=OPTIONS",
                    help="one more config: the agent's options (e.g. s1-cpu=interval=1ms,hasrun=cpu)")
    ap.add_argument("--agent-of", action="append", default=[], metavar="NAME=PATH",
                    help="another libsampler.so for config NAME (e.g. a build of an older commit)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run (the test suite's): one short round; unless named, compress and "
                         "server under none/s10/jfr10")
    args = ap.parse_args()
    args.agent = os.path.join(args.build, "agent", "libsampler.so")
    add_agent_configs(CONFIGS, args.define, args.agent_of)
    args.classes = os.path.join(args.build, "bench", "classes")
    args.sigcost = os.path.join(args.build, "bench", "sigcost")
    args.java_path = os.path.realpath(shutil.which(args.java) or args.java)
    if args.quick:
        args.workloads = args.workloads or "compress,server"
        args.configs = args.configs or "none,s10,jfr10"
        args.seconds, args.warmup, args.min_rounds, args.max_rounds = 1, 0.5, 1, 1
    args.workloads = args.workloads or "all"
    args.configs = args.configs or "none,s10,s1,jfr10,jfr1"
    workloads = WORKLOADS if args.workloads == "all" else args.workloads.split(",")
    configs = args.configs.split(",")
    check_choices(configs, CONFIGS, workloads, KNOWN, "workload")
    for p in (args.agent, os.path.join(args.classes, "Workloads.class")):
        if not os.path.exists(p):
            sys.exit(f"{p} missing: build first (cmake -S . -B build && cmake --build build)")
    version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    name = args.name or ("suite-quick" if args.quick else "suite")
    busy = children.hogs(args.busy)
    rows, floors = [], []
    started = time.time()
    try:
        with tempfile.TemporaryDirectory(prefix="sampler-suite-") as tmp:
            rnd = 0
            while rnd < args.max_rounds:
                for w in workloads:
                    order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
                    for c in order:
                        row = run_one(args, w, c, tmp)
                        row["round"] = rnd
                        rows.append(row)
                        print(f"[{time.time() - started:6.0f} s] round {rnd + 1} {w:9s} {c:11s} "
                              f"ops/s {float(row['ops_per_s']):10.1f} cpu {row['proc_cpu_s']:6.2f} s"
                              + (f" samples {row['samples_taken']}" if row.get("samples_taken") is not None else ""),
                              file=sys.stderr, flush=True)
                f = sigcost_floor(args)
                if f is not None:
                    floors.append(f)
                rnd += 1
                widths = [mean_ci(overheads(rows, w, c))[1] for w in workloads for c in configs[1:]]
                worst = max(widths) if widths else 0
                print(f"round {rnd}: widest 95% CI +-{worst:.2f} points (target +-{args.ci:g})", file=sys.stderr, flush=True)
                if rnd >= args.min_rounds and worst <= args.ci:
                    break
    finally:
        for b in busy:
            b.kill()
    write(args, name, version, workloads, configs, rows, floors, rnd)


def events_cell(rs):
    """What the runs rs recorded per event (medians): "alloc 4812", "lock 310 of 9020 waits",
    "ThreadPark 12 + JavaMonitorEnter 3"; "—" for none."""
    keys = sorted({k for r in rs for k in r if k.startswith("events_")})
    parts = []
    for k in keys:
        n = statistics.median(int(r.get(k, 0)) for r in rs)
        part = f"{k[7:].replace('jdk.', '')} {n:.0f}"
        if k == "events_lock" and any("s_lock_waits" in r for r in rs):
            part += f" of {statistics.median(int(r.get('s_lock_waits', 0)) for r in rs):.0f} waits"
        parts.append(part)
    return " + ".join(parts) if parts else "—"


def write(args, name, version, workloads, configs, rows, floors, rounds):
    res = os.path.join(HERE, "results") if not args.quick else tempfile.gettempdir()
    os.makedirs(os.path.join(res, "raw"), exist_ok=True)
    with open(os.path.join(res, "raw", name + ".csv"), "w", newline="") as f:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    lines = [f"# {name}", "",
             f"`bench/suite.py {' '.join(sys.argv[1:])}` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} CPUs, "
             f"{version}, JVM `{' '.join(JVM)}`, {args.threads} worker threads, {args.warmup:g} s warm-up + "
             f"{args.seconds:g} s measured per run, {rounds} interleaved rounds"
             + (f", {args.busy} CPU-bound processes beside it (busy host)" if args.busy else "") + ".", "",
             "Overhead: throughput lost against no profiler in the same round (mean, 95% CI). Samples per "
             "CPU-second: stacks taken / the process's CPU time. Cost, own CPU (the sampler thread's and the "
             "handler's, as a share of the process's: `own_cpu_pct`) and coverage: from the agent's stats (stats=). "
             "Events per run: what each run recorded, per event (the agent's stats: captures, alloc_samples, "
             "lock_samples of lock_waits seen; JFR's: `jfr summary`), and per second of the JVM's life (start to "
             "exit, warm-up included). Allocated MB/s: all threads' allocations in the timed phase "
             "(ThreadMXBean's per-thread counters).", "",
             "| workload | config | ops/s (median) | overhead % (mean ± 95% CI) | process CPU s | samples per CPU-s | capture µs (median) | own CPU % | coverage % | allocated MB/s | events per run (median) | events/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    bad_checksums = []
    for w in workloads:
        sums = {r["checksum"] for r in rows if r["workload"] == w}
        if len(sums) > 1:
            bad_checksums.append(w)
        for c in configs:
            rs = [r for r in rows if r["workload"] == w and r["config"] == c]
            ops = statistics.median(float(r["ops_per_s"]) for r in rs)
            cpu = statistics.median(r["proc_cpu_s"] for r in rs)
            m, ci = mean_ci(overheads(rows, w, c))
            over = "—" if c == "none" else f"{m:+.2f} ± {ci:.2f}"
            sps = [r["samples_taken"] / r["proc_cpu_s"] for r in rs if r.get("samples_taken") and r["proc_cpu_s"] > 0]
            cost = [float(r["s_cost_median_us"]) for r in rs if "s_cost_median_us" in r]
            cov = [float(r["s_coverage"]) for r in rs if "s_coverage" in r]
            own = [float(r["s_own_cpu_pct"]) for r in rs if r.get("s_own_cpu_pct")]
            mbs = [float(r["alloc_mb_per_s"]) for r in rs if "alloc_mb_per_s" in r]
            eps = [r["samples_taken"] / r["wall_s"] for r in rs if r.get("samples_taken") is not None and r["wall_s"] > 0]
            cells = [w, c, f"{ops:.1f}", over, f"{cpu:.2f}",
                     f"{statistics.median(sps):.0f}" if sps else "—",
                     f"{statistics.median(cost):.1f}" if cost else "—",
                     f"{statistics.median(own):.2f}" if own else "—",
                     f"{statistics.median(cov):.1f}" if cov else "—",
                     f"{statistics.median(mbs):.0f}" if mbs else "—", events_cell(rs),
                     f"{statistics.median(eps):.0f}" if eps else "—"]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| geometric mean | overhead % (mean ± 95% CI over rounds) |", "|---|---|"]
    for c in configs[1:]:
        m, ci = mean_ci(geomean_overheads(rows, workloads, c))
        lines.append(f"| {c} ({CONFIGS[c]}) | {m:+.2f} ± {ci:.2f} |")
    if floors:
        m, ci = mean_ci(floors)
        lines += ["", f"The floor of the mechanism in the same run (build/bench/sigcost: two busy threads, each "
                      f"signalled every 1 ms by a third, against none): {m:+.2f} ± {ci:.2f} % over {len(floors)} rounds."]
    lines += ["", "Checksums identical across configurations: " + ("yes" if not bad_checksums else f"NO: {bad_checksums}")]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(res, name + ".md"), "w") as f:
        f.write(text)
    svg_plot(os.path.join(res, name + ".svg"), workloads, configs[1:], rows,
             f"{name}: overhead per workload (95% CI){' — busy host' if args.busy else ''}")
    print(text)
    print(f"written: {os.path.join(res, name + '.md')}, {name}.svg, raw/{name}.csv")
    if args.quick:  # the test suite's run: the outputs are whole
        import xml.etree.ElementTree as ET
        bars = ET.parse(os.path.join(res, name + ".svg")).getroot().findall("{http://www.w3.org/2000/svg}rect")
        want = (len(workloads) + 1) * (len(configs) - 1)
        if len(bars) < want:
            sys.exit(f"the plot has {len(bars)} bars, want {want} and a legend")
        table = [l for l in lines if l.startswith("| ") and l.split(" | ")[0][2:] in workloads]
        if len(table) != len(workloads) * len(configs):
            sys.exit(f"the table has {len(table)} rows, want {len(workloads) * len(configs)}")
        if any(not r.get("samples_taken") for r in rows if r["config"] != "none"):
            sys.exit("a profiled run without samples")
        empty = [(r["config"], k[7:]) for r in rows for k in r
                 if k in ("events_cpu", "events_wall", "events_alloc", "events_lock") and not r[k]]
        if empty:
            sys.exit(f"an event of the agent recorded nothing (config, event): {empty}")
    if bad_checksums:
        sys.exit(f"checksums differ across configurations: {bad_checksums}")


if __name__ == "__main__":
    main()
