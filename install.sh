#!/bin/sh
# Builds amplihack from this clone and installs it.
#
#   ./install.sh [amplihack install options]
#
# Builds both binaries the way releases are built (release profile; statically linked on Linux,
# see packaging/build), then runs `amplihack install`, which copies them into the bin directory
# (default ~/.local/bin, or $AMPLIHACK_BIN_DIR) and registers the hooks.
set -eu
cd "$(dirname "$0")"
dir=$(packaging/build)
exec "$dir/amplihack" install "$@"
