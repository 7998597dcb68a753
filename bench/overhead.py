#!/usr/bin/env python3
"""Overhead of the sampler agent against no agent and JFR, on a SPECjvm-style workload.

    bench/overhead.py [--workload scimark] [--threads 2] [--idle 200] [--rounds 5]
                      [--seconds 6] [--warmup 2] [--configs none,s10-auto,...] [--quick]
    bench/overhead.py --scaling        # the sampler thread's CPU vs idle and busy threads

Every configuration is a fresh JVM. Configurations are interleaved round-robin, and the order
is rotated each round, so drift on a shared machine hits all of them alike. The loss of a
configuration is computed against the no-agent run of the same round, then the median over
rounds is reported with its min-max spread. Results: a markdown table on stdout and in
bench/results/<name>.md, raw rows in bench/results/raw/<name>.csv.
"""
import argparse
import csv
import os
import resource
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

CONFIGS = {
    "none": None,
    "s10-auto": "interval=10ms,hasrun=auto",
    "s10-cpu": "interval=10ms,hasrun=cpu",
    "s10-regs": "interval=10ms,hasrun=regs",
    "s1-auto": "interval=1ms,hasrun=auto",
    "s1-cpu": "interval=1ms,hasrun=cpu",
    "s1-regs": "interval=1ms,hasrun=regs",
    "s1-nomap": "interval=1ms,codemap=off",
    "s1-nonative": "interval=1ms,cstack=no",
    "s10-nonative": "interval=10ms,cstack=no",
    "s1-ann": "interval=1ms,ann=on",
    "jfr-default": "jfr:default",
    "jfr-profile": "jfr:profile",
}


def run_one(args, name, tmp):
    spec = CONFIGS[name]
    cmd = ["java", *JVM]
    if spec and spec.startswith("jfr:"):
        cmd.append(f"-XX:StartFlightRecording=settings={spec[4:]},filename={tmp}/r.jfr")
    elif spec:
        agent = args.agent_of.get(name, args.agent)
        cmd.append(f"-agentpath:{agent}={spec},file={tmp}/p.folded{agent_stats.option(agent, tmp + '/p.json')}")
    cmd += ["-cp", args.classes, "Workloads", args.workload, "--threads", str(args.threads),
            "--idle", str(args.idle), "--warmup", str(args.warmup), "--seconds", str(args.seconds)]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.time() - t0
    if p.returncode != 0:
        sys.exit(f"{name}: java exited {p.returncode}:\n{err[-2000:]}")
    row = {"config": name, "wall_s": round(wall, 2)}
    for tok in out.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            row[k] = v
    for k, v in agent_stats.last(err).items():
        row["s_" + k] = v
    return row


def captures(row):
    """Stacks the agent captured in a run: its stats' captures (None for a run without stats: JFR,
    or an agent from before stats=, which --agent-of may run)."""
    return row.get("s_captures")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def overhead(args):
    names = args.configs.split(",")
    for n in names:
        if n not in CONFIGS:
            sys.exit(f"unknown config {n} (known: {', '.join(CONFIGS)})")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                c0 = child_cpu()
                row = run_one(args, n, tmp)
                row["proc_cpu_s"] = round(child_cpu() - c0, 3)
                row["round"] = r
                rows.append(row)
                print(f"round {r} {n:12s} ops/s {float(row['ops_per_s']):10.1f} cpu {row['proc_cpu_s']:7.2f}s"
                      + (f" captures {captures(row)} sampler_cpu_ms {row.get('s_sampler_cpu_ms')}" if captures(row) else ""),
                      file=sys.stderr, flush=True)
    checks = {row["checksum"] for row in rows}
    base = {row["round"]: row for row in rows if row["config"] == "none"}
    lines = [f"workload `{args.workload}`, {args.threads} worker threads + {args.idle} idle threads, "
             f"{args.warmup:g} s warm-up + {args.seconds:g} s measured, {args.rounds} interleaved rounds, "
             f"JVM {' '.join(JVM)}; checksums identical across all runs: {'yes' if len(checks) == 1 else 'NO'}",
             "",
             "| config | throughput (ops/s, median) | spread (min-max) | loss vs no agent (median of per-round ratios, min..max) | process CPU s (median) | captures per CPU-second | one capture: median / p99 µs | sampler thread CPU (% of one core) | coverage of process CPU (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        rs = [row for row in rows if row["config"] == n]
        thr = [float(row["ops_per_s"]) for row in rs]
        losses = [100 * (1 - float(row["ops_per_s"]) / float(base[row["round"]]["ops_per_s"])) for row in rs if row["round"] in base]
        cpu = [row["proc_cpu_s"] for row in rs]
        sps, cost, sam, cov = "", "", "", ""
        if captures(rs[0]):
            per_cpu = [float(captures(r)) / (float(r['s_cpu_ms']) / 1000) for r in rs if float(r['s_cpu_ms']) > 0]
            sps = f"{med(per_cpu):.0f}" if per_cpu else "n/a (regs measures no CPU)"
            cost = f"{med([float(r['s_cost_median_us']) for r in rs]):.1f} / {med([float(r['s_cost_p99_us']) for r in rs]):.1f}"
            sam = f"{med([100 * float(r['s_sampler_cpu_ms']) / 1000 / float(r['s_wall_s']) for r in rs]):.2f}"
            covs = [float(r["s_coverage"]) for r in rs if "s_coverage" in r]
            cov = f"{med(covs):.1f}%" if covs else "n/a (not reported)"
        loss = f"{med(losses):+.2f}% ({min(losses):+.2f}..{max(losses):+.2f})" if losses and n != "none" else "—"
        lines.append(f"| {n} ({CONFIGS[n] or 'no agent'}) | {med(thr):.1f} | {min(thr):.1f}-{max(thr):.1f} | {loss} | {med(cpu):.2f} | {sps} | {cost} | {sam} | {cov} |")
    report(args, rows, lines)


def scaling(args):
    rows = []
    cases = [(int(b), int(i)) for b in args.busy_list.split(",") for i in args.idle_list.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for busy, idle in cases[r % len(cases):] + cases[:r % len(cases)]:
                a = argparse.Namespace(**vars(args))
                a.threads, a.idle = busy, idle
                row = run_one(a, "s1-auto", tmp)
                row.update(busy=busy, idle=idle, round=r)
                rows.append(row)
                print(f"round {r} busy {busy} idle {idle:5d} sampler_cpu_ms {row.get('s_sampler_cpu_ms')} wall {row.get('s_wall_s')}", file=sys.stderr, flush=True)
    lines = [f"interval=1ms hasrun=auto, workload `{args.workload}`, {args.rounds} interleaved rounds, "
             f"{args.warmup:g} s + {args.seconds:g} s per run", "",
             "| busy threads | idle threads | sampler thread CPU, % of one core (median, min-max) | per round, µs of sampler CPU (median) | signals sent per second (median) |",
             "|---|---|---|---|---|"]
    for busy, idle in cases:
        rs = [row for row in rows if row["busy"] == busy and row["idle"] == idle]
        pct = [100 * float(r["s_sampler_cpu_ms"]) / 1000 / float(r["s_wall_s"]) for r in rs]
        per = [1000 * float(r["s_sampler_cpu_ms"]) / max(1, int(r["s_ticks"])) for r in rs]
        sig = [int(r["s_requests"]) / float(r["s_wall_s"]) for r in rs]
        lines.append(f"| {busy} | {idle} | {med(pct):.2f} ({min(pct):.2f}-{max(pct):.2f}) | {med(per):.1f} | {med(sig):.0f} |")
    report(args, rows, lines)


def report(args, rows, lines):
    name = args.name or ("scaling" if args.scaling else f"overhead-{args.workload}")
    raw = os.path.join(HERE, "results", "raw")
    if args.quick:  # a smoke run must not overwrite the raw data behind a committed table
        raw, name = tempfile.gettempdir(), name + "-quick"
    os.makedirs(raw, exist_ok=True)
    with open(os.path.join(raw, name + ".csv"), "w", newline="") as f:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    head = [f"# {name}", "", f"Command: `bench/overhead.py {' '.join(sys.argv[1:])}` on {time.strftime('%Y-%m-%d')}, "
            f"{os.cpu_count()} CPUs.", ""]
    text = "\n".join(head + lines) + "\n"
    if not args.quick:
        with open(os.path.join(HERE, "results", name + ".md"), "w") as f:
            f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="scimark")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--idle", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--configs", default=",".join(n for n in CONFIGS if n not in ("s1-nomap", "s1-ann")))
    ap.add_argument("--agent", default=os.path.join(ROOT, "build", "agent", "libsampler.so"))
    ap.add_argument("--classes", default=os.path.join(ROOT, "build", "bench", "classes"))
    ap.add_argument("--name", help="results file name (default from the mode and workload)")
    ap.add_argument("--define", action="append", default=[], metavar="NAME=OPTIONS",
                    help="one more config: the agent's options (e.g. old-s1=interval=1ms)")
    ap.add_argument("--agent-of", action="append", default=[], metavar="NAME=PATH",
                    help="another libsampler.so for config NAME (e.g. a build of an older commit)")
    ap.add_argument("--scaling", action="store_true", help="sampler CPU vs idle/busy thread counts")
    ap.add_argument("--busy-list", default="1,2,4", help="--scaling: busy thread counts")
    ap.add_argument("--idle-list", default="0,100,1000", help="--scaling: idle thread counts")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 round, 1 s; no markdown, CSV in the temp dir")
    args = ap.parse_args()
    for d in args.define:
        name, _, spec = d.partition("=")
        CONFIGS[name] = spec
    args.agent_of = dict(a.partition("=")[::2] for a in args.agent_of)
    for name, path in args.agent_of.items():
        if not os.path.exists(path):
            sys.exit(f"--agent-of {name}: {path} missing")
    if args.quick:
        args.rounds, args.seconds, args.warmup = 1, 1, 0.5
    needs_agent = args.scaling or any((CONFIGS.get(n) or "jfr:").find("jfr:") != 0 for n in args.configs.split(","))
    for path in ([args.agent] if needs_agent else []) + [os.path.join(args.classes, "Workloads.class")]:
        if not os.path.exists(path):
            sys.exit(f"{path} missing: build first (cmake -S . -B build && cmake --build build)")
    scaling(args) if args.scaling else overhead(args)


if __name__ == "__main__":
    main()
