#!/usr/bin/env bash
# Installs the Debian packages of the named lists that are not installed yet, after saying
# which:
#   scripts/deps.sh build        scripts/packages.txt: to build the agent and the flamegraph
#                                tool and run the demo (what scripts/demo.sh installs)
#   scripts/deps.sh build test   and scripts/packages-test.txt: what the tests and benchmarks
#                                need besides (what scripts/test.sh installs)
# No list named: both. Needs root (or sudo) only when something is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- build test
files=()
for list in "$@"; do
  case "$list" in
    build) files+=("$here/packages.txt") ;;
    test) files+=("$here/packages-test.txt") ;;
    *) echo "deps: unknown list '$list' (accepted: build, test)" >&2; exit 2 ;;
  esac
done
names="${files[*]##*/}"
names=${names// /, }
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "${files[@]}" | grep -v '^$')
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#wanted[@]} packages of $names present"
  exit 0
fi
echo "deps: ${#missing[@]} of the ${#wanted[@]} packages of $names missing; installing them (and what they depend on) with apt-get:"
echo "deps:   ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
