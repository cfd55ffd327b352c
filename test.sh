#!/usr/bin/env bash
# Runs the tests of amplihack hooks, from a fresh clone. Two tiers:
#
#   ./test.sh           everything (the README's test command, and CI's): formatting and lints,
#                       unit and CLI tests, end-to-end tests inside the real Claude Code and six
#                       other agent CLIs (npm) and against the real amplifier-core kernel (PyPI),
#                       the README's install command, the manual, and every benchmark with its
#                       threshold.
#   ./test.sh --quick   the check for a change: formatting, clippy, unit and CLI tests and the
#                       fast benchmarks (measuring the static `release` build), no real host and
#                       nothing downloaded but crates.
#   ./test.sh --write-capabilities   everything, then writes the hosts table (README.md,
#                       docs/src/using/hosts.md) from what the real-host tests proved, where the
#                       full run only fails when the committed table differs.
#
# The full run installs the test hosts on first use, into the repository (git-ignored):
#   tests/claude-code/node_modules   @anthropic-ai/claude-code, pinned in tests/claude-code/package.json
#   tests/claude-code-2.0.30/node_modules   the oldest supported Claude Code, 2.0.30
#   tests/published-plugins/node_modules   published Claude Code plugins and the Node 22 one needs,
#                                    pinned in tests/published-plugins/package.json (--ignore-scripts, nested)
#   tests/hosts/<cli>/node_modules   the other agent CLIs (codex, copilot, qwen, droid, gemini,
#                                    opencode, pi, cline), each pinned in tests/hosts/<cli>/package.json, and
#                                    the newest Codex beside the pinned one (codex-0.171)
#                                    (tests/support/host_clis.rs drives them)
#   tests/hosts/{vibe,kimi}/venv      Mistral Vibe and Kimi CLI from PyPI, pinned in
#                                    tests/hosts/python-host.sh (needs a Python >= 3.12 on the machine)
#   tests/amplifier/.venv            amplifier-core, pinned in tests/amplifier/requirements.txt,
#                                    and amplihack's Amplifier module (./amplifier, editable)
#   tests/amplifier/app-venv         the real Amplifier app, from the offline kit in
#                                    ../shared/amplifier-app (or $AMPLIHACK_AMPLIFIER_APP_KIT), only
#                                    where the kit exists (tests/amplifier_app_e2e.rs skips otherwise)
#
# Every step runs even when an earlier one fails, each says how long it took, and the run always
# ends with one line `amplihack tests: N passed, N failed`: cargo's tests plus one check per other
# step. The exit status is 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"

quick=false
write_capabilities=0
case "${1:-}" in
  "") ;;
  --quick) quick=true ;;
  --write-capabilities) write_capabilities=1 ;;
  -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --quick, --write-capabilities, or nothing for every test)" >&2; exit 2 ;;
esac
started=$SECONDS
passed=0
failed=0
timings=()
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
  if [ "${#timings[@]}" -gt 0 ]; then
    printf '\ntime per step (%s run, %d s in all):\n' "$($quick && echo quick || echo full)" $((SECONDS - started))
    printf '  %s\n' "${timings[@]}"
  fi
  if [ "${#failures[@]}" -gt 0 ]; then printf '\nfailed steps: %s\n' "${failures[*]}"; fi
  printf '\namplihack tests: %d passed, %d failed\n' $((passed + p)) $((failed + f))
}
trap summary EXIT

step() { printf '\n==> %s\n' "$1"; }
# timed NAME COMMAND...: runs one step, prints and records how long it took, returns its status.
timed() {
  local name=$1 from=$SECONDS status
  shift
  step "$name"
  "$@"
  status=$?
  printf '(%s: %d s)\n' "${name%% (*}" $((SECONDS - from))
  timings+=("$(printf '%4d s  %s' $((SECONDS - from)) "${name%% (*}")")
  return $status
}
# check NAME COMMAND...: runs one step and counts it.
check() {
  local name=$1
  if timed "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

# other_host CLI PACKAGE BINARY: installs tests/hosts/CLI when its node_modules lacks the version
# pinned in its package.json, then prints the binary's own --version. The binary runs with a
# throwaway HOME (several CLIs write there even for --version); Copilot unpacks itself (235 MB)
# into tests/hosts/copilot/pkg-cache, where the tests look for it (COPILOT_PKG_CACHE_HOME).
other_host() {
  local cli=$1 package=$2 binary=tests/hosts/$1/$3 wanted installed home version
  wanted=$(sed -n "s|.*\"$package\": *\"\([^\"]*\)\".*|\1|p" "tests/hosts/$cli/package.json")
  installed=$(sed -n 's/^\(  \|\t\)"version": *"\([^"]*\)".*/\2/p' "tests/hosts/$cli/node_modules/$package/package.json" 2>/dev/null)
  if [ "$installed" != "$wanted" ] || [ ! -x "$binary" ]; then
    npm install --prefix "tests/hosts/$cli" --no-audit --no-fund --no-package-lock --loglevel=error || return 1
  fi
  home=$(mktemp -d)
  version=$(HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_CACHE_HOME=$home/.cache XDG_STATE_HOME=$home/.local/state CODEX_HOME=$home/.codex \
    COPILOT_PKG_CACHE_HOME=$PWD/tests/hosts/copilot/pkg-cache COPILOT_AUTO_UPDATE=false \
    "$binary" --version 2>/dev/null | grep -v '^$' | head -1)
  # Pi prints its version on stderr.
  [ -n "$version" ] || version=$(HOME=$home "$binary" --version 2>&1 | grep -v '^$' | head -1)
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
  # Published Claude Code plugins (tests/published_plugins_e2e.rs), pinned in
  # tests/published-plugins/package.json; their files only: no install scripts run; each plugin's
  # dependencies inside its own directory, so a copy of it runs.
  local dep stale=false
  for dep in $(sed -n 's/^ *"\([^"]*\)": "\([0-9][^"]*\)".*/\1@\2/p' tests/published-plugins/package.json); do
    grep -q "\"version\": \"${dep##*@}\"" "tests/published-plugins/node_modules/${dep%@*}/package.json" 2>/dev/null || stale=true
  done
  if $stale; then
    npm install --prefix tests/published-plugins --ignore-scripts --install-strategy=nested --omit=dev --no-audit --no-fund --no-package-lock --loglevel=error || return 1
  fi
  # The six other agent CLIs (tests/support/host_clis.rs). @factory/cli itself names a platform
  # package version that does not exist, so droid is pinned as its platform package; npm blocks
  # opencode's postinstall, so its binary is run from its platform package too.
  other_host codex @openai/codex node_modules/.bin/codex || return 1
  # The newest Codex beside the pinned one: the Codex tests run both (host_clis::each_codex).
  other_host codex-0.171 @openai/codex node_modules/.bin/codex || return 1
  other_host copilot @github/copilot node_modules/.bin/copilot || return 1
  other_host qwen @qwen-code/qwen-code node_modules/.bin/qwen || return 1
  other_host droid @factory/cli-linux-x64 node_modules/@factory/cli-linux-x64/bin/droid || return 1
  other_host gemini @google/gemini-cli node_modules/.bin/gemini || return 1
  other_host opencode opencode-ai node_modules/opencode-linux-x64/bin/opencode || return 1
  # The two agent CLIs from PyPI (tests/python_hosts_e2e.rs), in venvs with a Python >= 3.12 found
  # on the machine (none: SKIPPED, and so are their tests).
  tests/hosts/python-host.sh vibe || return 1
  tests/hosts/python-host.sh kimi || return 1
  other_host pi @mariozechner/pi-coding-agent node_modules/.bin/pi || return 1
  other_host cline cline node_modules/.bin/cline || return 1
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

# cargo_test [CARGO TEST ARGUMENTS...]: one `cargo test` run.
cargo_test() {
  # cargo's own `test result:` lines are counted in the closing line, not as a step. The tests
  # run with HOME an empty directory (cargo's and rustup's own homes kept), which must still be
  # empty afterwards: no test may write to the developer's real home.
  local test_home
  test_home=$(mktemp -d)
  CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" HOME="$test_home" \
    cargo test --locked --no-fail-fast "$@" 2>&1 | tee -a "$test_log"
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

python_module() {
  # amplihack's Amplifier module: typed (mypy --strict, pinned in tests/amplifier/requirements-dev.txt)
  # and its translation tests (what the real app does with it is tests/amplifier_app_e2e.rs).
  local py=$PWD/tests/amplifier/.venv/bin/python
  "$py" -c 'import mypy' 2>/dev/null ||
    "$py" -m pip install --quiet --disable-pip-version-check -r tests/amplifier/requirements-dev.txt || return 1
  (cd amplifier && "$py" -m mypy amplifier_module_hooks_amplihack tests && "$py" -m unittest discover -s tests)
}

amplifier_bench() {
  # amplihack's module and the hook-shell bridge running the same 4 plugins on tool:pre in the
  # real kernel: the real bridge, vendored in tests/amplifier/hook-shell ($AMPLIHACK_HOOK_SHELL_MIRROR,
  # a git directory of its repository, measures that one's HEAD instead).
  local bin=$scratch_home/.local/bin
  [ -x "$bin/amplihack-hooks" ] || bin=$(packaging/build) || return 1
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
capability_table() {
  # The hosts table against what the real-host tests of the cargo test step above recorded
  # (tests/support/capabilities.rs): a diff and a failure when the committed one differs.
  AMPLIHACK_WRITE_CAPABILITIES=$write_capabilities cargo test --locked --test integration -- \
    --ignored --exact --nocapture support::capabilities::the_committed_host_tables_are_what_this_run_proved
}
static_release() {
  # The static binaries with the quicker `release` profile: what --quick's benchmarks measure.
  local dir
  dir=$(AMPLIHACK_CARGO_PROFILE=release packaging/build) || return 1
  export AMPLIHACK_BENCH_BINARY="$dir/amplihack-hooks"
  echo "measuring $AMPLIHACK_BENCH_BINARY"
}

$quick || check "test hosts" test_hosts
check "cargo fmt --check" cargo fmt --all --check
if $quick && [ ! -x tests/amplifier/.venv/bin/python ]; then
  step "the Amplifier module: mypy --strict and its unit tests"
  echo "SKIPPED: its virtualenv (tests/amplifier/.venv) is made by a full ./test.sh"
else
  check "the Amplifier module: mypy --strict and its unit tests" python_module
fi
check "cargo clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
if $quick; then
  check "the static release build the benchmarks measure (AMPLIHACK_CARGO_PROFILE=release packaging/build)" static_release
  timed "cargo test: unit tests and CLI tests (no real host)" cargo_test --workspace --lib --bins
  timed "cargo test: CLI tests" cargo_test --test integration -- cli:: support::
else
  check "the README's install command, into a throwaway HOME, then doctor" install_and_doctor
  # The speed figures measure the binary that ./install.sh just deployed, what users run: the
  # benchmarks, and the hosts' timings inside their end-to-end tests (tests/copilot_e2e.rs).
  if [ -x "$scratch_home/.local/bin/amplihack-hooks" ]; then
    export AMPLIHACK_BENCH_BINARY="$scratch_home/.local/bin/amplihack-hooks"
  fi
  # Each real-host test records what it proved here, for the hosts table (capability_table).
  export AMPLIHACK_CAPABILITY_RECORDS=$PWD/target/capabilities
  rm -rf "$AMPLIHACK_CAPABILITY_RECORDS"
  timed "cargo test: every test" cargo_test --workspace
  check "the hosts table in README.md and docs/src/using/hosts.md is what the real-host tests proved (tests/support/capabilities.rs; ./test.sh --write-capabilities rewrites it)" capability_table
fi
# The benchmarks' harnesses build static for the same target as packaging/build, so that they share
# the `release` build of the crates (one optimised build a run, beside install.sh's `dist`).
bench() { (. packaging/static.sh && cargo bench --locked --target "$target" --bench "$@"); }
check "startup benchmark (cargo bench --bench startup)" bench startup
check "forwarding benchmark (cargo bench --bench forwarding)" bench forwarding
check "rules benchmark: 100 in-process rules vs one sh -c true (cargo bench --bench rules)" bench rules
check "confinement benchmark: one confined project handler vs one unconfined, goal 1.25 (cargo bench --bench confinement)" bench confinement
check "guard benchmark: the Bash guard, and the lexer reading hook commands as written, on 1 MB hostile commands, goal 50 ms (cargo bench --bench guard)" bench guard
if ! $quick; then
  check "the manual: every page listed, every link resolving, mdBook building it (docs/check)" docs/check
  check "plugin-cost benchmark: one plugin in the real Claude Code, through amplihack vs natively (cargo bench --bench claude_code_plugins)" bench claude_code_plugins
  check "Amplifier benchmark: amplihack's module vs the hook-shell bridge (tests/bench/amplifier_tool_pre.py)" amplifier_bench
fi
[ "$failed" -eq 0 ] && ! grep -q '^test result: FAILED' "$test_log"
