#!/usr/bin/env bash
# Runs every test of amplihack hooks, from a fresh clone: formatting and lints, unit and CLI
# tests, end-to-end tests inside the real Claude Code and six other agent CLIs (npm) and against the real amplifier-core
# kernel (PyPI), the README's install command, and the benchmarks with their thresholds.
#
# It installs the test hosts on first use, into the repository (git-ignored):
#   tests/claude-code/node_modules   @anthropic-ai/claude-code, pinned in tests/claude-code/package.json
#   tests/claude-code-2.0.30/node_modules   the oldest supported Claude Code, 2.0.30
#   tests/hosts/<cli>/node_modules   six other agent CLIs (codex, copilot, qwen, droid, gemini,
#                                    opencode), each pinned in tests/hosts/<cli>/package.json
#                                    (tests/support/host_clis.rs drives them)
#   tests/amplifier/.venv            amplifier-core, pinned in tests/amplifier/requirements.txt,
#                                    and amplihack's Amplifier module (./amplifier, editable)
#   tests/amplifier/app-venv         the real Amplifier app, from the offline kit in
#                                    ../shared/amplifier-app (or $AMPLIHACK_AMPLIFIER_APP_KIT), only
#                                    where the kit exists (tests/amplifier_app_e2e.rs skips otherwise)
#
# Every step runs even when an earlier one fails, and the run always ends with one line
# `amplihack tests: N passed, N failed`: cargo's tests plus one check per other step. The exit
# status is 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"

passed=0
failed=0
failures=()
test_log=$(mktemp)
scratch_home=$(mktemp -d)
# Speed figures the app test measures (tests/amplifier_app_e2e.rs), shown with the benchmarks.
export AMPLIHACK_FIGURES
AMPLIHACK_FIGURES=$(mktemp)
summary() {
  local p f
  p=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^passed/) s += $(i-1) } END { print s + 0 }' "$test_log")
  f=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^failed/) s += $(i-1) } END { print s + 0 }' "$test_log")
  rm -rf "$test_log" "$scratch_home" "$AMPLIHACK_FIGURES"
  if [ "${#failures[@]}" -gt 0 ]; then printf '\nfailed steps: %s\n' "${failures[*]}"; fi
  printf '\namplihack tests: %d passed, %d failed\n' $((passed + p)) $((failed + f))
}
trap summary EXIT

step() { printf '\n==> %s\n' "$1"; }
# check NAME COMMAND...: runs one step and counts it.
check() {
  local name=$1
  shift
  step "$name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

# other_host CLI PACKAGE BINARY: installs tests/hosts/CLI when its node_modules lacks the version
# pinned in its package.json, then prints the binary's own --version. The binary runs with a
# throwaway HOME (several CLIs write there even for --version); Copilot unpacks itself (235 MB)
# into tests/hosts/copilot/pkg-cache, where the tests look for it (COPILOT_PKG_CACHE_HOME).
other_host() {
  local cli=$1 package=$2 binary=tests/hosts/$1/$3 wanted installed home version
  wanted=$(sed -n "s|.*\"$package\": *\"\([^\"]*\)\".*|\1|p" "tests/hosts/$cli/package.json")
  installed=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "tests/hosts/$cli/node_modules/$package/package.json" 2>/dev/null)
  if [ "$installed" != "$wanted" ] || [ ! -x "$binary" ]; then
    npm install --prefix "tests/hosts/$cli" --no-audit --no-fund --no-package-lock --loglevel=error || return 1
  fi
  home=$(mktemp -d)
  version=$(HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_CACHE_HOME=$home/.cache XDG_STATE_HOME=$home/.local/state CODEX_HOME=$home/.codex \
    COPILOT_PKG_CACHE_HOME=$PWD/tests/hosts/copilot/pkg-cache COPILOT_AUTO_UPDATE=false \
    "$binary" --version 2>/dev/null | grep -v '^$' | head -1)
  rm -rf "$home"
  echo "$cli: ${version:-(no --version output)}"
  case $version in *"$wanted"*) ;; *) echo "$cli: expected $wanted"; return 1 ;; esac
}

test_hosts() {
  local wanted
  wanted=$(sed -n 's/.*"@anthropic-ai\/claude-code": *"\([^"]*\)".*/\1/p' tests/claude-code/package.json)
  if ! tests/claude-code/node_modules/.bin/claude --version 2>/dev/null | grep -q "^$wanted "; then
    npm install --prefix tests/claude-code --no-audit --no-fund --no-package-lock --loglevel=error || return 1
  fi
  echo "claude: $(tests/claude-code/node_modules/.bin/claude --version)"
  # The oldest supported Claude Code, pinned in tests/claude-code-2.0.30/package.json: before 2.1.101
  # an unknown event in settings.json rejects the whole file (tests/plugin_events_e2e.rs).
  if ! tests/claude-code-2.0.30/node_modules/.bin/claude --version 2>/dev/null | grep -q "^2.0.30 "; then
    npm install --prefix tests/claude-code-2.0.30 --no-audit --no-fund --no-package-lock --loglevel=error || return 1
  fi
  echo "claude (oldest): $(tests/claude-code-2.0.30/node_modules/.bin/claude --version)"
  # The six other agent CLIs (tests/support/host_clis.rs). @factory/cli itself names a platform
  # package version that does not exist, so droid is pinned as its platform package; npm blocks
  # opencode's postinstall, so its binary is run from its platform package too.
  other_host codex @openai/codex node_modules/.bin/codex || return 1
  other_host copilot @github/copilot node_modules/.bin/copilot || return 1
  other_host qwen @qwen-code/qwen-code node_modules/.bin/qwen || return 1
  other_host droid @factory/cli-linux-x64 node_modules/@factory/cli-linux-x64/bin/droid || return 1
  other_host gemini @google/gemini-cli node_modules/.bin/gemini || return 1
  other_host opencode opencode-ai node_modules/opencode-linux-x64/bin/opencode || return 1
  if ! tests/amplifier/.venv/bin/python -c 'import amplifier_core' 2>/dev/null; then
    python3 -m venv tests/amplifier/.venv &&
      tests/amplifier/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/amplifier/requirements.txt || return 1
  fi
  # amplihack's native Amplifier module, editable: the tests always run this clone's code.
  if ! tests/amplifier/.venv/bin/python -c 'import amplifier_module_hooks_amplihack' 2>/dev/null; then
    tests/amplifier/.venv/bin/pip install --quiet --disable-pip-version-check -e ./amplifier || return 1
  fi
  echo "amplifier-core: $(tests/amplifier/.venv/bin/python -c 'import importlib.metadata as m; print(m.version("amplifier-core"))')"
  local kit=${AMPLIHACK_AMPLIFIER_APP_KIT:-../shared/amplifier-app}
  if [ -x "$kit/install.sh" ]; then
    local version
    version=$("$kit/install.sh" tests/amplifier/app-venv 2>&1) || { echo "$version"; return 1; }
    echo "amplifier app: ${version##*$'\n'}"
  else
    echo "amplifier app: no kit at $kit (tests/amplifier_app_e2e.rs will say SKIPPED)"
  fi
}

cargo_test() {
  # cargo's own `test result:` lines are counted in the closing line, not as a step. The tests
  # run with HOME an empty directory (cargo's and rustup's own homes kept), which must still be
  # empty afterwards: no test may write to the developer's real home.
  local test_home
  test_home=$(mktemp -d)
  CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" HOME="$test_home" \
    cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$test_log"
  local status=${PIPESTATUS[0]}
  if [ -n "$(ls -A "$test_home")" ]; then
    echo "cargo test wrote to HOME: $(cd "$test_home" && find . -mindepth 1 -maxdepth 3 | head -20)"
    failed=$((failed + 1)); failures+=("cargo test wrote to HOME")
  else
    passed=$((passed + 1))
  fi
  rm -rf "$test_home"
  if [ "$status" -ne 0 ] && ! grep -q '^test result:' "$test_log"; then
    failed=$((failed + 1)); failures+=("cargo test (did not run)")
  elif [ "$status" -ne 0 ] && ! grep -q '^test result: FAILED' "$test_log"; then
    failed=$((failed + 1)); failures+=("cargo test (exit $status)")
  fi
}

install_and_doctor() {
  # Keep cargo's and rustup's own homes: only where amplihack installs to is throwaway.
  CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
    HOME="$scratch_home" ./install.sh > "$scratch_home/install.log" 2>&1 || { cat "$scratch_home/install.log"; return 1; }
  HOME="$scratch_home" "$scratch_home/.local/bin/amplihack" doctor
}

check "test hosts" test_hosts
python_module() {
  # amplihack's Amplifier module: typed (mypy --strict, pinned in tests/amplifier/requirements-dev.txt)
  # and its translation tests (what the real app does with it is tests/amplifier_app_e2e.rs).
  local py=$PWD/tests/amplifier/.venv/bin/python
  "$py" -c 'import mypy' 2>/dev/null ||
    "$py" -m pip install --quiet --disable-pip-version-check -r tests/amplifier/requirements-dev.txt || return 1
  (cd amplifier && "$py" -m mypy amplifier_module_hooks_amplihack tests && "$py" -m unittest discover -s tests)
}

check "cargo fmt --check" cargo fmt --all --check
check "the Amplifier module: mypy --strict and its unit tests" python_module
check "cargo clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
check "the README's install command, into a throwaway HOME, then doctor" install_and_doctor
# The speed figures measure the binary that ./install.sh just deployed, what users run: the
# startup benchmark, and the hosts' timings inside their end-to-end tests (tests/copilot_e2e.rs).
if [ -x "$scratch_home/.local/bin/amplihack-hooks" ]; then
  export AMPLIHACK_BENCH_BINARY="$scratch_home/.local/bin/amplihack-hooks"
fi
step "cargo test"
cargo_test
check "startup benchmark (cargo bench --bench startup)" cargo bench --locked --bench startup
check "forwarding benchmark (cargo bench --bench forwarding)" cargo bench --locked --bench forwarding
check "rules benchmark: 100 in-process rules vs one sh -c true (cargo bench --bench rules)" cargo bench --locked --bench rules
check "guard benchmark: the Bash guard, and the lexer reading hook commands as written, on 1 MB hostile commands, goal 50 ms (cargo bench --bench guard)" cargo bench --locked --bench guard
check "plugin-cost benchmark: one plugin in the real Claude Code, through amplihack vs natively (cargo bench --bench claude_code_plugins)" cargo bench --locked --bench claude_code_plugins
amplifier_bench() {
  # amplihack's module and the hook-shell bridge running the same 4 plugins on tool:pre in the
  # real kernel: the real bridge, vendored in tests/amplifier/hook-shell ($AMPLIHACK_HOOK_SHELL_MIRROR,
  # a git directory of its repository, measures that one's HEAD instead).
  local bin=$scratch_home/.local/bin
  [ -x "$bin/amplihack-hooks" ] || { cargo build --release --locked -q && bin=target/release; }
  tests/amplifier/.venv/bin/python tests/bench/amplifier_tool_pre.py --hooks "$bin/amplihack-hooks" \
    --amplihack "$bin/amplihack"
  local status=$?
  # The speed figures the real-host tests measured during `cargo test` above (each gated there):
  # the Amplifier app's, and each other host's as it times its hooks.
  if [ -s "$AMPLIHACK_FIGURES" ]; then
    sed 's/^/measured in a real host: /' "$AMPLIHACK_FIGURES"
  else
    echo "measured in a real host: no figure (the real-host tests did not run)"
  fi
  return $status
}
check "Amplifier benchmark: amplihack's module vs the hook-shell bridge (tests/bench/amplifier_tool_pre.py)" amplifier_bench
[ "$failed" -eq 0 ] && ! grep -q '^test result: FAILED' "$test_log"
