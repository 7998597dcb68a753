#!/usr/bin/env python3
"""What a profiler adds to a JVM's start and exit: short programs timed whole, with and without it.

    bench/startup.py [--programs hello,javac] [--configs none,agent,nocstack,nocodemap,jfr10]
                     [--rounds 20] [--java java] [--build build] [--name NAME]
                     [--define NAME=OPTIONS] [--agent-of NAME=PATH] [--quick]

Programs: `hello` prints one line (the JVM's start and exit, nothing else); `javac` compiles that
one-line class with the JDK's compiler (class loading and JIT compilation: ~0.5 s). Each run is a
fresh JVM with the JVM's default flags; each round runs every program under every configuration,
the order rotated round by round. Per program and configuration: the median wall time and CPU
time (user + system of the whole process) with their quartiles, and the median of the
differences from `none` in the same round with a 95% bootstrap interval.

Configurations: none; agent: the agent with its defaults (10 ms, native frames, the compiled-code
map); nocstack: `cstack=no` (no unwind tables, no JVM threads); nocodemap: `cstack=no,codemap=off`
(no CompiledMethodLoad events: with them HotSpot records debug information at every pc of what
it compiles, not only at safepoints — what makes samples in compiled code exact); jfr10: JFR with
only jdk.ExecutionSample at 10 ms. --define and --agent-of as in bench/suite.py.

Writes bench/results/NAME.md and raw/NAME.csv. A run that does not leave its profile (the agent's
folded file, JFR's recording) or exits non-zero stops the harness.
"""
import argparse
import csv
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import suite  # noqa: E402  (profiler flags, the JFR settings file, child CPU)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

CONFIGS = {
    "none": None,
    "agent": "agent:",
    "nocstack": "agent:cstack=no",
    "nocodemap": "agent:cstack=no,codemap=off",
    "jfr10": "jfr:jdk.ExecutionSample:10 ms",
}
PROGRAMS = ["hello", "javac"]
HELLO = 'public class Hello { public static void main(String[] a) { System.out.println("hello"); } }\n'


def program_args(program, tmp):
    if program == "hello":
        return ["-cp", tmp, "Hello"]
    return ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", os.path.join(tmp, "out"),
            os.path.join(tmp, "Hello.java")]


def run_one(args, program, config, tmp):
    return run_timed(args, program_args(program, tmp), program, config, CONFIGS[config], tmp)[0]


# The JVM's own threads, by the start of their names (/proc/PID/task/TID/comm): HotSpot's service
# thread (it posts JVMTI's deferred events, CompiledMethodLoad among them) and the JIT compilers.
THREAD_GROUPS = (("service_ms", "Service Thread", "service thread ms"), ("c1_ms", "C1 CompilerThre", "C1 compilers ms"),
                 ("c2_ms", "C2 CompilerThre", "C2 compilers ms"))


def watch_threads(p, timeout):
    """Waits for process p, reading its threads' CPU (utime + stime) every 20 ms; returns
    {group: ms} of THREAD_GROUPS from each thread's last reading (a thread that ends between two
    readings loses at most 20 ms of its CPU). The readings cost the harness, not the JVM."""
    tick = 1000.0 / os.sysconf("SC_CLK_TCK")
    last, deadline = {}, time.time() + timeout
    while p.poll() is None and time.time() < deadline:
        for tid in os.listdir(f"/proc/{p.pid}/task") if os.path.isdir(f"/proc/{p.pid}/task") else ():
            try:
                with open(f"/proc/{p.pid}/task/{tid}/stat") as f:
                    comm, rest = f.read().split(" (", 1)[1].rsplit(") ", 1)
            except (OSError, IndexError, ValueError):
                continue
            fields = rest.split()
            last[tid] = (comm, (int(fields[11]) + int(fields[12])) * tick)
        time.sleep(0.02)
    return {key: sum(ms for comm, ms in last.values() if comm.startswith(prefix)) for key, prefix, _ in THREAD_GROUPS}


def run_timed(args, tail, program, config, spec, tmp, timeout=120, threads=False):
    """One fresh JVM, `java [the spec's flags] TAIL`, timed whole: its row (wall and CPU ms: user +
    system of the process, from the harness's children's rusage; with `threads`, the CPU of the
    JVM's THREAD_GROUPS too) and its stdout. A non-zero exit, or a profiler that left no profile
    (the agent's folded file, JFR's recording), stops the harness."""
    flags, event = suite.profiler_flags(args, spec, tmp)
    for f in ("p.folded", "r.jfr"):
        if os.path.exists(os.path.join(tmp, f)):
            os.unlink(os.path.join(tmp, f))
    c0, t0 = suite.child_cpu(), time.perf_counter()
    if threads:
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen([args.java, *flags, *tail], stdout=out, stderr=err, text=True)
            groups = watch_threads(proc, timeout)
            proc.wait(timeout=10)
            out.seek(0), err.seek(0)
            p = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    else:
        p = subprocess.run([args.java, *flags, *tail], capture_output=True, text=True, timeout=timeout)
    wall, cpu = time.perf_counter() - t0, suite.child_cpu() - c0
    if p.returncode != 0:
        sys.exit(f"{program} under {config}: java exited {p.returncode}:\n{p.stderr[-2000:]}")
    want = "r.jfr" if event else "p.folded" if spec and spec.startswith("agent") else None
    if want and not os.path.exists(os.path.join(tmp, want)):
        sys.exit(f"{program} under {config}: no {want} written\n{p.stderr[-2000:]}")
    row = {"program": program, "config": config, "wall_ms": round(wall * 1000, 2), "cpu_ms": round(cpu * 1000, 2)}
    if threads:
        row.update(groups)
    return row, p.stdout


def median_diff_ci(diffs, seed=1):
    """The median of paired differences and its 95% bootstrap interval."""
    rnd = random.Random(seed)
    boots = sorted(statistics.median(rnd.choices(diffs, k=len(diffs))) for _ in range(2000))
    return statistics.median(diffs), boots[49], boots[1949]


def quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def table(rows, programs, configs, percent=False, keys=(("wall_ms", "wall ms"), ("cpu_ms", "CPU ms"))):
    """Per program and configuration: for each of keys (wall and CPU time), median (quartiles), and
    the median of the differences from `none` of the same round with its 95% bootstrap interval —
    in ms, or with `percent` in % of that round's `none`."""
    added = "added to `none`, % (95% CI)" if percent else "added to `none` (95% CI)"
    out = ["| program | configuration | " + " | ".join(f"{title}: median (quartiles) | {added}" for _, title in keys)
           + " |", "|---|---|" + "---|---|" * len(keys)]
    for prog in programs:
        base = {r["round"]: r for r in rows if r["program"] == prog and r["config"] == "none"}
        for c in configs:
            mine = [r for r in rows if r["program"] == prog and r["config"] == c]
            cells = []
            for key, _ in keys:
                lo, med, hi = quartiles([r[key] for r in mine])
                cells.append(f"{med:.1f} ({lo:.1f}–{hi:.1f})")
                paired = [(r[key], base[r["round"]][key]) for r in mine if r["round"] in base]
                diffs = [100 * (x / b - 1) if percent else x - b for x, b in paired]
                if c == "none" or not diffs:
                    cells.append("")
                else:
                    d, dlo, dhi = median_diff_ci(diffs)
                    cells.append(f"**{d:+.1f}** ({dlo:+.1f} to {dhi:+.1f})")
            out.append(f"| {prog} | {c} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def add_common_args(ap, programs, configs, rounds):
    """The options startup.py and wholejvm.py share."""
    ap.add_argument("--programs", default=",".join(programs))
    ap.add_argument("--configs", default=",".join(configs))
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--java", default="java")
    ap.add_argument("--build", default=os.path.join(suite.ROOT, "build"))
    ap.add_argument("--name", default=None)
    ap.add_argument("--define", action="append", default=[], metavar="NAME=OPTIONS")
    ap.add_argument("--agent-of", action="append", default=[], metavar="NAME=PATH")


def settle(args, known_configs, known_programs, quick):
    """The parsed options checked (--quick's PROGRAMS, CONFIGS, ROUNDS in place of the given):
    the programs and configurations to run; stops on an unknown one or a missing agent."""
    args.agent = os.path.join(args.build, "agent", "libsampler.so")
    args.java_path = os.path.realpath(shutil.which(args.java) or args.java)
    suite.add_agent_configs(known_configs, args.define, args.agent_of)
    if args.quick:
        args.programs, args.configs, args.rounds = quick
    programs, configs = args.programs.split(","), args.configs.split(",")
    suite.check_choices(configs, known_configs, programs, known_programs, "program")
    if args.rounds < 1:
        sys.exit("--rounds must be at least 1")
    if not os.path.exists(args.agent):
        sys.exit(f"{args.agent} missing: build first (cmake -S . -B build && cmake --build build)")
    return programs, configs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, PROGRAMS, CONFIGS, 20)
    ap.add_argument("--quick", action="store_true", help="a smoke run (the test suite's): hello, none/agent/jfr10, 2 rounds")
    args = ap.parse_args()
    programs, configs = settle(args, CONFIGS, PROGRAMS, ("hello", "none,agent,jfr10", 2))
    version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    javac = os.path.join(os.path.dirname(args.java_path), "javac")
    rows, started = [], time.time()
    with tempfile.TemporaryDirectory(prefix="sampler-startup-") as tmp:
        with open(os.path.join(tmp, "Hello.java"), "w") as f:
            f.write(HELLO)
        subprocess.run([javac, "-d", tmp, os.path.join(tmp, "Hello.java")], check=True)
        for rnd in range(args.rounds):
            order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
            for prog in programs:
                for c in order:
                    row = run_one(args, prog, c, tmp)
                    row["round"] = rnd
                    rows.append(row)
            print(f"[{time.time() - started:5.0f} s] round {rnd + 1}/{args.rounds}", file=sys.stderr, flush=True)
    name = args.name or ("startup-quick" if args.quick else "startup")
    res = os.path.join(HERE, "results") if not args.quick else tempfile.gettempdir()
    os.makedirs(os.path.join(res, "raw"), exist_ok=True)
    with open(os.path.join(res, "raw", name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["program", "config", "round", "wall_ms", "cpu_ms"])
        w.writeheader()
        w.writerows(rows)
    text = (f"# Start-up: {name}\n\n{time.strftime('%Y-%m-%d')}, {version}, {os.cpu_count()} CPUs; "
            f"`{' '.join(['bench/startup.py'] + sys.argv[1:])}`; {args.rounds} rounds.\n\n"
            + table(rows, programs, configs) + "\n")
    with open(os.path.join(res, name + ".md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
