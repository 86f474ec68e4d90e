#!/usr/bin/env bash
# Makes a Python virtual environment at BUILD/venv and pip-installs the
# requirement files given, for the tests that need Python packages:
#   scripts/python_env.sh BUILD REQUIREMENTS.txt...
# Each file is installed once: a stamp per file in the venv remembers its
# contents, so that a second call costs nothing. Exits 0 with the venv
# ready, else 1 (no python3 venv module, PyPI unreachable, ...), saying
# why on stderr.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR REQUIREMENTS.txt..." >&2
  exit 2
fi
venv=$1/venv
shift
mkdir -p "$(dirname "$venv")"
# One maker at a time (ctest runs tests in parallel, and other suites
# may want the same venv): the lock is held to the end of this script.
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || {
    echo "python_env: cannot make a venv at $venv (python3-venv missing?)" >&2
    rm -rf "$venv"
    exit 1
  }
fi
for req in "$@"; do
  stamp=$venv/.installed-$(basename "$req")
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    continue
  fi
  start=$(date +%s)
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$req" || {
    echo "python_env: pip install -r $req failed" >&2
    exit 1
  }
  cp "$req" "$stamp"
  echo "python_env: installed $req in $(($(date +%s) - start)) s" >&2
done
