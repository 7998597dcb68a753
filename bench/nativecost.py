#!/usr/bin/env python3
"""What native frames cost per capture and what they add to coverage, where native code runs.

    bench/nativecost.py [--rounds 3] [--seconds 5] [--agent build/agent/libsampler.so]

Runs the integration scenarios whose CPU is in native code — jni (a JNI C call chain), gc (G1's
workers under a small heap), jit (the compilers on fresh classes) — and the compute mix
(Workloads mix), with native frames on (cstack=dwarf, the default) and off (cstack=no), at
interval=1ms and 10ms, interleaved round by round; reports per configuration the medians of
the agent's own stats (stats=): one capture's cost in the handler (median and p99, us) and coverage
(the share of the process's CPU the profile holds), and the native walk's own cost in the
handler (captures with native frames). Needs the build's integration classes and
JNI library (cmake --build build).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import agent_stats  # noqa: E402  (the agent's stats=, read back)
import children  # noqa: E402  (every process started ends with the harness)
children.install()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def scenario_cmd(args, name, opts, out):
    it = os.path.join(args.build, "tests", "integration")
    agent = f"-agentpath:{args.agent}={opts},file={out}{agent_stats.option(args.agent, out + '.json')}"
    if name == "mix":
        return ["java", agent, "-cp", os.path.join(args.build, "bench", "classes"), "Workloads", "mix",
                "--threads", "2", "--warmup", "1", "--seconds", str(args.seconds)]
    extra_jvm = ["-Xmx64m", "-XX:+UseG1GC"] if name == "gc" else ["-Xmx256m"]
    extra = {"jni": [os.path.join(it, "libit_nativework.so")], "jit": [os.path.join(it, "payload-classes")]}
    return ["java", *extra_jvm, agent, "-cp", os.path.join(it, "classes"), "Scenarios", name, str(args.seconds),
            *extra.get(name, [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--agent", default=None)
    ap.add_argument("--scenarios", default="jni,gc,jit,mix")
    args = ap.parse_args()
    args.agent = os.path.abspath(args.agent or os.path.join(args.build, "agent", "libsampler.so"))
    configs = [(s, i, c) for s in args.scenarios.split(",") for i in ("1ms", "10ms") for c in ("dwarf", "no")]
    rows = {k: [] for k in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for s, i, c in configs[r % len(configs):] + configs[:r % len(configs)]:
                p = subprocess.run(scenario_cmd(args, s, f"interval={i},cstack={c}", f"{tmp}/p.folded"),
                                   capture_output=True, text=True, timeout=300)
                if p.returncode != 0:
                    sys.exit(f"{s} {i} cstack={c}: exit {p.returncode}\n{p.stderr[-1500:]}")
                m = agent_stats.last(p.stderr)
                rows[(s, i, c)].append(m)
                print(f"round {r} {s:4s} {i:5s} cstack={c:5s} cost {m['cost_median_us']}/{m['cost_p99_us']} us "
                      f"coverage {m['coverage']}% native_frames {m['native_frames']}", file=sys.stderr, flush=True)
    med = lambda xs: statistics.median(xs)
    print(f"Command: `bench/nativecost.py {' '.join(sys.argv[1:])}`; {args.rounds} interleaved rounds, "
          f"{args.seconds:g} s each; medians\n")
    print("| scenario | interval | cstack | one capture: median / p99 µs | its native walk: median / p99 µs | coverage of process CPU | native frames per capture |")
    print("|---|---|---|---|---|---|---|")
    for s, i, c in configs:
        ms = rows[(s, i, c)]
        cost = med([float(m["cost_median_us"]) for m in ms])
        p99 = med([float(m["cost_p99_us"]) for m in ms])
        cov = med([float(m["coverage"]) for m in ms])
        nf = med([int(m["native_frames"]) / max(1, int(m["captures"])) for m in ms])
        walk = "—" if c == "no" else (f"{med([float(m['native_median_us']) for m in ms]):.1f} / "
                                      f"{med([float(m['native_p99_us']) for m in ms]):.1f}")
        print(f"| {s} | {i} | {c} | {cost:.1f} / {p99:.1f} | {walk} | {cov:.1f}% | {nf:.1f} |")


if __name__ == "__main__":
    main()
