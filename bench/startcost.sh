#!/bin/bash
# What a run's start costs the sampler thread (filling the compiled-code map), start after start,
# in one warmed-up JVM: a `Workloads server --threads 2` JVM, then RUNS 1 ms runs of a second
# each through the launcher, 0.5 s apart; per run the sampler thread's CPU for the fill
# (code_replay_ms) and what it did (code_from_cache: read, code_kept: renewed, code_left_out,
# code_swept), from each run's stats= file.
#   bash bench/startcost.sh [BUILD_DIR [RUNS [JAVA]]]   (defaults: build, 5, java)
# Interleave two builds' runs by hand to compare them (bench/RESULTS.md).
set -eu
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
JAVA=${3:-java}
W=$(mktemp -d)
trap 'kill "$P" 2>/dev/null; rm -rf "$W"' EXIT
"$JAVA" -Xmx512m -cp "$B/bench/classes" Workloads server --threads 2 --seconds $((10 + 3 * RUNS)) \
  >/dev/null 2>&1 &
P=$!
sleep 6 # warmed up: ~2,000 compiled methods
for i in $(seq 1 "$RUNS"); do
  "$B/bin/sampler" collect -d 1s "interval=1ms,file=$W/run.folded,stats=$W/run.json" "$P" >/dev/null
  python3 - "$W/run.json" "$i" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
keys = ["code_replay_ms", "code_from_cache", "code_kept", "code_left_out", "code_swept", "code_entries"]
print(f"run {sys.argv[2]}", *(f"{k}={c.get(k, '-')}" for k in keys))
PY
  sleep 0.5
done
