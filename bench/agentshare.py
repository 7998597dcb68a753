#!/usr/bin/env python3
"""The agent's own share of a JVM's CPU, counted in perf's samples of the whole process.

    bench/agentshare.py [--runs 3] [--freq 2999] [--top 8] [--jvmti] -- java -agentpath:...=... Main ...
    bench/agentshare.py --profiler jfr [...] -- java -XX:StartFlightRecording=... Main ...

Runs the command RUNS times under `perf record -e cpu-clock --call-graph dwarf` (software
events: this VM has no hardware counters) and counts, of each run's samples, those on the agent's
sampler thread and those whose stack holds a frame of libsampler.so (its JVMTI callbacks, with
the JVM's work they call: GetClassMethods, GetStackTrace ...). Reports per run the share, and
the outermost agent function of those samples, the commonest first. Apart from those, it counts
the samples in the kernel's delivery of a signal and return from its handler (any signal's: the
JVM's own use signals too, so run the command without the agent for the baseline). Where
whole-process CPU
totals scatter by several percent between runs (a JIT-heavy program's compilations), this
measures what the agent itself does, to a few hundredths of a percent. What it cannot see: work
the JVM does differently because the agent is loaded without an agent frame on the stack (events
it posts, debug information its compilers record) — measure that with bench/wholejvm.py;
`--jvmti` counts the posting of its events around its callbacks (the JVM's handles and state
transitions for each allocation sample, say) as the agent's too.

`--profiler jfr` counts JFR's share the same way, for the comparison at one rate: its threads
("JFR Recorder Thread", ...) and the JVM's `Jfr*` functions on any thread (JFR walks an
allocation's or a park's stack in the thread that allocates or parks).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import children  # noqa: E402  (every process started ends with the harness)
children.install()

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
# The kernel's side of a signal on the thread that takes it: delivery on the way back to user
# mode (the frame written on the stack) and rt_sigreturn after the handler.
SIGNAL_KERNEL = {"arch_do_signal_or_restart", "get_signal", "x64_setup_rt_frame",
                 "__x64_sys_rt_sigreturn", "restore_sigcontext"}


# JVMTI's posting of an event to the agent, around the agent's callback (--jvmti): work the JVM
# does only because the agent enabled the event (handles, state transitions, the collectors).
JVMTI_POSTING = re.compile(r"^(JvmtiExport::post_|Jvmti\w*EventCollector::|JvmtiJavaThreadEventTransition)")


def party(comm, frames, who, jvmti):
    """(kind, outermost function) when this sample is the measured profiler's, else None:
    the agent's (its sampler thread, a frame of libsampler.so, with jvmti JVMTI's posting
    around it) or JFR's (its threads, named "JFR ...", and the JVM's Jfr* functions on any
    thread: the stack walks and the events' writing in the allocating or waiting thread)."""
    syms = [sym.split("+")[0] for _, sym in frames]
    if who == "jfr":
        mine = [s for s in syms if s.startswith("Jfr")]
        if comm.startswith("JFR") or mine:
            return ("JFR thread: " if comm.startswith("JFR") else "Java thread: ",
                    mine[-1] if mine else syms[0] if syms else "?")
        return None
    mine = [sym for dso, sym in frames if "libsampler" in os.path.basename(dso)]
    if comm == "sampler" or mine:
        return ("sampler thread: " if comm == "sampler" else "callback: ",
                mine[-1] if mine else syms[0] if syms else "?")
    posting = [s for s in syms if jvmti and JVMTI_POSTING.match(s)]
    if posting:
        return ("JVMTI posting: ", posting[-1])
    return None


def count(script_out, top, who="agent", jvmti=False):
    """(samples, the profiler's, in signal delivery, Counter of its outermost function) from
    `perf script` text."""
    total = ours = signals = 0
    where = collections.Counter()
    comm, frames = None, []

    def flush():
        nonlocal total, ours, signals
        if comm is None:
            return
        total += 1
        if any("kernel" in dso and sym.split("+")[0] in SIGNAL_KERNEL for dso, sym in frames):
            signals += 1
        p = party(comm, frames, who, jvmti)
        if p:
            ours += 1
            where[p[0] + p[1]] += 1

    for line in script_out.splitlines():
        if not line.strip():
            flush()
            comm, frames = None, []
        elif not line[0].isspace():
            comm = line.split()[0]
        else:
            m = FRAME.match(line)
            if m:
                frames.append((m.group(2), m.group(1)))
    flush()
    return total, ours, signals, where


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--freq", type=int, default=2999, help="perf's sampling frequency (Hz)")
    ap.add_argument("--top", type=int, default=8, help="agent functions listed per run")
    ap.add_argument("--profiler", choices=["agent", "jfr"], default="agent",
                    help="whose share: the agent's, or JFR's (its threads and Jfr* functions) for a "
                         "run with -XX:StartFlightRecording")
    ap.add_argument("--jvmti", action="store_true",
                    help="with the agent: JVMTI's posting of its events counts as the agent's too")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the JVM's command line")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        sys.exit("give the JVM's command after --")
    shares, sigshares = [], []
    whose = "JFR's" if args.profiler == "jfr" else "the agent's"
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        for r in range(args.runs):
            subprocess.run(["perf", "record", "-q", "-o", data, "-e", "cpu-clock", "-F", str(args.freq),
                            "--call-graph", "dwarf,8192", "--", *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            # --no-inline: perf would ask addr2line for the inlined functions at every address of
            # an object with debug information (minutes a run); the agent's frames are counted,
            # not named to the inlined function
            out = subprocess.run(["perf", "script", "--no-inline", "-i", data,
                                  "-F", "comm,tid,ip,sym,dso"],
                                 capture_output=True, text=True, check=True).stdout
            total, ours, signals, where = count(out, args.top, args.profiler, args.jvmti)
            share = 100 * ours / max(total, 1)
            shares.append(share)
            sigshares.append(100 * signals / max(total, 1))
            print(f"run {r + 1}: {ours} of {total} samples are {whose}: {share:.3f}%; "
                  f"{signals} in the kernel's signal delivery: {sigshares[-1]:.3f}%")
            for name, n in where.most_common(args.top):
                print(f"    {n:6d}  {name}")
    for what, v in ((whose, shares), ("signal delivery", sigshares)):
        v.sort()
        print(f"{what}: median {v[len(v) // 2]:.3f}% (min {v[0]:.3f}, max {v[-1]:.3f}) of "
              f"{args.runs} runs")


if __name__ == "__main__":
    main()
