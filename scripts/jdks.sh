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

die() { echo "jdks: $*" >&2; exit 1; }

mode=fetch
case "${1:-}" in
  "") ;;
  --list) mode=list ;;
  -h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (accepted: --list, --help)" ;;
esac

if [ -n "${SAMPLER_JDKS_DIR:-}" ]; then
  dir=$SAMPLER_JDKS_DIR
elif [ -d /var/cache/sampler-jdks ] && [ -w /var/cache/sampler-jdks ]; then
  dir=/var/cache/sampler-jdks
elif [ ! -e /var/cache/sampler-jdks ] && [ -w /var/cache ]; then
  dir=/var/cache/sampler-jdks
else
  dir=${XDG_CACHE_HOME:-$HOME/.cache}/sampler-jdks
fi

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

for t in apt-get apt-cache dpkg dpkg-deb sha256sum; do
  command -v "$t" >/dev/null || die "needs $t (a Debian system)"
done
arch=$(dpkg --print-architecture)
case "$arch" in
  amd64) triplet=x86_64-linux-gnu; ldso=ld-linux-x86-64.so.2 ;;
  arm64) triplet=aarch64-linux-gnu; ldso=ld-linux-aarch64.so.1 ;;
  *) die "architecture $arch: not supported (amd64, arm64)" ;;
esac
mkdir -p "$dir" || die "cannot create $dir (set SAMPLER_JDKS_DIR)"
dir=$(cd "$dir" && pwd)
echo "jdks: JDK ${todo[*]} from Debian $suite into $dir"

# --- a private apt: its own sources list, lists, cache, status and preferences --------------
# The archive URIs: those the system's apt uses for its own release (e.g. bookworm) and for its
# security suite, whichever way they are configured (sources.list or deb822 .sources).
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"
main_uris=() sec_uris=()
# shellcheck disable=SC2016 # $(REPO_URI): apt's own syntax, not the shell's
while read -r uri rel; do
  case "$rel" in
    "$codename") [[ " ${main_uris[*]} " == *" $uri "* ]] || main_uris+=("$uri") ;;
    "$codename-security") [[ " ${sec_uris[*]} " == *" $uri "* ]] || sec_uris+=("$uri") ;;
  esac
done < <(apt-get indextargets --no-release-info --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | sort -u)
[ ${#main_uris[@]} -gt 0 ] || die "no '$codename' archive in this system's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/): cannot tell where Debian's packages come from"

apt=$dir/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/preferences.d" "$apt/debs"
: > "$apt/status"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -r "$keyring" ] && signed="[signed-by=$keyring] "
{
  echo "# written by scripts/jdks.sh from this system's apt sources"
  for u in "${main_uris[@]}"; do
    echo "deb ${signed}$u $suite main"
    # unstable has no updates or security suite
    [ "$suite" = sid ] || [ "$suite" = unstable ] || echo "deb ${signed}$u $suite-updates main"
  done
  if [ "$suite" != sid ] && [ "$suite" != unstable ]; then
    for u in "${sec_uris[@]}"; do echo "deb ${signed}$u $suite-security main"; done
  fi
} > "$apt/sources.list"
aptopts=(
  -o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=-"
  -o "Dir::Etc::preferences=$apt/preferences" -o "Dir::Etc::preferencesparts=$apt/preferences.d"
  -o "Dir::State=$apt" -o "Dir::State::lists=$apt/lists" -o "Dir::State::status=$apt/status"
  -o "Dir::Cache=$apt/cache" -o "Dir::Cache::archives=$apt/cache/archives"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "APT::Architectures::=$arch" -o "Acquire::Languages=none"
  -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
  -o "Acquire::Retries=2" -o "Acquire::http::Timeout=30" -o "Acquire::https::Timeout=30"
  -o "Debug::NoLocking=true"
)
# apt downloads as the unprivileged _apt user, who cannot write below root's home: run as root
# in such a directory, it would only warn and download as root anyway.
if [ "$(id -u)" -eq 0 ]; then aptopts+=(-o "APT::Sandbox::User=root"); fi

echo "jdks: apt-get update ($suite, from ${main_uris[*]} ${sec_uris[*]})"
if ! out=$(apt-get "${aptopts[@]}" -q --error-on=any update 2>&1); then
  echo "$out" | grep -E '^(E|W|Err):' >&2 || echo "$out" >&2
  if echo "$out" | grep -q -e NO_PUBKEY -e "signatures couldn't be verified" -e "is not signed"; then
    die "$suite's Release file cannot be verified with ${keyring}: this system's debian-archive-keyring predates Debian 13's keys (apt-get install debian-archive-keyring)"
  fi
  die "the Debian archive is unreachable (apt-get update of $suite failed, URIs from this system's apt sources: ${main_uris[*]} ${sec_uris[*]})"
fi

pkgs=("${libs[@]}")
for v in "${todo[@]}"; do pkgs+=("openjdk-$v-jre-headless" "openjdk-$v-jdk-headless"); done
echo "jdks:   package lists: $(echo "$out" | grep '^Fetched' || echo 'up to date')"
uris=$(apt-get "${aptopts[@]}" download --print-uris "${pkgs[@]}" 2>&1) ||
  die "the packages are not in $suite: $uris"

# --- download (what is not in the private cache yet) -----------------------------------------
declare -A debfile=()
total=0 fetch_bytes=0 need=()
echo "jdks: packages from $suite:"
while read -r _ file size hash; do
  [ -n "$file" ] || continue
  pkg=${file%%_*}
  debfile[$pkg]=$apt/debs/$file
  total=$((total + size))
  have=""
  if [ -f "$apt/debs/$file" ] && [ "$(stat -c %s "$apt/debs/$file")" = "$size" ] &&
     echo "${hash#*:}  $apt/debs/$file" | sha256sum --quiet -c - 2>/dev/null; then
    have=" (cached)"
  else
    need+=("$pkg"); fetch_bytes=$((fetch_bytes + size))
  fi
  printf 'jdks:   %-28s %s %6.1f MB%s\n' "$pkg" "$(echo "$file" | cut -d_ -f2 | sed 's/%3a/:/')" "$(echo "$size" | awk '{print $1/1e6}')" "$have"
done <<< "$uris"
printf 'jdks: %d packages, %.1f MB; downloading %d (%.1f MB)\n' "${#debfile[@]}" \
  "$(awk "BEGIN{print $total/1e6}")" "${#need[@]}" "$(awk "BEGIN{print $fetch_bytes/1e6}")"
if [ ${#need[@]} -gt 0 ]; then
  t0=$(date +%s.%N)
  (cd "$apt/debs" && apt-get "${aptopts[@]}" -q download "${need[@]}") >/dev/null 2>"$apt/download.log" || {
    cat "$apt/download.log" >&2
    die "download failed (is the Debian archive reachable? URIs: ${main_uris[*]})"
  }
  echo "jdks: downloaded in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
fi
for p in "${!debfile[@]}"; do [ -f "${debfile[$p]}" ] || die "missing after download: ${debfile[$p]}"; done

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
  # conf/ (and lib/jvm.cfg ...) are symlinks to /etc/java-NN-openjdk/...: the package ships those
  # files in etc/ of the same tree. Point every symlink into /etc/java-* at that copy (relative,
  # so the tree can move).
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in
      /etc/java-*)
        [ -e "$new/root$target" ] || die "$link -> $target: not in the packages"
        rel=$(realpath -m --relative-to="$(dirname "$link")" "$new/root$target")
        ln -sfn "$rel" "$link" ;;
    esac
  done < <(find "$new/root/usr/lib/jvm" -type l -print0)
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
