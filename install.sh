#!/bin/sh
# Builds amplihack from this clone and installs it.
#
#   ./install.sh [amplihack install options]
#
# Builds both binaries in release mode, then runs `amplihack install`, which copies them into the
# bin directory (default ~/.local/bin, or $AMPLIHACK_BIN_DIR) and registers the hooks.
set -eu
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then PATH="$HOME/.cargo/bin:$PATH"; else
    echo "install.sh: cargo not found; install Rust from your package manager or rustup first" >&2
    exit 1
  fi
fi
cargo build --release --locked --bin amplihack --bin amplihack-hooks
exec ./target/release/amplihack install "$@"
