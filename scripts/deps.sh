#!/usr/bin/env bash
# Installs the Debian packages of the named lists that are not installed yet, after saying
# which:
#   scripts/deps.sh build        scripts/packages.txt: to build the agent and the flamegraph
#                                tool and run the demo (what scripts/demo.sh installs)
#   scripts/deps.sh build test   and scripts/packages-test.txt: what the tests and benchmarks
#                                need besides (what scripts/test.sh installs)
# No list named: both. Needs root (or sudo) only when something is missing.
# The test list also needs node and npm (Debian's nodejs and npm, installed only when the
# commands are missing: a node from elsewhere is kept) and then the JavaScript tools of
# package.json (eslint, prettier: scripts/format.sh), which `npm ci` installs into the
# git-ignored node_modules/ exactly as package-lock.json pins them, when that is missing or
# older than the lock file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -gt 0 ] || set -- build test
files=()
node_tools=0
for list in "$@"; do
  case "$list" in
    build) files+=("$here/packages.txt") ;;
    test) files+=("$here/packages-test.txt"); node_tools=1 ;;
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
if [ "$node_tools" -eq 1 ]; then
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#wanted[@]} packages of $names present"
else
  echo "deps: ${#missing[@]} packages missing (of the ${#wanted[@]} of $names, or for the node and npm commands); installing them (and what they depend on) with apt-get:"
  echo "deps:   ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
[ "$node_tools" -eq 1 ] || exit 0
stamp="$root/node_modules/.package-lock.json" # npm writes it at every install
if [ -f "$stamp" ] && [ ! "$root/package-lock.json" -nt "$stamp" ]; then
  echo "deps: node_modules/ up to date with package-lock.json"
  exit 0
fi
echo "deps: installing the JavaScript tools of package-lock.json into node_modules/ (npm ci)"
(cd "$root" && npm ci --no-audit --no-fund)
