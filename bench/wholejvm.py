#!/usr/bin/env python3
"""What a profiler costs JIT-heavy short programs that nobody here wrote, timed whole.

    bench/wholejvm.py [--programs rhino,javac] [--configs none,idle,s10,s1,nocodemap,dns,jfr10,jfr1]
                      [--rounds 5] [--busy N] [--java java] [--build build] [--name NAME]
                      [--define NAME=OPTIONS] [--agent-of NAME=PATH] [--rhino-jar PATH] [--threads]
                      [--quick]

Programs (each checks its own result; a wrong one stops the harness):
- `rhino`: Debian's Rhino (`-opt 9`: JavaScript compiled to JVM bytecode) runs bench/js/compile.js,
  which generates 400 functions, has Rhino compile each into a class of its own, runs each over
  200 inputs and checks every result ("ok 400 CHECKSUM"; the checksum must be the same in every run).
- `javac`: the JDK's compiler, in process, over the repository's Java sources
  (tests/integration/java, bench/java) three times in one JVM (javax.tools; each compilation must
  succeed and write every class).

Configurations: none; idle: the agent loaded, not sampling (`interval=10s`, the largest the agent
takes; it cannot be loaded stopped from the command line — the launcher attaches to a running
JVM); s10, s1: the agent at 10 ms, 1 ms; nocodemap: 10 ms with `codemap=off` (no
CompiledMethodLoad / DynamicCodeGenerated events); dns: no agent, but
`-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints` (the debug information at every pc that
the code map's events make HotSpot record: its cost apart from the events' posting); jfr10, jfr1:
JFR with only jdk.ExecutionSample at 10 ms, 1 ms (as bench/suite.py configures it). --define and
--agent-of as in bench/suite.py.

Method as bench/startup.py's (its run and table code): every run a fresh JVM with default flags;
each round runs every program under every configuration, the order rotated round by round; the
whole process's CPU time (user + system) and wall time, medians with quartiles, and the median of
each configuration's difference from `none` of the same round in %, with a 95% bootstrap
interval. --busy N: N CPU hogs (a busy loop each) run beside every run, started before the first
and killed after the last, or at any exit (bench/children.py). The results file states the load
average before and after, and --busy. --threads: also the CPU of the JVM's service thread (which
posts JVMTI's deferred events: CompiledMethodLoad) and JIT compiler threads, read from
/proc/PID/task every 20 ms, in ms with the same paired differences — the mechanism under the
totals, and far less noisy than them on a busy host.

Writes bench/results/NAME.md and raw/NAME.csv (--quick: in the temp directory), then reads both
back and stops unless every program × configuration × round is in the CSV and in the table.
--quick (in ctest as bench_wholejvm_quick): rhino with 40 functions, none and s10, 2 rounds.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import suite  # noqa: E402  (profiler flags, the JFR settings, configuration checks)
import startup  # noqa: E402  (a timed whole run, the table)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

DNS = "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
CONFIGS = {
    "none": None,
    "idle": "agent:interval=10s",
    "s10": "agent:interval=10ms",
    "s1": "agent:interval=1ms",
    "nocodemap": "agent:interval=10ms,codemap=off",
    "dns": "jvm:" + DNS,
    "jfr10": suite.CONFIGS["jfr10"],
    "jfr1": suite.CONFIGS["jfr1"],
}
PROGRAMS = ["rhino", "javac"]
RHINO_FUNCTIONS, RHINO_QUICK, JAVAC_TIMES = 400, 40, 3
JAVAC_SOURCES = [os.path.join(suite.ROOT, "tests", "integration", "java"), os.path.join(HERE, "java")]
# The javac program's driver: javax.tools' compiler run TIMES times in this JVM, each into a fresh
# directory; exits 1 unless each succeeds and writes every class that the first one wrote.
JAVAC_DRIVER = """import java.io.File;
import java.util.*;
public class CompileTimes {
    public static void main(String[] a) throws Exception {
        int times = Integer.parseInt(a[0]);
        javax.tools.JavaCompiler c = javax.tools.ToolProvider.getSystemJavaCompiler();
        Set<String> first = null;
        for (int i = 0; i < times; i++) {
            File out = new File(a[1], "out" + i);
            List<String> args = new ArrayList<>(List.of("-nowarn", "-d", out.getPath()));
            args.addAll(Arrays.asList(a).subList(2, a.length));
            int rc = c.run(null, null, null, args.toArray(new String[0]));
            Set<String> got = new TreeSet<>(Arrays.asList(out.list()));
            if (rc != 0 || got.isEmpty() || (first != null && !got.equals(first))) {
                System.out.println("compilation " + i + ": rc " + rc + ", " + got);
                System.exit(1);
            }
            first = got;
        }
        System.out.println("ok " + times + " " + first.size());
    }
}
"""


def program_run(args, program, tmp):
    """A program's command after `java [flags]`, and the pattern its stdout must match."""
    if program == "rhino":
        n = RHINO_QUICK if args.quick else RHINO_FUNCTIONS
        return (["-cp", args.rhino_jar, "org.mozilla.javascript.tools.shell.Main", "-opt", "9",
                 os.path.join(HERE, "js", "compile.js"), str(n)], rf"^ok {n} \d+$")
    out = os.path.join(tmp, "javac")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return (["-cp", tmp, "CompileTimes", str(JAVAC_TIMES), out, *args.javac_sources],
            rf"^ok {JAVAC_TIMES} \d+$")


def run_checked(args, program, config, tmp, seen):
    tail, pattern = program_run(args, program, tmp)
    row, out = startup.run_timed(args, tail, program, config, CONFIGS[config], tmp, timeout=300,
                                 threads=args.threads)
    out = (out.strip().splitlines() or [""])[-1]  # the program's last line (JFR says it started before it)
    if not re.match(pattern, out) or seen.setdefault(program, out) != out:
        sys.exit(f"{program} under {config}: printed {out[-500:]!r}, wanted {pattern}"
                 + (f" as every run before: {seen[program]!r}" if program in seen else ""))
    return row


def check_written(csv_path, md_path, programs, configs, rounds):
    """Stops unless the CSV holds one row per program, configuration and round, and the table one
    line per program and configuration with its numbers (the overhead cells but `none`'s)."""
    with open(csv_path) as f:
        got = {(r["program"], r["config"], int(r["round"])) for r in csv.DictReader(f)
               if r["wall_ms"] and r["cpu_ms"]}
    missing = [(p, c, r) for p in programs for c in configs for r in range(rounds) if (p, c, r) not in got]
    with open(md_path) as f:
        text = f.read()
    for p in programs:
        for c in configs:
            line = re.search(rf"^\| {p} \| {c} \|(.*)\|$", text, re.M)
            cells = [x.strip() for x in line.group(1).split("|")] if line else []
            if len(cells) != 4 or not all(cells[i] for i in range(4) if i in (0, 2) or c != "none"):
                missing.append((p, c, "table"))
    if missing:
        sys.exit(f"{md_path} / {csv_path} incomplete: {missing[:10]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    startup.add_common_args(ap, PROGRAMS, CONFIGS, 5)
    ap.add_argument("--busy", type=int, default=0, help="CPU hogs beside every run (a busy host)")
    ap.add_argument("--rhino-jar", default="/usr/share/java/js.jar", help="Debian's rhino package's")
    ap.add_argument("--quick", action="store_true", help="a smoke run (ctest's): rhino, none and s10, 2 rounds")
    ap.add_argument("--threads", action="store_true",
                    help="also the CPU of the JVM's service thread and JIT compilers (read every 20 ms)")
    args = ap.parse_args()
    programs, configs = startup.settle(args, CONFIGS, PROGRAMS, ("rhino", "none,s10", 2))
    if args.busy < 0:
        sys.exit("--busy must be at least 0")
    if "rhino" in programs and not os.path.exists(args.rhino_jar):
        sys.exit(f"--rhino-jar {args.rhino_jar} missing: install Debian's rhino (scripts/deps.sh test)")
    args.javac_sources = sorted(os.path.join(d, f) for d in JAVAC_SOURCES for f in os.listdir(d)
                                if f.endswith(".java"))
    version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    javac = os.path.join(os.path.dirname(args.java_path), "javac")
    rows, seen, started, load0 = [], {}, time.time(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sampler-wholejvm-") as tmp:
        with open(os.path.join(tmp, "CompileTimes.java"), "w") as f:
            f.write(JAVAC_DRIVER)
        subprocess.run([javac, "-d", tmp, os.path.join(tmp, "CompileTimes.java")], check=True)
        busy = children.hogs(args.busy)
        try:
            for rnd in range(args.rounds):
                order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
                for prog in programs:
                    for c in order:
                        row = run_checked(args, prog, c, tmp, seen)
                        row["round"] = rnd
                        rows.append(row)
                print(f"[{time.time() - started:5.0f} s] round {rnd + 1}/{args.rounds}", file=sys.stderr, flush=True)
        finally:
            for b in busy:
                b.kill()
    load1 = os.getloadavg()
    name = args.name or ("wholejvm-quick" if args.quick else "wholejvm" + (f"-busy{args.busy}" if args.busy else ""))
    res = os.path.join(HERE, "results") if not args.quick else tempfile.gettempdir()
    os.makedirs(os.path.join(res, "raw"), exist_ok=True)
    csv_path, md_path = os.path.join(res, "raw", name + ".csv"), os.path.join(res, name + ".md")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["program", "config", "round", "wall_ms", "cpu_ms"]
                           + ([k for k, _, _ in startup.THREAD_GROUPS] if args.threads else []))
        w.writeheader()
        w.writerows(rows)
    load = "load average (1, 5, 15 min) {:.2f} {:.2f} {:.2f} before, {:.2f} {:.2f} {:.2f} after"
    text = (f"# Whole JVM: {name}\n\n{time.strftime('%Y-%m-%d')}, {version}, {os.cpu_count()} CPUs; "
            f"`{' '.join(['bench/wholejvm.py'] + sys.argv[1:])}`; {args.rounds} rounds; "
            + (f"{args.busy} CPU hogs beside every run (busy host); " if args.busy else "no CPU hogs; ")
            + load.format(*load0, *load1) + ".\n\n"
            + startup.table(rows, programs, configs, percent=True) + "\n"
            + ("\nThe JVM's own threads' CPU (/proc/PID/task, read every 20 ms):\n\n"
               + startup.table(rows, programs, configs, keys=[(k, t) for k, _, t in startup.THREAD_GROUPS]) + "\n"
               if args.threads else ""))
    with open(md_path, "w") as f:
        f.write(text)
    check_written(csv_path, md_path, programs, configs, args.rounds)
    print(text)


if __name__ == "__main__":
    main()
