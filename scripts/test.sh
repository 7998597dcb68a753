#!/usr/bin/env bash
# The whole test suite: installs the missing packages of scripts/packages.txt and
# packages-test.txt, then builds every build type with warnings
# as errors (SAMPLER_WERROR=ON) and runs ctest:
#   build-san/     Debug + ASan/UBSan (gcc): the unit tests (side by side, one per core: none
#                  depends on having the machine to itself)
#   build-rel/     Release (-O3): everything built, the unit tests (with tests/tsan: the code map
#                  read while written, under ThreadSanitizer)
#   build-notest/  BUILD_TESTING=OFF, fresh each time: the agent and the flamegraph tool alone,
#                  proving they need no test framework (and building them with clang too)
#   build/         RelWithDebInfo, the plain build: every test but the unit tests (the two
#                  builds above ran them) — the JVM integration tests on JDK 17 (the system's),
#                  most on 21 and 25 too (scripts/jdks.sh), the fuzzers, the browser tests; and the agent
#                  cross-built for aarch64 (build/arm64/) in Debian's arm64 JDK 17 under
#                  qemu-aarch64 (scripts/arm64.sh; tests jvm_arm64_*, label arm64)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh build test
jobs=$(nproc)

echo "== formatting (.clang-format; scripts/format.sh reformats)"
bash scripts/format.sh --check

echo "== JDK 21 and 25 for the integration tests (scripts/jdks.sh: Debian 13's, in a private cache, not the system)"
bash scripts/jdks.sh
extra_jdks=$(bash scripts/jdks.sh --list)

echo "== Debian 12's arm64 JDK 17 and libraries for the aarch64 JVM tests (scripts/arm64.sh: run under qemu-aarch64, in the same cache)"
bash scripts/arm64.sh
arm64_root=$(bash scripts/arm64.sh --list)

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-san/, Debug)"
cmake -S . -B build-san -DSAMPLER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc \
  -DSAMPLER_WERROR=ON -DBUILD_TESTING=ON -DSAMPLER_EXTRA_JDKS=OFF >/dev/null
cmake --build build-san -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-san -L unit -j "$jobs" --output-on-failure

echo "== Release build, unit tests (build-rel/)"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSAMPLER_WERROR=ON -DBUILD_TESTING=ON \
  -DSAMPLER_EXTRA_JDKS=OFF >/dev/null
cmake --build build-rel -j "$jobs"
ctest --test-dir build-rel -L unit -j "$jobs" --output-on-failure

echo "== the agent and the flamegraph tool without tests, with clang (build-notest/, BUILD_TESTING=OFF)"
rm -rf build-notest
cmake -S . -B build-notest -DBUILD_TESTING=OFF -DCMAKE_C_COMPILER=clang -DSAMPLER_WERROR=ON >/dev/null
cmake --build build-notest -j "$jobs" --target sampler flamegraph
# Nothing of the tests' was looked for: no cache entry names Criterion or Python.
if grep -v '^//' build-notest/CMakeCache.txt | grep -i -E 'criterion|python'; then
  echo "BUILD_TESTING=OFF still looks for a test dependency (cache entries above)" >&2
  exit 1
fi

echo "== all other tests, plain build (build/, RelWithDebInfo; its unit tests are build-san's and build-rel's)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAMPLER_WERROR=ON -DBUILD_TESTING=ON \
  -DSAMPLER_EXTRA_JDKS="$extra_jdks" -DSAMPLER_ARM64="$arm64_root" >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -LE '^unit$' --output-on-failure
