#!/usr/bin/env bash
# ctest's reader test: makes BUILD/venv with the readers
# (scripts/python_env.sh), then runs test_readers.py in it. Exits 77
# (ctest's SKIP_RETURN_CODE) only when the venv cannot be made (no
# python3-venv, no network to PyPI); the test's own failures fail.
#   run_readers.sh ROOT BUILD TILEFMM
set -uo pipefail
root=$1 build=$2 tilefmm=$3
start=$(date +%s)
if ! "$root/scripts/python_env.sh" "$build" \
  "$root/tests/python/requirements-readers.txt"; then
  echo "run_readers: skipped: the venv at $build/venv could not be made" >&2
  exit 77
fi
echo "run_readers: venv ready in $(($(date +%s) - start)) s"
exec "$build/venv/bin/python" "$root/tests/python/test_readers.py" \
  "$tilefmm" "$build/tests/python_readers"
