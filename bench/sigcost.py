#!/usr/bin/env python3
"""Runs build/bench/sigcost's modes interleaved (order rotated every round) and reports each
mode's loss of worker passes against a baseline measured in the same round: median and range
over the rounds, and the worker time one signal costs. See bench/sigcost.c for the modes."""
import argparse
import statistics
import subprocess
import children  # noqa: E402  (every process started ends with the harness)
children.install()

MODES = ["none", "wake", "signal", "pin-wake", "pin-same", "pin-cross", "timers", "cputimers"]
# each mode against the mode that differs from it by one thing
BASES = {"wake": "none", "signal": "wake", "pin-wake": "none", "pin-same": "pin-wake",
         "pin-cross": "pin-wake", "timers": "none", "cputimers": "none"}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", default="build/bench/sigcost")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    rounds = []
    for r in range(a.rounds):
        order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
        got = {}
        for m in order:
            out = subprocess.run([a.bin, m, str(a.seconds)], check=True, capture_output=True, text=True).stdout.split()
            got[m] = (int(out[1]), int(out[2]))
        rounds.append(got)
        print(f"round {r + 1}: " + " ".join(f"{m}={got[m][0]}/{got[m][1]}" for m in MODES), flush=True)
    print()
    print("| mode | against | loss, median (range) | signals per second | worker µs per signal |")
    print("|---|---|---|---|---|")
    for m in MODES[1:]:
        b = BASES[m]
        loss = [1 - g[m][0] / g[b][0] for g in rounds]
        sig = statistics.median(g[m][1] - g[b][1] for g in rounds) / a.seconds
        per = f"{statistics.median(loss) * 2e6 / sig:.1f}" if sig > 0 else ""
        print(f"| {m} | {b} | {100 * statistics.median(loss):+.2f}% ({100 * min(loss):+.2f}..{100 * max(loss):+.2f}) "
              f"| {sig:.0f} | {per} |")


if __name__ == "__main__":
    main()
