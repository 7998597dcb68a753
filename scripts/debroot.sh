# shellcheck shell=bash disable=SC2154,SC2034 # prog: set by the sourcing script; mode, aptopts ...: read by it
# Sourced by scripts/jdks.sh and scripts/arm64.sh: Debian packages of another release or another
# architecture, downloaded with a private apt and extracted into a private directory — nothing is
# installed into the system (apt-get download + dpkg -x, never dpkg -i), and the system's apt
# lists, cache and status are not touched. The archive is the one this machine's apt already
# uses: its URIs are read from the system's apt configuration, never written here.
#
# The caller sets `prog` (the prefix of its messages, and its name: scripts/$prog.sh). Functions:
#   die MESSAGE...                 prints "prog: MESSAGE" on stderr and exits 1
#   debroot_mode [ARG]             the scripts' one argument: sets mode to fetch (none) or list
#                                  (--list); --help prints the script's head comment and exits
#   debroot_dir                    prints the cache directory (the rules below)
#   debroot_apt APTDIR SUITE ARCH  a private apt in APTDIR for SUITE's ARCH packages, updated;
#                                  sets the arrays aptopts and main_uris
#   debroot_download PKG...        the packages' .deb files into APTDIR/debs (those already there
#                                  with the right hash are kept); sets the map debfile[PKG]
#   debroot_relink TREE ROOT       points every absolute symlink below TREE at ROOT's copy
#
# The directory: $SAMPLER_JDKS_DIR, else /var/cache/sampler-jdks when that can be written,
# else ${XDG_CACHE_HOME:-~/.cache}/sampler-jdks.

die() { echo "$prog: $*" >&2; exit 1; }

debroot_mode() {
  mode=fetch
  case "${1:-}" in
    "") ;;
    --list) mode=list ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (accepted: --list, --help)" ;;
  esac
}

debroot_dir() {
  if [ -n "${SAMPLER_JDKS_DIR:-}" ]; then
    echo "$SAMPLER_JDKS_DIR"
  elif [ -d /var/cache/sampler-jdks ] && [ -w /var/cache/sampler-jdks ]; then
    echo /var/cache/sampler-jdks
  elif [ ! -e /var/cache/sampler-jdks ] && [ -w /var/cache ]; then
    echo /var/cache/sampler-jdks
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/sampler-jdks"
  fi
}

debroot_apt() {
  local suite=$2 arch=$3 codename uri rel u out
  apt=$1
  for t in apt-get apt-cache dpkg dpkg-deb sha256sum; do
    command -v "$t" >/dev/null || die "needs $t (a Debian system)"
  done
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

  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/preferences.d" "$apt/debs"
  : > "$apt/status"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""
  [ -r "$keyring" ] && signed="[signed-by=$keyring] "
  {
    echo "# written by scripts/$prog.sh from this system's apt sources"
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
    -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o "Acquire::Languages=none"
    -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
    -o "Acquire::Retries=2" -o "Acquire::http::Timeout=30" -o "Acquire::https::Timeout=30"
    -o "Debug::NoLocking=true"
  )
  # apt downloads as the unprivileged _apt user, who cannot write below root's home: run as root
  # in such a directory, it would only warn and download as root anyway.
  if [ "$(id -u)" -eq 0 ]; then aptopts+=(-o "APT::Sandbox::User=root"); fi

  echo "$prog: apt-get update ($suite $arch, from ${main_uris[*]} ${sec_uris[*]})"
  if ! out=$(apt-get "${aptopts[@]}" -q --error-on=any update 2>&1); then
    echo "$out" | grep -E '^(E|W|Err):' >&2 || echo "$out" >&2
    if echo "$out" | grep -q -e NO_PUBKEY -e "signatures couldn't be verified" -e "is not signed"; then
      die "$suite's Release file cannot be verified with ${keyring}: this system's debian-archive-keyring predates its keys (apt-get install debian-archive-keyring)"
    fi
    die "the Debian archive is unreachable (apt-get update of $suite failed, URIs from this system's apt sources: ${main_uris[*]} ${sec_uris[*]})"
  fi
  echo "$prog:   package lists: $(echo "$out" | grep '^Fetched' || echo 'up to date')"
}

debroot_download() {
  local uris file size hash pkg have total=0 fetch_bytes=0 t0 p
  local -a need=()
  uris=$(apt-get "${aptopts[@]}" download --print-uris "$@" 2>&1) ||
    die "the packages are not in the archive: $uris"
  declare -g -A debfile=()
  echo "$prog: packages:"
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
    printf '%s:   %-28s %s %6.1f MB%s\n' "$prog" "$pkg" "$(echo "$file" | cut -d_ -f2 | sed 's/%3a/:/')" "$(echo "$size" | awk '{print $1/1e6}')" "$have"
  done <<< "$uris"
  printf '%s: %d packages, %.1f MB; downloading %d (%.1f MB)\n' "$prog" "${#debfile[@]}" \
    "$(awk "BEGIN{print $total/1e6}")" "${#need[@]}" "$(awk "BEGIN{print $fetch_bytes/1e6}")"
  if [ ${#need[@]} -gt 0 ]; then
    t0=$(date +%s.%N)
    (cd "$apt/debs" && apt-get "${aptopts[@]}" -q download "${need[@]}") >/dev/null 2>"$apt/download.log" || {
      cat "$apt/download.log" >&2
      die "download failed (is the Debian archive reachable? URIs: ${main_uris[*]})"
    }
    echo "$prog: downloaded in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
  fi
  for p in "${!debfile[@]}"; do [ -f "${debfile[$p]}" ] || die "missing after download: ${debfile[$p]}"; done
}

debroot_relink() {
  local tree=$1 root=$2 link target rel
  # Packages ship absolute symlinks: a JDK's conf/ (and lib/jvm.cfg ...) point to
  # /etc/java-NN-openjdk/..., whose files the package ships in etc/ of the same tree; a -dev
  # package's libX.so points to /lib/TRIPLET/libX.so.N. Point every absolute symlink below TREE
  # whose target ROOT holds at that copy (relative, so the tree can move); one into /etc/java-*
  # must be there.
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in
      /*)
        if [ -e "$root$target" ]; then
          rel=$(realpath -m --relative-to="$(dirname "$link")" "$root$target")
          ln -sfn "$rel" "$link"
        else
          case "$target" in /etc/java-*) die "$link -> $target: not in the packages" ;; esac
        fi ;;
    esac
  done < <(find "$tree" -type l -print0)
}
