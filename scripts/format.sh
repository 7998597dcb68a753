#!/usr/bin/env bash
# Formats the project's own sources:
#   C (*.c, *.h, *.inc)  with clang-format and the top-level .clang-format;
#   JavaScript (*.js)    with prettier (.prettierrc.json), and lints it with eslint
#                        (eslint.config.js): the flame graph page's scripts, the SVG's script,
#                        their unit tests.
#   scripts/format.sh           reformats them in place (eslint only reports)
#   scripts/format.sh --check   changes nothing; lists the files that differ and eslint's
#                               findings, exits 1 if any
# The files are the committed ones (git ls-files): nothing generated (the build trees'
# embedded pages) and nothing untracked is touched. prettier and eslint are the versions
# package-lock.json pins, in node_modules/ (scripts/deps.sh test installs them with npm ci).
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
command -v node >/dev/null || { echo "format: node missing (scripts/deps.sh test installs it)" >&2; exit 2; }
prettier=node_modules/.bin/prettier
eslint=node_modules/.bin/eslint
[ -x "$prettier" ] && [ -x "$eslint" ] ||
  { echo "format: prettier and eslint missing from node_modules/ (scripts/deps.sh test installs them: npm ci)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.inc')
mapfile -t js < <(git ls-files '*.js')

if [ "$check" -eq 0 ]; then
  clang-format -i --style=file "${files[@]}"
  "$prettier" --write --log-level warn "${js[@]}"
  exit 0
fi

status=0
differ=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror --style=file "$f" >/dev/null 2>&1 || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
  echo "format: ${#differ[@]} of ${#files[@]} C files differ from .clang-format (scripts/format.sh fixes them):" >&2
  printf '  %s\n' "${differ[@]}" >&2
  status=1
fi
rc=0
out=$("$prettier" --list-different "${js[@]}") || rc=$? # 1: some differ, 2: prettier failed
[ "$rc" -le 1 ] || { echo "format: prettier failed (exit $rc)" >&2; status=1; }
mapfile -t jsdiffer < <(printf '%s' "$out" | grep -v '^$' || true)
if [ ${#jsdiffer[@]} -gt 0 ]; then
  echo "format: ${#jsdiffer[@]} of ${#js[@]} JavaScript files differ from prettier's format (scripts/format.sh fixes them):" >&2
  printf '  %s\n' "${jsdiffer[@]}" >&2
  status=1
fi
if ! "$eslint" --max-warnings 0 "${js[@]}" >&2; then
  echo "format: eslint found problems in the JavaScript files (above)" >&2
  status=1
fi
[ "$status" -eq 0 ] || exit 1
echo "format: all ${#files[@]} C files and ${#js[@]} JavaScript files formatted, eslint clean"
