#!/usr/bin/env bash
# Formats the project's own C sources with clang-format and the top-level .clang-format.
#   scripts/format.sh           reformats them in place
#   scripts/format.sh --check   changes nothing; lists the files that differ, exits 1 if any does
# The files are the committed *.c, *.h and *.inc (git ls-files): nothing generated (the build
# trees' embedded pages) and nothing untracked is touched.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

command -v clang-format >/dev/null || { echo "format: clang-format missing (scripts/deps.sh test installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.inc')

if [ "$check" -eq 0 ]; then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi

differ=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror --style=file "$f" >/dev/null 2>&1 || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
  echo "format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (scripts/format.sh fixes them):" >&2
  printf '  %s\n' "${differ[@]}" >&2
  exit 1
fi
echo "format: all ${#files[@]} files formatted"
