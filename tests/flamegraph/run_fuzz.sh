#!/bin/sh
# run_fuzz.sh BINARY WORKDIR SEEDS SECONDS — a short, reproducible libFuzzer run of the
# given reader for ctest: fixed seed, new inputs go to WORKDIR/corpus (the committed seeds
# in SEEDS are only read), crash artifacts to WORKDIR. Fails on any crash or sanitizer report.
set -eu
bin=$1 work=$2 seeds=$3 secs=$4
mkdir -p "$work/corpus"
exec "$bin" -seed=1 -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"
