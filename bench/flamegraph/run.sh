#!/usr/bin/env bash
# bench/flamegraph/run.sh [BUILD_DIR] [--big] — times the `flamegraph` tool on generated
# folded inputs: 100,000 distinct stacks (depth 5-80, 50,000 names, ~130 MB) and, with --big,
# 1,000,000 stacks (~1.3 GB). Wall time and peak RSS come from /usr/bin/time; each case runs
# 3 times and the median is printed. Inputs and outputs go to bench/flamegraph/data/
# (gitignored). BUILD_DIR (default build/) must have the targets flamegraph and gen_folded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
big=0
for a in "$@"; do
  case $a in
    --big) big=1 ;;
    *) build=$(cd "$a" && pwd) ;;
  esac
done
fg=$build/flamegraph/flamegraph
gen=$build/bench/flamegraph/gen_folded
[ -x "$fg" ] && [ -x "$gen" ] || { echo "build the targets flamegraph and gen_folded in $build first" >&2; exit 1; }
data=$here/data
mkdir -p "$data"

inputs=(s100k)
[ -f "$data/s100k.folded" ] || "$gen" -n 100000 -m 50000 -d 5-80 -s 42 > "$data/s100k.folded"
if [ $big = 1 ]; then
  inputs+=(s1m)
  [ -f "$data/s1m.folded" ] || "$gen" -n 1000000 -m 50000 -d 5-80 -s 42 > "$data/s1m.folded"
fi

median() { sort -n | sed -n 2p; }

printf '%-8s %-7s %10s %12s %12s\n' input format "wall s" "peak RSS MB" "output MB"
for in in "${inputs[@]}"; do
  size=$(stat -L -c %s "$data/$in.folded")
  cat "$data/$in.folded" > /dev/null # page cache warm, like a file just written
  for fmt in svg html folded; do
    walls=() rss=()
    for i in 1 2 3; do
      out=$( { /usr/bin/time -f '%e %M' "$fg" -f $fmt -o "$data/$in.out.$fmt" "$data/$in.folded"; } 2>&1 )
      walls+=("$(echo "$out" | tail -1 | cut -d' ' -f1)")
      rss+=("$(echo "$out" | tail -1 | cut -d' ' -f2)")
    done
    w=$(printf '%s\n' "${walls[@]}" | median)
    r=$(printf '%s\n' "${rss[@]}" | median)
    o=$(stat -L -c %s "$data/$in.out.$fmt")
    printf '%-8s %-7s %10s %12d %12.1f\n' "$in" $fmt "$w" $((r / 1024)) "$(awk -v b="$o" 'BEGIN { print b / 1048576 }')"
  done
  printf '(input %s: %.1f MB, %d lines)\n' "$in" "$(awk -v b="$size" 'BEGIN { print b / 1048576 }')" "$(wc -l < "$data/$in.folded")"
done

# Headless Chromium: milliseconds from navigation start until a script placed at the end of
# the page's <body> runs (the FG_DATA literal parsed plus whatever the viewer does
# synchronously; the viewer's own browser tests time the first drawn frame). Median of 3.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  for in in "${inputs[@]}"; do
    page=$data/$in.out.probe.html
    sed 's|</body>|<script>document.documentElement.setAttribute("data-fg-ms", performance.now().toFixed(0));</script></body>|' \
      "$data/$in.out.html" > "$page"
    ms=()
    for i in 1 2 3; do
      ms+=("$(timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --dump-dom "file://$page" 2>/dev/null |
              grep -o 'data-fg-ms="[0-9]*"' | grep -o '[0-9]*' || echo NA)")
    done
    echo "$in html in headless Chromium: $(printf '%s\n' "${ms[@]}" | sort -n | sed -n 2p) ms to the end of <body>"
  done
fi
