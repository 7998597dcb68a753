#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds twice (ASan+UBSan for the unit
# tests, the plain build for everything including the JVM integration tests), runs ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
jobs=$(nproc)

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-san/)"
cmake -S . -B build-san -DSAMPLER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build build-san -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-san -L unit --output-on-failure

echo "== all tests, plain build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure
