#!/usr/bin/env bash
# Runs every test of amplihack hooks, from a fresh clone: formatting and lints, unit and CLI
# tests, end-to-end tests inside the real Claude Code (npm) and against the real amplifier-core
# kernel (PyPI), and the startup benchmark with its thresholds.
#
# It installs the two test hosts on first use, into the repository (git-ignored):
#   tests/claude-code/node_modules   @anthropic-ai/claude-code, pinned in tests/claude-code/package.json
#   tests/amplifier/.venv            amplifier-core, pinned in tests/amplifier/requirements.txt
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n==> %s\n' "$*"; }

step "test hosts"
wanted_claude=$(sed -n 's/.*"@anthropic-ai\/claude-code": *"\([^"]*\)".*/\1/p' tests/claude-code/package.json)
if ! tests/claude-code/node_modules/.bin/claude --version 2>/dev/null | grep -q "^$wanted_claude "; then
  npm install --prefix tests/claude-code --no-audit --no-fund --no-package-lock --loglevel=error
fi
echo "claude: $(tests/claude-code/node_modules/.bin/claude --version)"
if [ -f tests/amplifier/requirements.txt ]; then
  if ! tests/amplifier/.venv/bin/python -c 'import amplifier_core' 2>/dev/null; then
    python3 -m venv tests/amplifier/.venv
    tests/amplifier/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/amplifier/requirements.txt
  fi
  echo "amplifier-core: $(tests/amplifier/.venv/bin/python -c 'import importlib.metadata as m; print(m.version("amplifier-core"))')"
fi

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test"
test_log=$(mktemp)
trap 'rm -f "$test_log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$test_log"

step "the README's install command, into a throwaway HOME"
# Keep cargo's and rustup's own homes: only where amplihack installs to is throwaway.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
scratch_home=$(mktemp -d)
HOME="$scratch_home" ./install.sh > "$scratch_home/install.log"
HOME="$scratch_home" "$scratch_home/.local/bin/amplihack" doctor
rm -rf "$scratch_home"

step "benchmarks (cargo bench --bench startup --bench forwarding)"
cargo bench --locked --bench startup --bench forwarding

# One closing line for the whole run.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "\namplihack tests: %d passed, %d failed\n", p, f }' "$test_log"
