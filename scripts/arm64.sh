#!/usr/bin/env bash
# An arm64 OpenJDK 17 that runs on this (x86-64) machine under qemu-aarch64, and the arm64
# libraries the agent cross-builds against: the integration tests load the cross-built agent
# into a real aarch64 JVM with it (tests/integration, label arm64; docs/arm64.md).
#
#   scripts/arm64.sh            fetch it if it is not complete, then print where it is
#   scripts/arm64.sh --list     print its directory (for -DSAMPLER_ARM64_ROOT) and exit 1 if it
#                               is not complete; fetches nothing
#
# Debian 12 "bookworm"'s arm64 packages, from the archive this machine's apt already uses (the
# URIs are read from its apt configuration), downloaded with a private apt and extracted with
# dpkg -x into one root: nothing is installed into the system (never dpkg -i, no foreign
# architecture added), and the system's apt lists, cache and status are not touched.
#
# The directory: DIR/arm64, DIR as for scripts/jdks.sh ($SAMPLER_JDKS_DIR, else
# /var/cache/sampler-jdks when that can be written, else ${XDG_CACHE_HOME:-~/.cache}/sampler-jdks):
#   DIR/arm64/root/      the extracted packages: usr/lib/jvm/java-17-openjdk-arm64, libc,
#                        libunwind, libelf, zlib, liblzma with their headers and pkg-config files
#   DIR/arm64/bin/java   a wrapper: qemu-aarch64 -L root -E LD_LIBRARY_PATH=... root's java
#   DIR/arm64/VERSION    written last: the root is complete (a later run does nothing)
# Delete DIR/arm64 to fetch again. Needs qemu-aarch64 (Debian: qemu-user).
set -euo pipefail

suite=bookworm
arch=arm64
triplet=aarch64-linux-gnu
# the JVM and what libjvm.so and the agent load; the -dev packages: headers, .so links and
# pkg-config files for the cross build (CMake toolchain file cmake/aarch64-linux-gnu.cmake)
pkgs=(openjdk-17-jre-headless libc6 libstdc++6 libgcc-s1 zlib1g liblzma5 libzstd1
      libunwind8 libunwind-dev libelf1 libelf-dev zlib1g-dev liblzma-dev)
jrel=usr/lib/jvm/java-17-openjdk-$arch

prog=arm64
# shellcheck source=scripts/debroot.sh
. "$(dirname "$0")/debroot.sh"
debroot_mode "$@"

dir=$(debroot_dir)
final=$dir/arm64
complete() { [ -s "$final/VERSION" ] && [ -x "$final/bin/java" ]; }

if [ "$mode" = list ]; then
  complete || die "the arm64 root is not complete in $final: run scripts/arm64.sh"
  echo "$final"
  exit 0
fi
if complete; then
  echo "arm64: complete in $final, nothing to fetch"
  echo "arm64: $(cat "$final/VERSION") ($final/bin/java)"
  exit 0
fi

qemu=$(command -v qemu-aarch64) || die "needs qemu-aarch64 to run the arm64 JVM (apt-get install qemu-user)"
mkdir -p "$dir" || die "cannot create $dir (set SAMPLER_JDKS_DIR)"
dir=$(cd "$dir" && pwd)
final=$dir/arm64
echo "arm64: Debian $suite's $arch JDK 17 and libraries into $final"
debroot_apt "$dir/apt-$arch" "$suite" "$arch"
debroot_download "${pkgs[@]}"

# extract, fix, wrap, check: complete or not at all
new=$dir/.arm64.new
rm -rf "$new" "$final"
mkdir -p "$new/root" "$new/bin"
for p in "${pkgs[@]}"; do dpkg-deb -x "${debfile[$p]}" "$new/root"; done
[ -x "$new/root/$jrel/bin/java" ] || die "no $jrel/bin/java in openjdk-17-jre-headless"
debroot_relink "$new/root" "$new/root"
# bookworm's packages are not merged-/usr: libc sits in lib/, the others in usr/lib/
libpath=$final/root/usr/lib/$triplet:$final/root/lib/$triplet
cat > "$new/bin/java" <<EOF
#!/bin/sh
# written by scripts/arm64.sh: Debian $suite's $arch java under qemu-aarch64 (user-mode emulation)
exec "$qemu" -L "$final/root" -E "LD_LIBRARY_PATH=$libpath" "$final/root/$jrel/bin/java" "\$@"
EOF
chmod +x "$new/bin/java"
mv "$new" "$final"
# every library the VM and the agent's dependencies load is in the root (the loader's own list,
# run under qemu) — except those of sound, fonts, images and smart cards: the tests never load them
loader=$final/root/lib/ld-linux-aarch64.so.1
for elf in "$final/root/$jrel"/lib/*.so "$final/root/$jrel"/lib/server/libjvm.so \
           "$final/root/usr/lib/$triplet"/libunwind-generic.so "$final/root/usr/lib/$triplet"/libelf.so; do
  case "$(basename "$elf")" in
    libjsound.so|libfontmanager.so|libjavajpeg.so|liblcms.so|libj2pcsc.so|libawt*.so|libsplashscreen.so) continue ;;
  esac
  [ -f "$elf" ] || die "$elf: not in the packages"
  miss=$("$qemu" -L "$final/root" -E "LD_LIBRARY_PATH=$libpath:$final/root/$jrel/lib:$final/root/$jrel/lib/server" \
           "$loader" --list "$elf" 2>&1 |
         grep -e 'not found' -e 'No such' || true)
  [ -z "$miss" ] || die "$elf needs a library that is not in $final/root: $miss"
done
ver=$("$final/bin/java" -version 2>&1) || die "java -version under qemu-aarch64 failed: $ver"
first=$(echo "$ver" | head -1)
[[ "$first" == *'version "17'* ]] || die "java -version says: $ver"
arch_seen=$("$final/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *os.arch = //p')
[ "$arch_seen" = aarch64 ] || die "the JVM says os.arch = '$arch_seen', not aarch64"
echo "$first ($arch_seen)" > "$final/VERSION"
rm -f "$dir/apt-$arch"/debs/*.deb
echo "arm64: ready: $first on $arch_seen under qemu-aarch64 ($(du -sm "$final" | cut -f1) MB in $final)"
echo "arm64: $final/bin/java"
