#!/usr/bin/env bash
# tests/hosts/python-host.sh vibe|kimi: installs the pinned Python agent CLI into
# tests/hosts/<cli>/venv (git-ignored) when it is not there yet, from PyPI only, and prints its
# version. Both need Python >= 3.12; Kimi CLI cannot be imported by 3.12.0/3.12.1 (a CPython bug in
# super() in kimi_cli/utils/slashcmd.py), so the newest Python found is used: python3.13,
# python3.12 on PATH, then pyenv's versions. None found: prints `SKIPPED <why>` and succeeds (the
# tests then say SKIPPED too). The wrapper tests/hosts/<cli>/bin/<cli> is what the tests run.
set -uo pipefail
cd "$(dirname "$0")/../.."
cli=$1
case $cli in
  vibe) package=mistral-vibe version=3.0.3 ;;
  kimi) package=kimi-cli version=1.52.0 ;;
  *) echo "python-host.sh: unknown CLI '$cli' (vibe or kimi)" >&2; exit 2 ;;
esac
dir=tests/hosts/$cli venv=tests/hosts/$cli/venv wrapper=tests/hosts/$cli/bin/$cli

installed() {
  "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null
}

# The newest usable Python >= 3.12 (3.12.0/3.12.1 refused for Kimi), by its full path.
find_python() {
  local candidate ok
  for candidate in $(command -v python3.14 python3.13 python3.12 2>/dev/null) \
    $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do
    ok=$("$candidate" -c 'import sys; v = sys.version_info; print(int(v >= (3, 12) and (sys.argv[1] != "kimi" or v >= (3, 12, 2))))' "$cli" 2>/dev/null)
    if [ "$ok" = 1 ]; then "$candidate" -c 'import sys; print(sys.executable)'; return 0; fi
  done
  return 1
}

if ! installed; then
  python=$(find_python) || { echo "$cli: SKIPPED no Python >= 3.12 on PATH or under pyenv (tests/${cli}_e2e.rs skips)"; exit 0; }
  rm -rf "$venv"
  "$python" -m venv "$venv" || exit 1
  pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
  case $cli in
    vibe)
      # mistral-vibe 3.0.3 pins every dependency exactly, and its certifi==2026.10.19 is not on
      # PyPI (only 2026.10.19.post1): install it without dependencies, then its pins with that one
      # changed.
      "${pip[@]}" --no-deps "$package==$version" || exit 1
      "$venv/bin/python" - > "$dir/requirements.txt" <<'PY' || exit 1
import importlib.metadata as m
for req in m.requires("mistral-vibe") or []:
    if "extra ==" in req:
        continue
    print(req.replace("certifi==2026.10.19", "certifi==2026.10.19.post1") if "certifi==2026.10.19" in req and "post" not in req else req)
PY
      "${pip[@]}" -r "$dir/requirements.txt" 2>&1 | grep -v -e certifi -e "dependency resolver" ;
      installed || exit 1
      ;;
    kimi) "${pip[@]}" "$package==$version" || exit 1 ;;
  esac
fi
mkdir -p "$dir/bin"
case $cli in
  vibe) printf '#!/bin/sh\nexec "$(dirname "$0")/../venv/bin/vibe" "$@"\n' > "$wrapper" ;;
  # 1.52.0's `kimi` script is a deprecation gate (bare, it downloads and runs an install script):
  # the wrapper runs the package's original Typer CLI, and is never run without arguments.
  kimi) printf '#!/bin/sh\n[ $# -gt 0 ] || { echo "kimi wrapper: arguments required" >&2; exit 2; }\nexec "$(dirname "$0")/../venv/bin/python" -c '"'"'import sys; from kimi_cli.__main__ import run_original_cli; sys.exit(run_original_cli(sys.argv[1:]))'"'"' "$@"\n' > "$wrapper" ;;
esac
chmod +x "$wrapper"
echo "$cli: $package $("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$package'))") (Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))"
