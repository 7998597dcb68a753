#!/usr/bin/env bash
# OpenJDK 21 and 25 for the integration tests, on a Debian 12 machine that only ships JDK 17.
#
#   scripts/jdks.sh            fetch what is missing, then print where the JDKs are
#   scripts/jdks.sh --list     print "21=DIR/jdk21/bin;25=DIR/jdk25/bin" (for -DSAMPLER_EXTRA_JDKS)
#                              and exit 1 if a JDK is not there yet; fetches nothing
#
# The JDKs come from Debian 13 "trixie", in the package archive this machine's apt already
# uses (the URIs are read from its apt configuration). trixie's binaries need glibc 2.38, so
# they run through trixie's own loader and libraries, all extracted into a private directory:
# nothing is installed into the system (apt-get download + dpkg -x, never dpkg -i), and the
# system's apt lists, cache and status are not touched.
#
# The directory: $SAMPLER_JDKS_DIR, else /var/cache/sampler-jdks when that can be written,
# else ${XDG_CACHE_HOME:-~/.cache}/sampler-jdks. Per JDK NN:
#   DIR/jdkNN/bin/{java,javac,jcmd,...}   wrappers: trixie's ld.so --library-path ... the real tool
#   DIR/jdkNN/root/                       the extracted packages (usr/lib/jvm/java-NN-openjdk-*, libc, ...)
#   DIR/jdkNN/VERSION                     written last: the JDK is complete (a later run does nothing)
# Delete DIR (or DIR/jdkNN) to fetch again.
set -euo pipefail

# SAMPLER_JDK_VERSIONS and SAMPLER_JDK_SUITE fetch others the same way, e.g. JDK 26 from
# Debian unstable for a measurement: SAMPLER_JDK_VERSIONS=26 SAMPLER_JDK_SUITE=sid scripts/jdks.sh
read -r -a versions <<<"${SAMPLER_JDK_VERSIONS:-21 25}"
# trixie's libraries the JDK binaries load (checked below with the loader: nothing may be missing)
libs=(libc6 libstdc++6 libgcc-s1 zlib1g libzstd1)
tools=(java javac jcmd jps jstack jinfo jmap jar javap jshell jfr keytool)
suite=${SAMPLER_JDK_SUITE:-trixie}

prog=jdks
# shellcheck source=scripts/debroot.sh
. "$(dirname "$0")/debroot.sh"
debroot_mode "$@"

dir=$(debroot_dir)

complete() { [ -s "$dir/jdk$1/VERSION" ] && [ -x "$dir/jdk$1/bin/java" ]; }

list() {
  local out="" v
  for v in "${versions[@]}"; do
    complete "$v" || return 1
    out+="${out:+;}$v=$dir/jdk$v/bin"
  done
  echo "$out"
}

if [ "$mode" = list ]; then
  list || die "JDKs not complete in $dir: run scripts/jdks.sh"
  exit 0
fi

report() {
  local v
  for v in "${versions[@]}"; do
    echo "jdks: JDK $v: $dir/jdk$v/bin/java ($(cat "$dir/jdk$v/VERSION"))"
  done
  echo "jdks: for CMake: -DSAMPLER_EXTRA_JDKS=\"$(list)\""
}

todo=()
for v in "${versions[@]}"; do complete "$v" || todo+=("$v"); done
if [ ${#todo[@]} -eq 0 ]; then
  echo "jdks: complete in $dir, nothing to fetch"
  report
  exit 0
fi

arch=$(dpkg --print-architecture)
case "$arch" in
  amd64) triplet=x86_64-linux-gnu; ldso=ld-linux-x86-64.so.2 ;;
  arm64) triplet=aarch64-linux-gnu; ldso=ld-linux-aarch64.so.1 ;;
  *) die "architecture $arch: not supported (amd64, arm64)" ;;
esac
mkdir -p "$dir" || die "cannot create $dir (set SAMPLER_JDKS_DIR)"
dir=$(cd "$dir" && pwd)
echo "jdks: JDK ${todo[*]} from Debian $suite into $dir"

debroot_apt "$dir/apt" "$suite" "$arch"
pkgs=("${libs[@]}")
for v in "${todo[@]}"; do pkgs+=("openjdk-$v-jre-headless" "openjdk-$v-jdk-headless"); done
debroot_download "${pkgs[@]}"

# --- extract, fix, wrap, check: one JDK at a time, complete or not at all ---------------------
for v in "${todo[@]}"; do
  final=$dir/jdk$v new=$dir/.jdk$v.new
  rm -rf "$new" "$final"
  mkdir -p "$new/root" "$new/bin"
  for p in "${libs[@]}" "openjdk-$v-jre-headless" "openjdk-$v-jdk-headless"; do
    dpkg-deb -x "${debfile[$p]}" "$new/root"
  done
  jrel=usr/lib/jvm/java-$v-openjdk-$arch
  [ -x "$new/root/$jrel/bin/java" ] || die "no $jrel/bin/java in openjdk-$v-jre-headless"
  debroot_relink "$new/root/usr/lib/jvm" "$new/root"
  loader=$final/root/usr/lib/$triplet/$ldso
  [ -x "$new/root/usr/lib/$triplet/$ldso" ] || die "no $ldso in $suite's libc6"
  libpath=$final/root/usr/lib/$triplet:$final/root/$jrel/lib:$final/root/$jrel/lib/server
  for t in "${tools[@]}"; do
    [ -x "$new/root/$jrel/bin/$t" ] || continue
    cat > "$new/bin/$t" <<EOF
#!/bin/sh
# written by scripts/jdks.sh: $t of JDK $v from Debian $suite, run by $suite's own loader and libraries
exec "$loader" --argv0 "\$0" --library-path "$libpath" "$final/root/$jrel/bin/$t" "\$@"
EOF
    chmod +x "$new/bin/$t"
  done
  mv "$new" "$final"
  # every library the tools and the VM load is found in the private tree, none in the system
  # (whose glibc is too old for them) — except those of sound, fonts, images and smart cards,
  # which would need trixie's libasound, libfreetype, libjpeg, liblcms2, libpcsclite: the
  # tests never load them.
  for elf in "$final/root/$jrel"/bin/* "$final/root/$jrel"/lib/*.so "$final/root/$jrel"/lib/server/libjvm.so; do
    case "$(basename "$elf")" in
      libjsound.so|libfontmanager.so|libjavajpeg.so|liblcms.so|libj2pcsc.so) continue ;;
    esac
    [ -f "$elf" ] || continue
    miss=$("$loader" --library-path "$libpath" --list "$elf" 2>&1 | grep -v -e "$final/root/" -e linux-vdso || true)
    [ -z "$miss" ] || die "$elf needs a library that is not in $final/root: $miss"
  done
  ver=$("$final/bin/java" -version 2>&1) || die "JDK $v: java -version failed: $ver"
  first=$(echo "$ver" | head -1)
  [[ "$first" == *"version \"$v"* ]] || die "JDK $v: java -version says: $ver"
  "$final/bin/javac" -version >/dev/null 2>&1 || die "JDK $v: javac -version failed"
  echo "$first" > "$final/VERSION"
  echo "jdks: JDK $v ready: $first ($(du -sm "$final" | cut -f1) MB in $final)"
done
# the packages are not needed any more: the extracted trees are the cache
rm -f "$apt"/debs/*.deb
report
