#!/usr/bin/env bash
# Creates (or updates) the Python environment of the tests: a venv at
# BUILD/venv with the tilefmm package installed from python/, its library
# taken from BUILD (TILEFMM_BUILD_DIR: no second build of the library),
# and the requirement files given (default python/requirements-test.txt).
#   scripts/python_env.sh [BUILD] [REQUIREMENTS.txt ...]
# BUILD defaults to $TILEFMM_BUILD_DIR, else build/. Calls at the same time
# (ctest -j) take turns on a lock in BUILD. Needs python3 with venv
# (Debian: python3-venv) and PyPI, or a pip configured with wheels.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${TILEFMM_BUILD_DIR:-$root/build}}" && pwd)
shift || true
requirements=("$@")
[ ${#requirements[@]} -gt 0 ] || requirements=("$root/python/requirements-test.txt")
venv=$build/venv
py=${PYTHON:-python3}

exec 9>"$build/.python_env.lock"
flock 9

if [ ! -x "$venv/bin/python" ]; then
  echo "python_env: creating $venv" >&2
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
for r in "${requirements[@]}"; do
  "${pip[@]}" install -r "$r"
done
# The package last, always reinstalled: the library in BUILD may be new.
TILEFMM_BUILD_DIR=$build "${pip[@]}" install --force-reinstall --no-deps \
  "$root/python"
echo "python_env: $venv ready ($("$venv/bin/python" -c \
  'import tilefmm; print("tilefmm", tilefmm.__version__, "from", tilefmm.library_path)'))" >&2
