#!/usr/bin/env bash
# ctest's reader test: runs test_readers.py in BUILD/venv, which the
# python_env fixture made (scripts/python_env.sh: swiftsimio, pynbody and
# yt among its requirements).
#   run_readers.sh ROOT BUILD TILEFMM
set -uo pipefail
root=$1 build=$2 tilefmm=$3
exec "$build/venv/bin/python" "$root/tests/python/test_readers.py" \
  "$tilefmm" "$build/tests/python_readers"
