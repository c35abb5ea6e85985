#!/bin/sh
# Install coder: download the release binary for this machine (Linux or macOS, x64 or
# arm64, glibc or musl), check it against the release's SHA256SUMS, and put it in
# place atomically. POSIX sh only, so it runs under dash, busybox and macOS's sh:
#
#   curl -fsSL https://github.com/coder-dev/coder/releases/latest/download/install.sh | sh
#
# Environment:
#   CODER_VERSION        the release to install, e.g. 0.1.0 (default: the latest release)
#   CODER_INSTALL_DIR    where `coder` goes (default: ~/.local/bin, created if missing)
#   CODER_DOWNLOAD_BASE  where releases are, laid out as <base>/v<version>/<asset>
#                        (default: the GitHub releases of coder-dev/coder)
#
# On any failure it prints one line, exits non-zero and installs nothing.
# Everything runs inside main, called on the last line, so a download cut short
# by the network runs nothing at all.

CODER_GITHUB_REPO="coder-dev/coder"

say() {
  printf '%s\n' "$*"
}

fail() {
  printf 'coder install: %s\n' "$*" >&2
  exit 1
}

# The platform part of the asset name: linux-x64, linux-arm64-musl, darwin-arm64, ...
detect_platform() {
  os_name=$(uname -s 2>/dev/null) || os_name=unknown
  machine=$(uname -m 2>/dev/null) || machine=unknown
  case "$os_name" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      fail "this is Windows ($os_name): run install.ps1 in PowerShell instead" ;;
    *) fail "no coder build for this operating system ($os_name); builds exist for Linux, macOS and Windows" ;;
  esac
  case "$machine" in
    x86_64 | amd64 | x64) arch=x64 ;;
    aarch64 | arm64 | armv8*) arch=arm64 ;;
    *) fail "no coder build for this processor ($machine on $os_name); builds exist for x64 and arm64" ;;
  esac
  # A shell running under Rosetta reports x86_64 on an Apple silicon Mac: take the native build.
  if [ "$os" = darwin ] && [ "$arch" = x64 ] &&
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ]; then
    arch=arm64
  fi
  libc=""
  if [ "$os" = linux ] && is_musl; then
    libc="-musl"
  fi
  platform="$os-$arch$libc"
}

is_musl() {
  for loader in /lib/ld-musl-*.so.1 /usr/lib/ld-musl-*.so.1; do
    [ -e "$loader" ] && return 0
  done
  ldd --version 2>&1 | grep -qi musl
}

# fetch URL FILE: 0 when FILE now holds URL's body; quiet, since the caller says what failed.
fetch() {
  if [ "$downloader" = curl ]; then
    curl -fsL --retry 2 -o "$2" "$1" 2>/dev/null
  else
    wget -q -O "$2" "$1" 2>/dev/null
  fi
}

pick_tools() {
  if command -v curl >/dev/null 2>&1; then
    downloader=curl
  elif command -v wget >/dev/null 2>&1; then
    downloader=wget
  else
    fail "neither curl nor wget is installed: install one of them and run this again"
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    hasher="sha256sum"
  elif command -v shasum >/dev/null 2>&1; then
    hasher="shasum -a 256"
  else
    fail "neither sha256sum nor shasum is installed: one is needed to check the download"
  fi
}

# The latest release's SHA256SUMS: GitHub serves it at .../releases/latest/download/;
# another base (a mirror) serves it at <base>/latest/SHA256SUMS.
latest_sums_url() {
  case "$base" in
    */releases/download) printf '%s\n' "${base%/download}/latest/download/SHA256SUMS" ;;
    *) printf '%s\n' "$base/latest/SHA256SUMS" ;;
  esac
}

# The version in SHA256SUMS's line for this platform: `<hex>  coder-<version>-<platform>`.
version_from_sums() {
  sed -n "s/^[0-9a-fA-F]\{64\}[ *][ *]*coder-\(.*\)-$platform\$/\1/p" "$1" | head -n 1
}

main() {
  set -eu
  umask 022
  base="${CODER_DOWNLOAD_BASE:-https://github.com/$CODER_GITHUB_REPO/releases/download}"
  base="${base%/}"
  if [ -n "${CODER_INSTALL_DIR:-}" ]; then
    dir="$CODER_INSTALL_DIR"
  elif [ -n "${HOME:-}" ]; then
    dir="$HOME/.local/bin"
  else
    fail "HOME is not set: set CODER_INSTALL_DIR to the directory to install coder in"
  fi
  version="${CODER_VERSION:-latest}"
  version="${version#v}"

  detect_platform
  pick_tools

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t coder-install) || fail "could not make a temporary directory"
  staged=""
  trap 'rm -rf "$tmp"; if [ -n "$staged" ]; then rm -f "$staged"; fi' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  if [ "$version" = latest ]; then
    url=$(latest_sums_url)
    fetch "$url" "$tmp/latest-sums" || fail "could not download $url to find the latest release (set CODER_VERSION to pick one)"
    version=$(version_from_sums "$tmp/latest-sums")
    [ -n "$version" ] || fail "the latest release has no coder build for $platform ($url lists none)"
  fi
  case "$version" in
    "" | *[!0-9A-Za-z.+-]*) fail "CODER_VERSION=$version is not a version such as 0.1.0" ;;
  esac

  asset="coder-$version-$platform"
  sums_url="$base/v$version/SHA256SUMS"
  fetch "$sums_url" "$tmp/SHA256SUMS" || fail "could not download $sums_url: is $version a released version of coder?"
  expected=$(awk -v name="$asset" '($2 == name || $2 == "*" name) && length($1) == 64 { print tolower($1); exit }' "$tmp/SHA256SUMS")
  [ -n "$expected" ] || fail "release v$version has no coder build for $platform ($asset is not in its SHA256SUMS)"

  asset_url="$base/v$version/$asset"
  fetch "$asset_url" "$tmp/$asset" || fail "could not download $asset_url"
  actual=$($hasher "$tmp/$asset" | awk '{ print tolower($1) }')
  [ "$actual" = "$expected" ] ||
    fail "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing was installed"

  # Stage beside the target so the final mv is a rename on one file system, and run the
  # staged copy first: a binary that cannot run here never replaces a working one.
  mkdir -p "$dir" 2>/dev/null || fail "could not create $dir (set CODER_INSTALL_DIR to a directory you can write)"
  staged="$dir/.coder.install.$$"
  cp "$tmp/$asset" "$staged" 2>/dev/null || fail "could not write to $dir (set CODER_INSTALL_DIR to a directory you can write)"
  chmod 0755 "$staged"
  if ! installed_version=$("$staged" --version </dev/null 2>&1); then
    fail "the downloaded $asset does not run on this machine: $(printf '%s\n' "$installed_version" | head -n 1)"
  fi
  mv -f "$staged" "$dir/coder" || fail "could not move the new binary into $dir/coder"
  staged=""

  say "$installed_version installed at $dir/coder"
  case ":${PATH:-}:" in
    *":$dir:"*)
      found=$(command -v coder 2>/dev/null || true)
      if [ -n "$found" ] && [ "$found" != "$dir/coder" ]; then
        say "note: $found comes before it on your PATH, so \`coder\` runs that one"
      fi
      ;;
    *) path_advice ;;
  esac
}

path_advice() {
  say ""
  say "$dir is not on your PATH. To run \`coder\` by name, add it:"
  case "$(basename "${SHELL:-sh}")" in
    fish) say "  fish_add_path \"$dir\"" ;;
    zsh) say "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.zshrc && . ~/.zshrc" ;;
    bash)
      # shellcheck disable=SC2088 # the advice shows ~ for the user to type
      if [ "$os" = darwin ]; then rc="~/.bash_profile"; else rc="~/.bashrc"; fi
      say "  echo 'export PATH=\"$dir:\$PATH\"' >> $rc && . $rc"
      ;;
    *) say "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.profile   (then log in again)" ;;
  esac
}

main "$@"
