#!/usr/bin/env python3
"""Accuracy of each ThreadHasRun mode against ground truth (ThreadMXBean CPU time per thread).

    bench/accuracy.py [--rounds 3] [--seconds 8] [--agent PATH] [--name accuracy]

Runs the integration-test programs (tests/integration/java/Scenarios.java) under each `hasrun`
mode at interval=1ms and reports, per scenario, the share of samples that went to the threads
under study against their share of CPU time, plus what it cost (signals sent, sampler CPU):
  spin    a thread spinning on a volatile flag (constant registers) beside a busy thread
  bursty  10 threads waking every 5 ms for ~100 us of work, beside a busy thread (also: how
          many of their samples point at the code that ran rather than at the wait after it)
  idle    2 busy threads + 50 idle ones: the share of samples the idle threads got
  wakers  400 threads waking every 50 ms for ~5 us of work, beside two busy threads: their
          share of the samples against their share of the CPU
Writes bench/results/NAME.md (--agent: another build's libsampler.so, to compare).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import run as it  # noqa: E402  (the integration tests' parsers)
import children  # noqa: E402  (every process started ends with the harness)
children.install()


def one(agent, classes, mode, scenario, seconds, tmp):
    out = os.path.join(tmp, f"{mode}-{scenario}.folded")
    cmd = ["java", "-Xmx256m", f"-agentpath:{agent}=interval=1ms,threads,hasrun={mode},file={out},stats={out}.json",
           "-cp", classes, "Scenarios", scenario, str(seconds)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{mode} {scenario}: exit {p.returncode}: {p.stderr[-1500:]}")
    stacks = it.parse_folded(out)
    s = it.summary(p.stderr)
    per_thread = it.by_thread(stacks)
    total = sum(stacks.values())
    if scenario == "busyidle":
        idle = sum(n for k, n in per_thread.items() if k.startswith("idle-"))
        share_s, share_c = 100 * idle / max(total, 1), 0.0
    else:
        cpu = it.thread_cpu(p.stdout)
        group = {"spin": "spinner", "bursty": "bursty-", "wakers": "waker-"}[scenario]
        s_tot = sum(per_thread.get(w, 0) for w in cpu)
        share_s = 100 * sum(per_thread.get(w, 0) for w in cpu if w.startswith(group)) / max(s_tot, 1)
        share_c = 100 * sum(v for w, v in cpu.items() if w.startswith(group)) / max(sum(cpu.values()), 1)
    wall = float(s["wall_s"])
    # where the bursty threads' samples point: at the code that ran, or at the wait after it
    bursty = {k: n for k, n in stacks.items() if k.startswith("[bursty-")}
    in_work = 100 * sum(n for k, n in bursty.items() if "Scenarios.burstWork" in k) / max(1, sum(bursty.values()))
    return share_s, share_c, int(s["requests"]) / wall, 100 * float(s["sampler_cpu_ms"]) / 1000 / wall, in_work


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--agent", default=os.path.join(ROOT, "build", "agent", "libsampler.so"))
    ap.add_argument("--name", default="accuracy")
    ap.add_argument("--classes", default=os.path.join(ROOT, "build", "tests", "integration", "classes"))
    args = ap.parse_args()
    modes, scenarios = ["auto", "cpu", "regs"], ["spin", "bursty", "busyidle", "wakers"]
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for i, mode in enumerate(modes[r % 3:] + modes[:r % 3]):
                for sc in scenarios:
                    v = one(args.agent, args.classes, mode, sc, args.seconds, tmp)
                    res.setdefault((mode, sc), []).append(v)
                    print(f"round {r} {mode:5s} {sc:8s} samples {v[0]:6.2f}% cpu {v[1]:6.2f}% signals/s {v[2]:7.0f} sampler {v[3]:.2f}%",
                          file=sys.stderr, flush=True)
    med = lambda xs: statistics.median(xs)
    lines = [f"# {args.name}", "", f"Command: `bench/accuracy.py {' '.join(sys.argv[1:])}`; interval=1ms, "
             f"{args.rounds} interleaved rounds of {args.seconds:g} s per scenario; medians (min-max).", "",
             "| hasrun | spinner: sample share vs CPU share | bursty threads: sample share vs CPU share | bursty threads' samples in `burstWork` (the code that ran) | idle threads' share of samples | 400 wakers: sample share vs CPU share | signals sent per second (spin / bursty / busy+idle / wakers) | sampler thread CPU, % of a core (busy+idle / wakers) |",
             "|---|---|---|---|---|---|---|---|"]
    for mode in modes:
        cells = []
        for sc in ("spin", "bursty"):
            v = res[(mode, sc)]
            cells.append(f"{med([x[0] for x in v]):.1f}% vs {med([x[1] for x in v]):.1f}% "
                         f"(samples {min(x[0] for x in v):.1f}-{max(x[0] for x in v):.1f})")
        cells.append(f"{med([x[4] for x in res[(mode, 'bursty')]]):.1f}%")
        idle = res[(mode, "busyidle")]
        cells.append(f"{med([x[0] for x in idle]):.3f}%")
        v = res[(mode, "wakers")]
        cells.append(f"{med([x[0] for x in v]):.2f}% vs {med([x[1] for x in v]):.2f}% "
                     f"(error {med([x[0] - x[1] for x in v]):+.2f} points, {min(x[0] - x[1] for x in v):+.2f} to {max(x[0] - x[1] for x in v):+.2f})")
        cells.append(" / ".join(f"{med([x[2] for x in res[(mode, sc)]]):.0f}" for sc in scenarios))
        cells.append(f"{med([x[3] for x in idle]):.2f} / {med([x[3] for x in v]):.2f}")
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", args.name + ".md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
