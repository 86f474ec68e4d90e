#!/usr/bin/env bash
# Creates (or updates) the Python environment of the tests: a venv at
# BUILD/venv with the requirement files given (default: the package's test
# requirements and the snapshot readers', python/requirements-test.txt and
# tests/python/requirements-readers.txt, resolved together in one pip run
# so that one numpy suits all), then the tilefmm package from python/, its
# library taken from BUILD (TILEFMM_BUILD_DIR: no second build).
#   scripts/python_env.sh [BUILD] [REQUIREMENTS.txt ...]
# BUILD defaults to $TILEFMM_BUILD_DIR, else build/. The requirements are
# installed once: a stamp in the venv remembers what was installed, so a
# second call costs only the package. Calls at the same time (ctest -j)
# take turns on a lock in BUILD. Needs python3 with venv (Debian:
# python3-venv) and PyPI, or a pip configured with wheels; exits 1 saying
# why when the venv cannot be made.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${TILEFMM_BUILD_DIR:-$root/build}}" && pwd)
shift || true
requirements=("$@")
[ ${#requirements[@]} -gt 0 ] || requirements=(
  "$root/python/requirements-test.txt"
  "$root/tests/python/requirements-readers.txt")
venv=$build/venv
py=${PYTHON:-python3}

exec 9>"$build/.python_env.lock"
flock 9

if [ ! -x "$venv/bin/python" ]; then
  echo "python_env: creating $venv" >&2
  "$py" -m venv "$venv" || {
    echo "python_env: cannot make a venv at $venv (python3-venv missing?)" >&2
    rm -rf "$venv"
    exit 1
  }
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
stamp=$venv/.installed-requirements
if ! cat "${requirements[@]}" | cmp -s - "$stamp"; then
  start=$(date +%s)
  args=()
  for r in "${requirements[@]}"; do args+=(-r "$r"); done
  "${pip[@]}" install "${args[@]}" || {
    echo "python_env: pip install ${args[*]} failed" >&2
    exit 1
  }
  cat "${requirements[@]}" >"$stamp"
  echo "python_env: requirements installed in $(($(date +%s) - start)) s" >&2
fi
# The package last, always reinstalled: the library in BUILD may be new.
# From BUILD's parent with a relative TILEFMM_BUILD_DIR, as a user types
# it: that the package takes it from the directory pip was started in
# (python/build_library.py) is tested here too.
(cd "$build/.." && TILEFMM_BUILD_DIR=$(basename "$build") \
  "${pip[@]}" install --force-reinstall --no-deps "$root/python")
echo "python_env: $venv ready ($("$venv/bin/python" -c \
  'import tilefmm; print("tilefmm", tilefmm.__version__, "from", tilefmm.library_path)'))" >&2
