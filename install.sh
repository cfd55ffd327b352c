#!/bin/sh
# Installs amplihack: the hook binary `amplihack-hooks` and its manager `amplihack`.
#
# From a release, no Rust needed:
#   curl -fsSL https://github.com/amplihack/amplihack-hooks/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --scope project      # arguments go to `amplihack install`
#   AMPLIHACK_VERSION=0.2.0 ...                                 # a given version instead of the newest
#   AMPLIHACK_RELEASES_URL=https://mirror.example/releases ...  # another GitHub-style release site
#
#   It needs sh, curl or wget, tar, and sha256sum or shasum. It downloads the archive for this
#   platform and its .sha256, refuses on a mismatch (or when it cannot check), unpacks into a
#   temporary directory and runs the unpacked `amplihack install`, which copies both binaries to
#   ~/.local/bin (or $AMPLIHACK_BIN_DIR) and registers the hooks.
#
# From a clone of the repository, `./install.sh [install options]` (run as a file, not piped)
# builds from source instead, statically, the way releases are built (packaging/build).
set -eu

DEFAULT_RELEASES_URL="https://github.com/amplihack/amplihack-hooks/releases"

fail() {
  echo "amplihack install.sh: $*" >&2
  exit 1
}

# From a clone only when this script runs as a file of that clone (`./install.sh`,
# `sh path/to/install.sh`). Piped into sh, $0 is the shell: the current directory, which may be
# any repository (`curl ... | sh -s -- --scope project` runs inside one), is never looked at.
here=""
if [ -f "$0" ] && [ "$(basename "$0")" = install.sh ]; then
  here=$(cd "$(dirname "$0")" 2>/dev/null && pwd || echo "")
fi
# And only when that directory is amplihack's own clone: its Cargo.toml is this project's (the
# root package `amplihack` with the `amplihack-hooks` binary). The script saved into any other
# repository and run there (`curl -fsSLO .../install.sh && sh install.sh`, the read-it-first
# way) downloads a release, and never runs that repository's packaging/build.
own_clone() {
  [ -f "$1/Cargo.toml" ] && [ -x "$1/packaging/build" ] &&
    grep -qx 'name = "amplihack"' "$1/Cargo.toml" &&
    grep -qx 'name = "amplihack-hooks"' "$1/Cargo.toml"
}
if [ -n "$here" ] && own_clone "$here"; then
  dir=$("$here/packaging/build")
  exec "$dir/amplihack" install "$@"
fi

# From a release.
case "$(uname -s 2>/dev/null)" in
  Linux) os=unknown-linux-gnu ;;
  Darwin) os=apple-darwin ;;
  *) fail "no release for $(uname -s 2>/dev/null || echo this system); build from source: git clone the repository and run ./install.sh" ;;
esac
case "$(uname -m 2>/dev/null)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) fail "no release for the $(uname -m 2>/dev/null) processor; build from source: git clone the repository and run ./install.sh" ;;
esac
target="$arch-$os"
asset="amplihack-$target.tar.gz"

# Every tool is checked before anything is downloaded or written.
if command -v sha256sum >/dev/null 2>&1; then
  sha() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  fail "neither sha256sum nor shasum is installed, so the download cannot be verified; nothing was installed. Install coreutils (sha256sum) or perl (shasum) and run this again."
fi
if command -v curl >/dev/null 2>&1; then
  # From an https:// site, curl follows no redirect off HTTPS either.
  fetch() {
    case "$1" in
      [Hh][Tt][Tt][Pp][Ss]://*) curl -fsSL --retry 2 --proto =https --proto-redir =https -o "$2" "$1" ;;
      *) curl -fsSL --retry 2 -o "$2" "$1" ;;
    esac
  }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  fail "neither curl nor wget is installed; install one and run this again"
fi
command -v tar >/dev/null 2>&1 || fail "tar is not installed; install it and run this again"

base=${AMPLIHACK_RELEASES_URL:-$DEFAULT_RELEASES_URL}
base=${base%/}
# Over HTTPS only; plain http:// for this machine alone (a local mirror, the tests).
case "$base" in
  [Hh][Tt][Tt][Pp][Ss]://*) ;;
  http://*@*) fail "AMPLIHACK_RELEASES_URL is $base: a plain http:// site may not carry user@; use https:// or a plain loopback URL; nothing was installed" ;;
  http://localhost|http://localhost[:/]*|http://127.0.0.1|http://127.0.0.1[:/]*|http://\[::1\]|http://\[::1\][:/]*) ;;
  *) fail "AMPLIHACK_RELEASES_URL is $base: releases are downloaded over HTTPS only (plain http:// only from localhost, 127.0.0.1 or [::1]); set it to an https:// URL or unset it; nothing was installed" ;;
esac
if [ -n "${AMPLIHACK_VERSION:-}" ]; then
  url="$base/download/v${AMPLIHACK_VERSION#v}"
else
  url="$base/latest/download"
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t amplihack)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "amplihack: downloading $url/$asset" >&2
fetch "$url/$asset" "$tmp/$asset" || fail "could not download $url/$asset (network, or no release for $target at that version); nothing was installed"
fetch "$url/$asset.sha256" "$tmp/$asset.sha256" || fail "could not download $url/$asset.sha256; nothing was installed"
expected=$(cut -d' ' -f1 < "$tmp/$asset.sha256")
actual=$(sha "$tmp/$asset")
if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
  fail "checksum mismatch for $asset: expected ${expected:-nothing}, got $actual; the download is corrupt or was tampered with, and nothing was installed"
fi
echo "amplihack: sha256 verified ($actual)" >&2
tar -xzf "$tmp/$asset" -C "$tmp" || fail "could not unpack $asset; nothing was installed"
[ -x "$tmp/amplihack-$target/amplihack" ] || fail "$asset holds no amplihack binary; nothing was installed"
"$tmp/amplihack-$target/amplihack" install "$@"
