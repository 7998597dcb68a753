#!/usr/bin/env bash
# The main job: installs the missing packages of scripts/packages.txt (only what the build and
# the demo need: not the browser, qemu, cross compilers or Criterion of the tests, which are in
# packages-test.txt), builds the agent, the flamegraph tool and the
# workloads (no tests: BUILD_TESTING=OFF, so no test framework is needed), installs
# libsampler.so where `java -agentlib:sampler` finds it by name (and the flamegraph tool), then
# profiles the bundled demo workload and writes its flame graph. Needs root (or sudo) for the
# packages and install. Its build directory is build-demo/, its own: scripts/test.sh builds
# build/ with the tests, and two scripts sharing one cache would flip BUILD_TESTING back and
# forth (reconfiguring each time, and leaving ctest in build/ with stale test lists).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
echo "demo: 1. installs what is missing of scripts/packages.txt: $(sed -e 's/#.*//' scripts/packages.txt | xargs)"
echo "      2. builds the agent, the flamegraph tool and the demo program in build-demo/ (no tests)"
echo "      3. installs libsampler.so into the JDK's lib directory (so -agentlib:sampler finds it)"
echo "         and the flamegraph tool and the sampler launcher into /usr/local/bin"
echo "      4. profiles the demo program (three runs, 12 s in all) and writes its flame graph"
bash scripts/deps.sh build
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

build=build-demo
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"
$sudo cmake --install "$build" >/dev/null
libdir=$(sed -n 's/^SAMPLER_JAVA_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
echo "installed: $libdir/libsampler.so, $(command -v flamegraph) and $(command -v sampler)"

out="$root/$build/demo"
mkdir -p "$out"
echo "== profiling the demo workload (6 s): java -agentlib:sampler=interval=1ms,file=$out/demo-profile.html"
java -agentlib:sampler=interval=1ms,file="$out/demo-profile.html" -cp "$build/bench/classes" Demo 6000
echo "== the same as folded stacks with frame kinds (ann), then SVG from them with the flamegraph tool"
java -agentlib:sampler=interval=1ms,ann,file="$out/demo-profile.folded" -cp "$build/bench/classes" Demo 3000
flamegraph --palette java --title "Demo (sampler, 1 ms)" "$out/demo-profile.folded" -o "$out/demo-profile.svg"
echo "== the text report"
java -agentlib:sampler=interval=1ms,file="$out/demo-profile.txt" -cp "$build/bench/classes" Demo 3000 2>/dev/null
sed -n '/^Hot frames by self/,/^$/p' "$out/demo-profile.txt" | head -12
echo
echo "Flame graph: $out/demo-profile.html (open it in a browser); also demo-profile.svg, .folded, .txt"
echo
# -agentlib:sampler finds the library in the lib directory of the JDK it was installed into
jdk=$(dirname "$libdir")
java=java
[ "$(readlink -f "$(command -v java)")" = "$(readlink -f "$jdk/bin/java")" ] || java="$jdk/bin/java"
echo "Next, profile your own program (the profile is written when it exits; open profile.html):"
echo "  $java -agentlib:sampler=interval=1ms,file=profile.html -jar your-app.jar"
echo "  $java -agentlib:sampler=interval=1ms,file=profile.html -cp your-app.jar com.example.Main"
echo "With another JDK, name the library by its path:"
echo "  java -agentpath:$libdir/libsampler.so=interval=1ms,file=profile.html -jar your-app.jar"
echo "Every option: $java -agentlib:sampler=help -version"
